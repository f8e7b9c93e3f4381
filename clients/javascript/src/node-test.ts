/**
 * svc-stub for `node:test`: `const svcStub = useSvcStub()` at the top of a test file (or in a
 * `describe`) gives each test a namespace of its own, named after it (`t.fullName`).
 *
 * The stub is the one at `SVC_STUB_URL`, else the run's: the first file to need it has
 * `svc-stub shared` start it, the others attach to it, and it stops when `node --test` exits
 * (Node 24's `--test-global-setup svc-stub/global-setup` stops it at the run's end itself).
 * Tests of one file take turns by default; with `concurrency`, `svcStub.of(t)` is each test's own.
 */
import { afterEach, before, beforeEach, type TestContext } from "node:test";

import type { SvcStub } from "./control.js";
import { closeNamespace, openNamespace, type NamespaceOptions } from "./namespace.js";
import { runStub } from "./run.js";
import { currentOf, type Current } from "./current.js";

/** The running test's control client, and each test's by its context. */
export type NodeTestSvcStub = SvcStub & {
  /** The control client of the test whose context is `t` (for tests that run at once). */
  of(t: TestContext): SvcStub;
};

/** Registers the hooks; returns the control client of whichever test is running. */
export function useSvcStub(options: NamespaceOptions = {}): NodeTestSvcStub {
  let stubUrl: string | undefined;
  const byTest = new WeakMap<object, SvcStub>();
  const current: Current = { client: undefined, where: "a node:test test (useSvcStub())" };

  before(async () => {
    stubUrl = (await runStub()).url;
  });
  beforeEach(async (context) => {
    const t = context as TestContext; // an each-hook's context is its test's
    const client = await openNamespace(stubUrl!, testName(t), options);
    byTest.set(t, client);
    current.client = client;
  });
  afterEach(async (context) => {
    const t = context as TestContext;
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
    if (client === undefined) throw new Error("svcStub.of(t): this test has no namespace (is useSvcStub() in its file?)");
    return client;
  };
  return currentOf(current, { of }) as NodeTestSvcStub;
}

/** `t.fullName` (Node 20.16, 22.3), else `t.name`. */
function testName(t: TestContext): string {
  return (t as { fullName?: string }).fullName ?? t.name;
}
