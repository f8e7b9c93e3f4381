/**
 * svc-stub for Playwright Test: `test` with a `svcStub` fixture, a namespace of the test's own,
 * whose `url` is what the page's client is given.
 *
 *     import { test, expect } from "svc-stub/playwright";
 *     test("shows the variant", async ({ page, svcStub }) => { ... });
 *
 * One stub for the run with `globalSetup: "svc-stub/global-setup"` in playwright.config (shared
 * by every worker through `SVC_STUB_URL`); without it, each worker starts its own. Per-test
 * fixtures and keys: `test.use({ svcStubOptions: { fixtures: "flags.yaml" } })`. A failed test
 * carries its namespace's journal as an attachment.
 */
import { test as base, type TestInfo } from "@playwright/test";

import type { SvcStub } from "./control.js";
import { closeNamespace, openNamespace, type NamespaceOptions } from "./namespace.js";
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
  svcStubUrl: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const run = await runStub();
      try {
        await use(run.url);
      } finally {
        await run.stop();
      }
    },
    { scope: "worker" },
  ],
  svcStubOptions: [{}, { option: true }],
  svcStub: async ({ svcStubUrl, svcStubOptions }, use, testInfo) => {
    const client = await openNamespace(svcStubUrl, testInfo.title, svcStubOptions);
    try {
      await use(client);
    } finally {
      const failed = testInfo.status !== testInfo.expectedStatus;
      const kept = await closeNamespace(client, { id: attemptId(testInfo), failed });
      if (kept?.path) await testInfo.attach("svc-stub journal", { path: kept.path, contentType: "text/html" });
      else if (kept) console.error(kept.line);
    }
  },
});

/**
 * The test as this attempt of it: a test runs once per project, retry and repeat, each failure
 * with a journal of its own (the title path alone names them all alike, and the last written
 * would replace the others', or be attached in their place).
 */
function attemptId(testInfo: TestInfo): string {
  const id = [testInfo.project.name, ...testInfo.titlePath].filter(Boolean).join(" > ");
  const attempt = [
    testInfo.repeatEachIndex ? `repeat ${testInfo.repeatEachIndex}` : "",
    testInfo.retry ? `retry ${testInfo.retry}` : "",
  ].filter(Boolean);
  return attempt.length ? `${id} (${attempt.join(", ")})` : id;
}
