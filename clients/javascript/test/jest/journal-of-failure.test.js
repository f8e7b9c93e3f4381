// A failed test's error names its journal, an HTML page of what it sent; a passing test leaves
// none. Proven on a Jest run in a child process, on tests that fail on purpose (child/fails.fixture.js).
import { afterAll, beforeAll, expect } from "@jest/globals";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "svc-stub/jest";

import { CHILD_TEST_TIMEOUT_MS } from "../child-run.js";
import { runJest } from "./run-jest.js";

const LINE = /svc-stub journal of this test: (.+) \(open it in a browser\)/g;
const journals = mkdtempSync(join(tmpdir(), "svc-stub-jest-journals-"));
let run;

beforeAll(async () => {
  // the run's stub, for the child to start fast; the journals into a directory of this file's own
  run = await runJest("fails.fixture.js", { SVC_STUB_URL: process.env.SVC_STUB_URL, SVC_STUB_JOURNAL_DIR: journals });
}, CHILD_TEST_TIMEOUT_MS); // the child Jest run, waited for to its exit

afterAll(() => rmSync(journals, { recursive: true, force: true }));

/** The child's result for the test titled `title`, and the journals its failure names. */
function result(title) {
  const found = run.tests.find((t) => t.title === title);
  expect(found).toBeDefined();
  const named = [...found.failureMessages.join("\n").matchAll(LINE)].map((m) => m[1]);
  return { ...found, named };
}

test("the run fails, and the failed test's error names one journal file, in SVC_STUB_JOURNAL_DIR", () => {
  expect(run.status).not.toBe(0);
  const failed = result("fails after one request");
  expect(failed.status).toBe("failed");
  expect(failed.named).toHaveLength(1); // once, not once in the message and again in the stack
  expect(failed.named[0].startsWith(journals)).toBe(true);
  expect(failed.failureMessages[0]).toContain('Expected: "what it wanted"'); // the failure's own text kept

  // the report a user reads says it inside that test's failure, before the next one's
  const block = run.report.slice(run.report.indexOf("● fails after one request"));
  const end = block.indexOf("●", 1);
  expect(end === -1 ? block : block.slice(0, end)).toContain(
    `svc-stub journal of this test: ${failed.named[0]} (open it in a browser)`,
  );
});

test("the error a failed test threw is shown with the journal's line, and left as it was", () => {
  const failed = result("fails with an error of its own");
  expect(failed.status).toBe("failed");
  expect(failed.named).toHaveLength(1);
  expect(failed.failureMessages[0]).toMatch(/^Error: the test's own error\n\nsvc-stub journal of this test: /);
  expect(result("the error that test threw is left as it was").status).toBe("passed");
});

test("the journal is an HTML page listing the request the failed test made, and no other test's", () => {
  const [path] = result("fails after one request").named;
  expect(existsSync(path)).toBe(true);
  const page = readFileSync(path, "utf8");
  expect(page).toMatch(/^<!doctype html>/i);
  expect(page).toContain("/v1/flags/evaluate");
  expect(page).toContain("asked-by-the-failing-test");
  expect(page).not.toContain("asked-by-a-passing-test");
});

test("a passing test leaves no journal file, nor a test.failing that fails as declared", () => {
  expect(result("passes after one request")).toMatchObject({ status: "passed", failureMessages: [], named: [] });
  expect(result("fails as it is declared to, and so passes")).toMatchObject({ status: "passed", named: [] });
  // the directory holds the five failed tests' journals, and nothing else
  const failed = run.tests.filter((t) => t.status === "failed").map((t) => result(t.title).named[0]);
  expect(failed).toHaveLength(5);
  expect(readdirSync(journals).map((file) => join(journals, file)).sort()).toStrictEqual(failed.sort());
  for (const path of failed) expect(readFileSync(path, "utf8")).not.toContain("asked-by-a-passing-test");
});

test("concurrent failed tests each name a journal of their own, with their own request", () => {
  for (const n of [1, 2]) {
    const failed = result(`concurrent test ${n} fails after one request`);
    expect(failed.status).toBe("failed");
    expect(failed.named).toHaveLength(1);
    expect(existsSync(failed.named[0])).toBe(true);
    const page = readFileSync(failed.named[0], "utf8");
    expect(page).toContain(`asked-by-concurrent-test-${n}`);
    expect(page).not.toContain(`asked-by-concurrent-test-${3 - n}`);
  }
});

test("a table's failing row names a journal of its own request; its passing row none", () => {
  expect(result("row one fails only as row two")).toMatchObject({ status: "passed", named: [] });
  const failed = result("row two fails only as row two");
  expect(failed.status).toBe("failed");
  expect(failed.named).toHaveLength(1);
  const page = readFileSync(failed.named[0], "utf8");
  expect(page).toContain("asked-by-row-two");
  expect(page).not.toContain("asked-by-row-one");
});

test("the failed tests' namespaces are deleted once their journals are written", async ({ svcStub }) => {
  const names = (await svcStub.namespaces()).map((ns) => ns.name);
  expect(names.filter((name) => /-(after-one-request|and-so-passes|as-row-two)-[0-9a-f]{8}$/.test(name))).toEqual([]);
});
