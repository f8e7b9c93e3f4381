// The package's Vitest suite: one stub for the run, shared by parallel workers.
import { defineConfig } from "vitest/config";

import { TEST_TIMEOUT_MS } from "../child-run.js";

export default defineConfig({
  test: {
    root: new URL(".", import.meta.url).pathname,
    include: ["*.test.js"],
    globalSetup: ["svc-stub/global-setup"],
    // what SVC_STUB_URL was before the global setup ran: it hands the stub over by provide/inject, not by this variable
    env: { SVC_STUB_URL_BEFORE_THE_RUN: process.env.SVC_STUB_URL ?? "" },
    pool: "threads",
    maxWorkers: 3,
    fileParallelism: true,
    // Hang guards, not speed budgets: Vitest's 5 s per test and 10 s per hook are budgets a busy
    // 2-core CI machine can exceed with a test that works. journal.test.js, which waits on a child
    // run, gives its test CHILD_TEST_TIMEOUT_MS, above the hang guard of child-run.js.
    testTimeout: TEST_TIMEOUT_MS,
    hookTimeout: TEST_TIMEOUT_MS,
  },
});
