import { defineConfig } from "vitest/config";

import { IN_CHILD_TIMEOUT_MS } from "../../child-run.js";

// journal.test.js asserts which of these tests fails: Vitest's 5 s per test (10 s per hook),
// running out on a busy machine, would change that. A hang guard instead, not a speed budget.
export default defineConfig({
  test: {
    root: new URL(".", import.meta.url).pathname,
    include: ["failing.test.js"],
    testTimeout: IN_CHILD_TIMEOUT_MS,
    hookTimeout: IN_CHILD_TIMEOUT_MS,
  },
});
