// For the tests that run Jest in a child process on one of these files (name it on the command
// line): no global setup, so the child uses SVC_STUB_URL if it is set, else starts a stub per file.
import { fileURLToPath } from "node:url";

export default {
  rootDir: fileURLToPath(new URL("../../..", import.meta.url)),
  testMatch: ["<rootDir>/test/jest/child/*.fixture.js"],
  testEnvironment: "node",
  transform: {},
};
