// checkout.spec.js: run with `npx playwright test`
import { expect, test } from "svc-stub/playwright";

// The application's page, on an origin of its own: where it calls fetch, yours calls the web
// client, which sends the same request.
const APP = "http://app.localhost/";
const PAGE = `<!doctype html>
<p>Checkout: <span id="checkout">loading</span></p>
<script type="module">
  const stub = new URLSearchParams(location.search).get("stub");
  const answer = await fetch(stub + "/v1/flags/evaluate", {
    method: "POST",
    headers: { Authorization: "Bearer svc_public_checkout", "Content-Type": "application/json" },
    body: JSON.stringify({ targetingKey: "user-1", flagKeys: ["checkout-v2"] }),
  }).catch(() => undefined);
  const decision = answer?.ok ? (await answer.json()).decisions[0] : undefined;
  document.querySelector("#checkout").textContent = decision?.value ?? "control";
</script>`;

test.beforeEach(async ({ page }) => {
  await page.route(`${APP}**`, (route) => route.fulfill({ contentType: "text/html", body: PAGE }));
});

test("the page shows the variant the stub serves", async ({ page, svcStub }) => {
  await page.goto(`${APP}?stub=${encodeURIComponent(svcStub.url)}`);
  await expect(page.locator("#checkout")).toHaveText("treatment-b");
  const [read] = await svcStub.requests("evaluate");
  expect(read.headers.origin).toBe("http://app.localhost");
});

test("the page falls back when evaluate fails", async ({ page, svcStub }) => {
  await svcStub.arm("500", { applyTo: "evaluate" }); // for the rest of this test
  await page.goto(`${APP}?stub=${encodeURIComponent(svcStub.url)}`);
  await expect(page.locator("#checkout")).toHaveText("control");
});
