// A failed test carries its namespace's journal, in its own output folder: a child Playwright run
// of a test that fails on purpose (failing/), on this run's stub, and what its failures leave behind.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";

import { CHILD_TEST_TIMEOUT_MS, runChild } from "../child-run.js";
import { expect, test } from "./app.js";

const PACKAGE = fileURLToPath(new URL("../../", import.meta.url));
const CLI = createRequire(import.meta.url).resolve("@playwright/test/cli");
const FAILING_CONFIG = fileURLToPath(new URL("failing/playwright.config.js", import.meta.url));

/** The inspector page's data: the namespace's journal as it was when the page was written. */
function snapshotIn(html) {
  const json = html.match(/<script type="application\/json" id="svc-stub-snapshot">([\s\S]*?)<\/script>/)?.[1];
  expect(json, "the journal page embeds its snapshot").toBeDefined();
  return JSON.parse(json);
}

const namespaceOf = (html) => snapshotIn(html).namespace;

/** This worker's environment, less what Playwright set for this worker alone. */
function childEnv(extra) {
  const env = { ...process.env, ...extra };
  for (const name of ["TEST_WORKER_INDEX", "TEST_PARALLEL_INDEX", "PLAYWRIGHT_TEST", "FORCE_COLOR", "DEBUG_COLORS"]) {
    delete env[name];
  }
  return env;
}

test.describe("a failed test's journal", () => {
  test.describe.configure({ mode: "default" }); // one worker, in order: one child run for all

  let scratch;
  let run; // the child run: { status, output, journals: { path: html } }

  test.beforeAll(async ({ svcStubUrl }) => {
    // The child run is waited for to its exit, with no time limit but runChild's hang guard (it
    // takes ~30 s on an idle 2-core machine, 40 s and more on a busy one): this hook's timeout is
    // longer than that guard, so neither it nor the runner's 30 s default cuts the child short.
    test.setTimeout(CHILD_TEST_TIMEOUT_MS);
    scratch = mkdtempSync(join(tmpdir(), "svc-stub-pw-journal-"));
    const child = await runChild(process.execPath, [CLI, "test", "--config", FAILING_CONFIG, "--output", join(scratch, "results")], {
      cwd: PACKAGE,
      env: childEnv({ SVC_STUB_URL: svcStubUrl, SVC_STUB_JOURNAL_DIR: undefined }),
    });
    const files = readdirSync(scratch, { recursive: true }).filter((path) => path.endsWith(".html")).sort();
    run = {
      status: child.status,
      output: stripVTControlCharacters(child.output),
      journals: Object.fromEntries(files.map((path) => [path, readFileSync(join(scratch, path), "utf8")])),
    };
  });

  test.afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  test("the run fails, and the list reporter shows each failed attempt's journal attached", () => {
    expect(run.status, run.output).toBe(1);
    expect(run.output).toContain("2 failed"); // the failing test, in each project
    expect(run.output).toContain("2 passed"); // the passing one

    const shown = [...run.output.matchAll(/attachment #\d+: svc-stub journal \(text\/html\)[^\n]*\n\s*(\S+\.html)\s*\n/g)];
    expect(shown, run.output).toHaveLength(4); // two projects, a first attempt and a retry each
    const attached = shown.map(([, path]) => relative(scratch, resolve(PACKAGE, path))).sort();
    expect(attached).toEqual(Object.keys(run.journals));
  });

  test("each failed attempt's journal is in that attempt's output folder, and nowhere else", () => {
    const paths = Object.keys(run.journals);
    expect(paths, run.output).toHaveLength(4);
    for (const path of paths) expect(path).toMatch(/^results\/[^/]+\/attachments\/svc-stub-journal-[0-9a-f]+\.html$/);
    const attempts = paths.map((path) => path.split(sep)[1]);
    expect(new Set(attempts).size).toBe(4); // one per project and retry
    expect(attempts.filter((folder) => folder.endsWith("-retry1"))).toHaveLength(2);
    // four attempts, four namespaces: no journal is another attempt's
    expect(new Set(Object.values(run.journals).map(namespaceOf)).size).toBe(4);
    // never among the project's sources
    expect(existsSync(join(PACKAGE, "svc-stub-journal"))).toBe(false);
  });

  test("a journal is the inspector page of the failed test's namespace, listing the evaluate its page made", () => {
    expect(Object.keys(run.journals), run.output).not.toHaveLength(0);
    for (const html of Object.values(run.journals)) {
      expect(html).toMatch(/^<!doctype html>/i);
      expect(html).toContain("<title>svc-stub inspector");
      const snapshot = snapshotIn(html);
      expect(snapshot.namespace).toMatch(/^the-page-read-its-flag-then-the-test-failed-[0-9a-f]{8}$/);
      const evaluates = snapshot.requests.filter((r) => r.route === "evaluate");
      expect(evaluates).toHaveLength(1);
      expect(evaluates[0]).toMatchObject({ method: "POST", path: "/v1/flags/evaluate", status: 200 });
      expect(evaluates[0].headers.origin).toMatch(/^http:\/\/localhost:\d+$/);
    }
  });

  test("the failed tests' namespaces are deleted all the same", async ({ svcStub }) => {
    const kept = Object.values(run.journals).map(namespaceOf);
    expect(kept, run.output).not.toHaveLength(0);
    const left = (await svcStub.namespaces()).map((n) => n.name);
    expect(left.filter((name) => kept.includes(name))).toEqual([]);
  });
});
