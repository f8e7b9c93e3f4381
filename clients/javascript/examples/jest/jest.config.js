// jest.config.js: one stub for the run, shared by every worker
export default {
  globalSetup: "svc-stub/global-setup",
  globalTeardown: "svc-stub/global-teardown",
  transform: {},
};
