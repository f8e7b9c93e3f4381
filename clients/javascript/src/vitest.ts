/**
 * svc-stub for Vitest: `test` with a `svcStub` fixture, a namespace of the test's own.
 *
 *     import { test, expect } from "svc-stub/vitest";
 *     test("falls back", async ({ svcStub }) => { ... });
 *
 * One stub for the run: with `globalSetup: ["svc-stub/global-setup"]` it is started once and
 * stopped at the end; without it, the first worker to need it has `svc-stub shared` start it,
 * the others attach to it, and it stops when Vitest exits. Per-test fixtures and keys:
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
    async ({}, use: Use<string>) => use((await runStub()).url),
    { scope: "worker" },
  ],
  svcStubOptions: [{}, { injected: false }],
  svcStub: async ({ svcStubUrl, svcStubOptions, task }: SvcStubWorkerFixtures & SvcStubFixtures & TestContext, use: Use<SvcStub>) => {
    const id = task.fullTestName ?? task.name; // Vitest 4's full name: its suites' and its own
    const client = await openNamespace(svcStubUrl, id, svcStubOptions);
    try {
      await use(client);
    } finally {
      const failed = task.result?.state === "fail";
      const kept = await closeNamespace(client, { id, failed });
      if (kept) console.error(kept.line);
    }
  },
});

export const it = test;
