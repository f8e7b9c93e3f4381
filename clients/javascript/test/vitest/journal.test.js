// A failed test's journal, named in Vitest's output: run in a child Vitest on the run's stub.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

import { expect, test } from "svc-stub/vitest";

import { CHILD_TEST_TIMEOUT_MS, runChild } from "../child-run.js";

const VITEST = new URL("../../node_modules/vitest/vitest.mjs", import.meta.url).pathname;

// The child Vitest is waited for to its exit (no time limit but runChild's hang guard); the
// test's timeout is longer than that guard, so Vitest never cuts it short while the child works.
test("a failed test names its journal, written before its namespace went", async ({ onTestFinished }) => {
  const journals = mkdtempSync(join(tmpdir(), "svc-stub-journal-"));
  onTestFinished(() => rmSync(journals, { recursive: true, force: true }));
  const config = new URL("runs/vitest.config.js", import.meta.url).pathname;
  const report = join(mkdtempSync(join(tmpdir(), "svc-stub-report-")), "report.json");
  onTestFinished(() => rmSync(dirname(report), { recursive: true, force: true }));
  const reporters = ["--reporter=default", "--reporter=json", `--outputFile.json=${report}`];
  const run = await runChild(process.execPath, [VITEST, "run", "--config", config, ...reporters], {
    env: { ...process.env, SVC_STUB_JOURNAL_DIR: journals, VITEST: undefined, VITEST_WORKER_ID: undefined, VITEST_POOL_ID: undefined, NODE_ENV: undefined },
  });
  const output = run.output;
  expect(run.status, output).toBe(1);
  const named = output.match(/svc-stub journal of this test: (\S+\.html) \(open it in a browser\)/);
  expect(named, output).not.toBeNull();
  expect(readdirSync(journals)).toEqual([named[1].split("/").pop()]); // none for the passing test
  expect(readFileSync(named[1], "utf8")).toContain("/v1/flags/evaluate");
  // and in the task's meta, where a reporter reads it (Vitest's JSON report here)
  const results = JSON.parse(readFileSync(report, "utf8")).testResults[0].assertionResults;
  const meta = Object.fromEntries(results.map((r) => [r.title, r.meta]));
  expect(meta).toEqual({ "checkout reads the flag": { svcStubJournal: named[1] }, "this one passes": {} });
}, CHILD_TEST_TIMEOUT_MS);

/** A child Vitest run on the two files of runs/shared.config.js with no svc-stub to run. */
function runWithNoStub(withGlobalSetup) {
  const config = new URL("runs/shared.config.js", import.meta.url).pathname;
  return runChild(process.execPath, [VITEST, "run", "--config", config], {
    env: {
      ...process.env,
      WITH_GLOBAL_SETUP: withGlobalSetup ? "1" : "",
      SVC_STUB_BIN: "/nonexistent/bin/svc-stub",
      SVC_STUB_URL: undefined,
      NO_COLOR: "1",
      VITEST: undefined,
      VITEST_WORKER_ID: undefined,
      VITEST_POOL_ID: undefined,
      NODE_ENV: undefined,
    },
  });
}

const NO_STUB = /^svc-stub: no svc-stub command \(there is none at SVC_STUB_BIN=\/nonexistent\/bin\/svc-stub\); install it/;

test("a stub that cannot be had: its one line first, with no frames", async () => {
  const run = await runWithNoStub(true);
  expect(run.status, run.output).toBe(1);
  const lines = run.output.split("\n").map((line) => line.trim()).filter((line) => line && !line.startsWith("RUN "));
  expect(lines[0], run.output).toMatch(NO_STUB);
  expect(run.output).not.toMatch(/^\s+at /m); // no stack frames
}, CHILD_TEST_TIMEOUT_MS);

test("without the global setup, the failed tests show that one line, with no frames", async () => {
  const run = await runWithNoStub(false);
  expect(run.status, run.output).toBe(1);
  expect(run.output).toMatch(/Tests\s+2 failed/);
  const failures = run.output.split("\n").filter((line) => line.startsWith("StubStartError: "));
  expect(failures.length, run.output).toBeGreaterThan(0); // Vitest shows an error the two tests share once
  for (const line of failures) expect(line.slice("StubStartError: ".length)).toMatch(NO_STUB);
  expect(run.output).not.toMatch(/^\s+at /m);
}, CHILD_TEST_TIMEOUT_MS);
