// Jest's part of the suite: one stub for the run (the global setup starts it and hands its URL to
// every worker in SVC_STUB_URL), test files in parallel workers, each test in a namespace of its own.
import { fileURLToPath } from "node:url";

import { TEST_TIMEOUT_MS } from "../child-run.js";

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
  // A hang guard, not a speed budget: Jest's 5 s per test (and hook) is one a busy 2-core CI machine
  // can exceed with a test that works. Tests that wait on a child run, or for the other workers to
  // check in (crosstalk.js), give themselves a timeout above the hang guard of child-run.js.
  testTimeout: TEST_TIMEOUT_MS,
};
