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
import { inject, test as base } from "vitest";

import type { SvcStub } from "./control.js";
import { SvcStubError } from "./errors.js";
import { closeNamespace, openNamespace, type NamespaceOptions } from "./namespace.js";
import { runStub } from "./run.js";

export { describe, expect } from "vitest";

/** What `svc-stub/global-setup` provides to Vitest's workers (`inject("svcStubUrl")`). */
declare module "vitest" {
  export interface ProvidedContext {
    /** The run's stub, started (or checked) by `svc-stub/global-setup`. */
    svcStubUrl: string;
  }
}

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

/** What a test whose journal was kept carries in `task.meta`, for reporters. */
export interface SvcStubTaskMeta {
  svcStubJournal?: string;
}

/** Vitest's `test`, with the `svcStub` fixture. */
export const test = base.extend<SvcStubFixtures & SvcStubWorkerFixtures>({
  svcStubUrl: [
    // the global setup's, through Vitest's provide/inject; without one, the run's own, from this worker
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => use(provided() ?? (await runStub().catch(framesDropped)).url),
    { scope: "worker" },
  ],
  svcStubOptions: [{}, { injected: false }],
  svcStub: async ({ svcStubUrl, svcStubOptions, task }, use) => {
    const id = task.fullTestName ?? task.name; // Vitest 4's full name: its suites' and its own
    const client = await openNamespace(svcStubUrl, id, svcStubOptions);
    try {
      await use(client);
    } finally {
      const failed = task.result?.state === "fail";
      const kept = await closeNamespace(client, { id, failed });
      if (kept) {
        // for reporters (task.meta), and said under the test's name (Vitest's annotations cannot be
        // added once a test has failed, and a fixture learns it has only then)
        if (kept.path) (task.meta as SvcStubTaskMeta).svcStubJournal = kept.path;
        console.error(kept.line);
      }
    }
  },
});

/** A stub that cannot be had: its one line says what to do, so Vitest shows it without this package's frames. */
function framesDropped(error: unknown): never {
  if (error instanceof SvcStubError) error.stack = `${error.name}: ${error.message}`;
  throw error;
}

/** The URL `svc-stub/global-setup` provided, if it ran. */
function provided(): string | undefined {
  const url: unknown = inject("svcStubUrl");
  return typeof url === "string" && url !== "" ? url : undefined;
}

export const it = test;
