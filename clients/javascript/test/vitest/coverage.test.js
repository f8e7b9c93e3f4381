// The run's end: the global setup's teardown prints the run's coverage summary in Vitest's output
// and writes the full report where the journals go. Proven on a child Vitest run with a stub of
// its own, whose one file arms only a 500 on evaluate (runs/arms-a-500.test.js).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { expect, test } from "svc-stub/vitest";

import { CHILD_TEST_TIMEOUT_MS, runChild } from "../child-run.js";

const VITEST = new URL("../../node_modules/vitest/vitest.mjs", import.meta.url).pathname;

test("a run that armed only a 500 on evaluate is told what it never met", async ({ onTestFinished }) => {
  const journals = mkdtempSync(join(tmpdir(), "svc-stub-journal-"));
  onTestFinished(() => rmSync(journals, { recursive: true, force: true }));
  const config = new URL("runs/coverage.config.js", import.meta.url).pathname;
  const run = await runChild(process.execPath, [VITEST, "run", "--config", config], {
    env: {
      ...process.env,
      SVC_STUB_URL: undefined, // a stub of the child run's own: its coverage is that file's alone
      SVC_STUB_JOURNAL_DIR: journals,
      VITEST: undefined,
      VITEST_WORKER_ID: undefined,
      VITEST_POOL_ID: undefined,
      NODE_ENV: undefined,
    },
  });
  const output = run.output;
  expect(run.status, output).toBe(0); // its gate test expects the gate to fail
  const summary = output.split("\n").find((line) => line.startsWith("svc-stub coverage: runtime "));
  expect(summary, output).toMatch(/^svc-stub coverage: runtime 1 of 15 cells met; gaps: evaluate was never answered successfully; /);
  expect(summary).toContain("evaluate never met a 429 with Retry-After");
  expect(summary).toMatch(/; and 9 more$/); // the first five of its 14 gaps; the report has every one
  expect(output).not.toContain("svc-stub coverage: vendor"); // a profile the run met nothing of stays quiet
  expect(output).toContain(`svc-stub coverage report: ${join(journals, "coverage.json")}`);
  expect(readdirSync(journals)).toEqual(["coverage.json"]);
  const report = JSON.parse(readFileSync(join(journals, "coverage.json"), "utf8"));
  expect(report.scope).toBe("run");
  expect(report.cells).toEqual([{ route: "evaluate", outcome: "fault 500", count: 2 }]);
  expect(report.profiles.runtime).toMatchObject({ met: 1, of: 15 });
}, CHILD_TEST_TIMEOUT_MS);
