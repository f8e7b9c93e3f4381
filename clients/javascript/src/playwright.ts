/**
 * svc-stub for Playwright Test: `test` with a `svcStub` fixture, a namespace of the test's own,
 * whose `url` is what the page's client is given.
 *
 *     import { test, expect } from "svc-stub/playwright";
 *     test("shows the variant", async ({ page, svcStub }) => { ... });
 *
 * One stub for the run: with `globalSetup: "svc-stub/global-setup"` in playwright.config it is
 * started once and handed to every worker in `SVC_STUB_URL`; without it, the first worker to
 * need it has `svc-stub shared` start it, the others attach to it, and it stops when the run
 * ends. Per-test fixtures and keys: `test.use({ svcStubOptions: { fixtures: "flags.yaml" } })`.
 * A failed test carries its namespace's journal as an attachment, in its output folder.
 */
import { rm } from "node:fs/promises";

import { test as base } from "@playwright/test";

import type { SvcStub } from "./control.js";
import { closeNamespace, JOURNAL_VARIABLE, openNamespace, type NamespaceOptions } from "./namespace.js";
import { runStub } from "./run.js";

export { expect } from "@playwright/test";

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

export const test = base.extend<SvcStubFixtures, SvcStubWorkerFixtures>({
  // eslint-disable-next-line no-empty-pattern
  svcStubUrl: [async ({}, use) => use((await runStub()).url), { scope: "worker" }],
  svcStubOptions: [{}, { option: true }],
  svcStub: async ({ svcStubUrl, svcStubOptions }, use, testInfo) => {
    const id = testInfo.titlePath.slice(1).join(" > "); // its describes' titles and its own
    const client = await openNamespace(svcStubUrl, id, svcStubOptions);
    try {
      await use(client);
    } finally {
      const failed = testInfo.status !== testInfo.expectedStatus;
      const kept = await closeNamespace(client, { id, failed, directory: testInfo.outputDir });
      if (kept?.path) {
        // attach copies it into the test's output folder, where every report finds it
        await testInfo.attach("svc-stub journal", { path: kept.path, contentType: "text/html" });
        if (!process.env[JOURNAL_VARIABLE]) await rm(kept.path);
      } else if (kept) console.error(kept.line);
    }
  },
});
