// Faults armed from the test (never from the page: the control plane refuses pages) and what the
// page makes of them.
import { checkoutUrl, expect, test } from "./app.js";

test("an armed 500 on evaluate: the page falls back to control", async ({ page, appUrl, svcStub }) => {
  await svcStub.arm("500", { applyTo: "evaluate" });
  await page.goto(checkoutUrl(appUrl, svcStub.url));
  await expect(page.locator("#checkout")).toHaveText("control");

  const [evaluate] = await svcStub.requests("evaluate");
  expect(evaluate.status).toBe(500);
  expect(evaluate.fault).toMatchObject({ mode: "500", source: "armed" });
  // the browser read the 500 (a CORS error would have been no answer at all): one request, no retry
  expect(await svcStub.requests("evaluate")).toHaveLength(1);
});

test("a 503 with Retry-After: the page waits, retries once and shows its variant", async ({ page, appUrl, svcStub }) => {
  await svcStub.withFault("status", { status: 503, retryAfter: 1, ttlRequests: 1, applyTo: "evaluate" }, async () => {
    await page.goto(checkoutUrl(appUrl, svcStub.url));
    await expect(page.locator("#checkout")).toHaveText("treatment-b");
  });

  const evaluates = await svcStub.requests("evaluate");
  expect(evaluates.map((r) => [r.status, r.retryAfter])).toEqual([
    [503, 1],
    [200, null],
  ]);
  await svcStub.assertNoRetryBeforeRetryAfter("evaluate");
  expect((await svcStub.gapsMs("evaluate"))[0]).toBeGreaterThanOrEqual(1000);
});

test("a sequence, a 429 then a request let through: the retry is answered", async ({ page, appUrl, svcStub }) => {
  await svcStub.arm({ sequence: [{ mode: "429", retryAfter: 1 }, "none"], applyTo: "evaluate" });
  await page.goto(checkoutUrl(appUrl, svcStub.url));
  await expect(page.locator("#checkout")).toHaveText("treatment-b");

  const evaluates = await svcStub.requests("evaluate");
  expect(evaluates.map((r) => [r.status, r.fault?.mode ?? null])).toEqual([
    [429, "429"],
    [200, "none"],
  ]);
  await svcStub.assertNoRetryBeforeRetryAfter("evaluate");
  expect(await svcStub.armed()).toEqual([]); // a sequence disarms itself once run through
});

test("two 503s in a row: the page retries once only, then shows control", async ({ page, appUrl, svcStub }) => {
  await svcStub.arm("status", { status: 503, retryAfter: 1, ttlRequests: 2, applyTo: "evaluate" });
  await page.goto(checkoutUrl(appUrl, svcStub.url));
  await expect(page.locator("#checkout")).toHaveText("control");
  expect((await svcStub.requests("evaluate")).map((r) => r.status)).toEqual([503, 503]);
  await svcStub.assertNoRetryBeforeRetryAfter("evaluate");
});

test("the stub's offline address: the page's call is refused at once, and it shows control", async ({ page, appUrl, svcStub }) => {
  const offline = await svcStub.offlineUrl();
  await page.goto(checkoutUrl(appUrl, offline));
  await expect(page.locator("#checkout")).toHaveText("control");
  expect(await svcStub.requests()).toEqual([]); // nothing reached the stub
});
