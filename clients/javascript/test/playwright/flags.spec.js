// The page reads its flag from the test's namespace, across origins, as the web client does.
import { checkoutUrl, expect, test } from "./app.js";

test("the page on another origin reads its flag through the test's namespace", async ({ page, appUrl, svcStub }) => {
  await page.goto(appUrl + "?stub=" + encodeURIComponent(svcStub.url));
  await expect(page.locator("#checkout")).toHaveText("treatment-b"); // the default fixtures

  const evaluates = await svcStub.requests("evaluate");
  expect(evaluates).toHaveLength(1);
  expect(evaluates[0]).toMatchObject({ method: "POST", path: "/v1/flags/evaluate", status: 200 });
  expect(evaluates[0].headers.origin).toBe(new URL(appUrl).origin);
  expect(evaluates[0].headers.origin).not.toBe(new URL(svcStub.baseUrl).origin); // cross-origin, as in production
  expect(evaluates[0].headers.authorization).toBe("Bearer svc_public_[redacted]");
  expect(evaluates[0].json()).toEqual({ targetingKey: "user-1", flagKeys: ["checkout-v2"] }); // what the page sent
});

test("the browser's preflight is listed as such, and only when asked for", async ({ page, appUrl, svcStub }) => {
  await page.goto(checkoutUrl(appUrl, svcStub.url));
  await expect(page.locator("#checkout")).toHaveText("treatment-b");

  // A key header and a JSON body make the evaluate preflighted: one OPTIONS before it.
  const preflights = await svcStub.requests("preflight");
  expect(preflights.map((r) => [r.method, r.path, r.route, r.status])).toEqual([["OPTIONS", "/v1/flags/evaluate", "preflight", 204]]);
  expect(preflights[0].headers.origin).toBe(new URL(appUrl).origin);
  const routes = (await svcStub.requests()).map((r) => r.route);
  expect(routes).toEqual(["preflight", "evaluate"]);
  // ...nor does a wait count it: two entries in the journal, one request
  await expect(svcStub.waitForRequests(2, { timeoutMs: 200 })).rejects.toThrow(/for 2 requests to any route, got 1:/);
});

test.describe("with fixtures of the test's own", () => {
  test.use({
    svcStubOptions: { fixtures: { flags: { "checkout-v2": { type: "string", value: "treatment-z", variant: "treatment-z" } } } },
  });

  test("test.use({ svcStubOptions }) serves them in the test's namespace", async ({ page, appUrl, svcStub }) => {
    await page.goto(checkoutUrl(appUrl, svcStub.url));
    await expect(page.locator("#checkout")).toHaveText("treatment-z");
    expect((await svcStub.servedFixtures()).flags).toEqual(["checkout-v2"]);
  });
});
