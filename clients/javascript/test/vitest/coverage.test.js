// The run's end: the global setup's teardown prints the stub's coverage summary, its lines as they
// are, in Vitest's output and writes the full report where the journals go. Proven on a child
// Vitest run with a stub of its own, whose one file arms only a 500 on evaluate and then
// evaluates checkout-v2 (runs/arms-a-500.test.js).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { expect, test } from "svc-stub/vitest";

import { CHILD_TEST_TIMEOUT_MS, runChild } from "../child-run.js";

const VITEST = new URL("../../node_modules/vitest/vitest.mjs", import.meta.url).pathname;

test("a run that armed only a 500 on evaluate is shown the stub's summary: what it never met, the flags it never read", async ({ onTestFinished }) => {
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
  // what the user reads at the run's end: the stub's summary, then where the full report is
  const shown = output.split("\n").filter((line) => line.startsWith("svc-stub coverage"));
  expect(shown, output).toEqual([
    "svc-stub coverage: runtime 2 of 15 cells met; gaps: evaluate never met a 401; evaluate never met a 429 with Retry-After; " +
      "evaluate never met a timeout (a delay or a hang); evaluate never met a malformed answer (invalid_json); evaluate never met a truncated answer; and 8 more",
    "svc-stub coverage: fixture flags read 1 of 9; never read: dark-mode, discount-rate, enterprise-dashboard, legacy-banner, max-items, and 3 more",
    `svc-stub coverage report: ${join(journals, "coverage.json")}`,
  ]); // a profile the run met nothing of (vendor, management) stays quiet
  expect(readdirSync(journals)).toEqual(["coverage.json"]);
  const report = JSON.parse(readFileSync(join(journals, "coverage.json"), "utf8"));
  expect(report.scope).toBe("run");
  expect(report.cells).toEqual([
    { route: "evaluate", outcome: "fault 500", count: 2 },
    { route: "evaluate", outcome: "ok", count: 1 },
  ]);
  expect(report.profiles.runtime).toMatchObject({ met: 2, of: 15 });
  expect(report.summary).toEqual(shown.slice(0, 2)); // printed as the stub wrote them
  expect(report.flags).toMatchObject({ read: ["checkout-v2"], of: 9 });
}, CHILD_TEST_TIMEOUT_MS);
