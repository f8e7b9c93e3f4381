import { defineConfig } from "vitest/config";

import { IN_CHILD_TIMEOUT_MS } from "../../child-run.js";

// coverage.test.js's child run: a stub of its own (the global setup's), whose teardown prints
// the run's coverage and writes it where the journals go; one file, its tests in order.
export default defineConfig({
  test: {
    root: new URL(".", import.meta.url).pathname,
    include: ["arms-a-500.test.js"],
    globalSetup: ["svc-stub/global-setup"],
    testTimeout: IN_CHILD_TIMEOUT_MS,
    hookTimeout: IN_CHILD_TIMEOUT_MS,
  },
});
