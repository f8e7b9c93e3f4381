// A failed test's journal, named in Vitest's output: run in a child Vitest on the run's stub.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { expect, test } from "svc-stub/vitest";

const VITEST = new URL("../../node_modules/vitest/vitest.mjs", import.meta.url).pathname;

test("a failed test names its journal, written before its namespace went", async ({ onTestFinished }) => {
  const journals = mkdtempSync(join(tmpdir(), "svc-stub-journal-"));
  onTestFinished(() => rmSync(journals, { recursive: true, force: true }));
  const config = new URL("runs/vitest.config.js", import.meta.url).pathname;
  const run = spawnSync(process.execPath, [VITEST, "run", "--config", config], {
    env: { ...process.env, SVC_STUB_JOURNAL_DIR: journals, VITEST: undefined, VITEST_WORKER_ID: undefined, VITEST_POOL_ID: undefined, NODE_ENV: undefined },
    encoding: "utf8",
  });
  const output = run.stdout + run.stderr;
  expect(run.status, output).toBe(1);
  const named = output.match(/svc-stub journal of this test: (\S+\.html) \(open it in a browser\)/);
  expect(named, output).not.toBeNull();
  expect(readdirSync(journals)).toEqual([named[1].split("/").pop()]); // none for the passing test
  expect(readFileSync(named[1], "utf8")).toContain("/v1/flags/evaluate");
}, 60_000);
