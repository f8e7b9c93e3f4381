// A failed test's journal, named in Vitest's output: run in a child Vitest on the run's stub.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { expect, test } from "svc-stub/vitest";

import { CHILD_TEST_TIMEOUT_MS, runChild } from "../child-run.js";

const VITEST = new URL("../../node_modules/vitest/vitest.mjs", import.meta.url).pathname;

// The child Vitest is waited for to its exit (no time limit but runChild's hang guard); the
// test's timeout is longer than that guard, so Vitest never cuts it short while the child works.
test("a failed test names its journal, written before its namespace went", async ({ onTestFinished }) => {
  const journals = mkdtempSync(join(tmpdir(), "svc-stub-journal-"));
  onTestFinished(() => rmSync(journals, { recursive: true, force: true }));
  const config = new URL("runs/vitest.config.js", import.meta.url).pathname;
  const run = await runChild(process.execPath, [VITEST, "run", "--config", config], {
    env: { ...process.env, SVC_STUB_JOURNAL_DIR: journals, VITEST: undefined, VITEST_WORKER_ID: undefined, VITEST_POOL_ID: undefined, NODE_ENV: undefined },
  });
  const output = run.output;
  expect(run.status, output).toBe(1);
  const named = output.match(/svc-stub journal of this test: (\S+\.html) \(open it in a browser\)/);
  expect(named, output).not.toBeNull();
  expect(readdirSync(journals)).toEqual([named[1].split("/").pop()]); // none for the passing test
  expect(readFileSync(named[1], "utf8")).toContain("/v1/flags/evaluate");
}, CHILD_TEST_TIMEOUT_MS);
