// The package's Vitest suite: one stub for the run, shared by parallel workers.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: new URL(".", import.meta.url).pathname,
    include: ["*.test.js"],
    globalSetup: ["svc-stub/global-setup"],
    pool: "threads",
    maxWorkers: 3,
    fileParallelism: true,
  },
});
