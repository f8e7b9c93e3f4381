import { defineConfig } from "vitest/config";

import { IN_CHILD_TIMEOUT_MS } from "../../child-run.js";

// shared.test.js's child runs: two files, each in a worker process of its own (forks, isolated),
// each saying which stub it was given; with WITH_GLOBAL_SETUP, svc-stub's global setup starts it.
export default defineConfig({
  test: {
    root: new URL(".", import.meta.url).pathname,
    include: ["says-its-stub-*.test.js"],
    globalSetup: process.env.WITH_GLOBAL_SETUP ? ["svc-stub/global-setup"] : [],
    pool: "forks",
    maxWorkers: 2,
    fileParallelism: true,
    testTimeout: IN_CHILD_TIMEOUT_MS,
    hookTimeout: IN_CHILD_TIMEOUT_MS,
  },
});
