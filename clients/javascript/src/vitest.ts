/**
 * svc-stub for Vitest: `test` with a `svcStub` fixture, a namespace of the test's own.
 *
 *     import { test, expect } from "svc-stub/vitest";
 *     test("falls back", async ({ svcStub }) => { ... });
 *
 * One stub for the run with `globalSetup: ["svc-stub/global-setup"]` (shared by every worker
 * through `SVC_STUB_URL`); without it, each worker starts its own. Per-test fixtures and keys:
 * `test.override({ svcStubOptions: { fixtures: "flags.yaml" } })` in a `describe`.
 */
import { test as base, type TestAPI, type TestContext } from "vitest";

import type { SvcStub } from "./control.js";
import { closeNamespace, openNamespace, type NamespaceOptions } from "./namespace.js";
import { runStub } from "./run.js";

export { describe, expect } from "vitest";

export interface SvcStubFixtures {
  /** The control client in this test's namespace; `svcStub.url` is the base URL to give a client. */
  svcStub: SvcStub;
  /** Fixtures and keys for this test's namespace. */
  svcStubOptions: NamespaceOptions;
}

export interface SvcStubWorkerFixtures {
  /** The run's stub. */
  svcStubUrl: string;
}

type Use<T> = (value: T) => Promise<void>;

// Typed by hand rather than through `extend`'s generics, which differ between Vitest 3 and 4.
const extend = base.extend.bind(base) as unknown as (fixtures: object) => TestAPI<SvcStubFixtures & SvcStubWorkerFixtures>;

/** Vitest's `test`, with the `svcStub` fixture. */
export const test = extend({
  svcStubUrl: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use: Use<string>) => {
      const run = await runStub();
      try {
        await use(run.url);
      } finally {
        await run.stop();
      }
    },
    { scope: "worker" },
  ],
  svcStubOptions: [{}, { injected: false }],
  svcStub: async ({ svcStubUrl, svcStubOptions, task }: SvcStubWorkerFixtures & SvcStubFixtures & TestContext, use: Use<SvcStub>) => {
    const client = await openNamespace(svcStubUrl, task.name, svcStubOptions);
    try {
      await use(client);
    } finally {
      const failed = task.result?.state === "fail";
      const kept = await closeNamespace(client, { id: fullName(task), failed });
      if (kept) console.error(kept.line);
    }
  },
});

export const it = test;

function fullName(task: { name: string; suite?: { name: string; suite?: unknown } | undefined; file?: { name: string } }): string {
  const names = [task.name];
  for (let suite = task.suite as { name: string; suite?: unknown } | undefined; suite; suite = suite.suite as typeof suite) {
    if (suite.name) names.unshift(suite.name);
  }
  if (task.file) names.unshift(task.file.name);
  return names.join(" > ");
}
