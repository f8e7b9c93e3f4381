// Jest's part of the suite: one stub for the run (the global setup starts it and hands its URL to
// every worker in SVC_STUB_URL), test files in parallel workers, each test in a namespace of its own.
import { fileURLToPath } from "node:url";

export default {
  rootDir: fileURLToPath(new URL("../..", import.meta.url)),
  // child/*.fixture.js are run only by the tests that spawn a Jest of their own on them
  testMatch: ["<rootDir>/test/jest/*.test.js"],
  testEnvironment: "node",
  transform: {},
  globalSetup: "svc-stub/global-setup",
  globalTeardown: "svc-stub/global-teardown",
  maxWorkers: 3,
  // Jest runs every file in its own process when earlier runs' timings say the files are all fast;
  // with a memory limit it always uses workers, which the namespaces-*.test.js files are here to test.
  workerIdleMemoryLimit: "1GB",
};
