/**
 * svc-stub for `node:test`: `const svcStub = useSvcStub()` at the top of a test file (or in a
 * `describe`) gives each test a namespace of its own, named after it (`t.fullName`).
 *
 * The stub is the one at `SVC_STUB_URL`, else the run's: the first file to need it has
 * `svc-stub shared` start it, the others attach to it, and it stops when `node --test` exits
 * (Node 24's `--test-global-setup svc-stub/global-setup` stops it at the run's end itself).
 * Tests of one file take turns by default; with `concurrency`, `svcStub.of(t)` is each test's own:
 * while tests of it run at once, the file-level `svcStub` refuses every use with an error that
 * says so, rather than stand for whichever test started last.
 */
import { afterEach, before, beforeEach, type TestContext } from "node:test";

import type { SvcStub } from "./control.js";
import { closeNamespace, openNamespace, type NamespaceOptions } from "./namespace.js";
import { runStub } from "./run.js";
import { currentOf, type Current } from "./current.js";
import { SvcStubError } from "./errors.js";

/** The running test's control client, and each test's by its context. */
export type NodeTestSvcStub = SvcStub & {
  /** The control client of the test whose context is `t` (for tests that run at once). */
  of(t: TestContext): SvcStub;
};

/** Registers the hooks; returns the control client of whichever test is running. */
export function useSvcStub(options: NamespaceOptions = {}): NodeTestSvcStub {
  let stubUrl: string | undefined;
  const byTest = new WeakMap<object, SvcStub>();
  // tests between their beforeEach and afterEach; while two overlap (and until all of them end), the file's svcStub is refused
  let running = 0;
  let concurrent = false;
  const current: Current = {
    client: undefined,
    where: "a node:test test (useSvcStub())",
    refused: (name) =>
      concurrent
        ? `svcStub.${name}: this file's tests run at once ({ concurrency: true }), so svcStub cannot tell which test is ` +
          `asking; use the test's own client: test("...", async (t) => { const stub = svcStub.of(t); await stub.${name}... })`
        : undefined,
  };

  before(async () => {
    stubUrl = (await runStub()).url;
  });
  beforeEach(async (context) => {
    const t = context as TestContext; // an each-hook's context is its test's
    if (++running > 1) concurrent = true;
    const client = await openNamespace(stubUrl!, testName(t), options);
    byTest.set(t, client);
    current.client = client;
  });
  afterEach(async (context) => {
    const t = context as TestContext;
    if (--running === 0) concurrent = false; // the tests that ran at once are done: one at a time again
    const client = byTest.get(t);
    if (client === undefined) return;
    byTest.delete(t);
    if (current.client === client) current.client = undefined;
    // `passed` is Node 20.12+'s; before it, no test counts as failed here
    const failed = (t as { passed?: boolean }).passed === false;
    const kept = await closeNamespace(client, { id: testName(t), failed });
    if (kept) t.diagnostic(kept.line);
  });

  const of = (t: TestContext): SvcStub => {
    const client = byTest.get(t);
    if (client === undefined) {
      throw new SvcStubError("svcStub.of(t): this test has no namespace: give it the t its own function gets, in the file (or describe) that called useSvcStub()");
    }
    return client;
  };
  return currentOf(current, { of }) as NodeTestSvcStub;
}

/** `t.fullName` (Node 20.16, 22.3), else `t.name`. */
function testName(t: TestContext): string {
  return (t as { fullName?: string }).fullName ?? t.name;
}
