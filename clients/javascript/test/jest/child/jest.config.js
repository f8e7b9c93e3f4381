// For the tests that run Jest in a child process on one of these files (name it on the command
// line): no global setup, so the child uses SVC_STUB_URL if it is set, else starts a stub per file.
import { fileURLToPath } from "node:url";

import { IN_CHILD_TIMEOUT_MS } from "../../child-run.js";

export default {
  rootDir: fileURLToPath(new URL("../../..", import.meta.url)),
  testMatch: ["<rootDir>/test/jest/child/*.fixture.js"],
  testEnvironment: "node",
  transform: {},
  // the parent asserts which of these tests fail: Jest's 5 s per test, running out on a busy
  // machine, would change that. A hang guard instead, not a speed budget.
  testTimeout: IN_CHILD_TIMEOUT_MS,
};
