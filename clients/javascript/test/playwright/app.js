// The application under test: a checkout page served from an origin of its own
// (http://localhost:PORT, the stub being on http://127.0.0.1:PORT), as a dev server would, so
// every call the page makes to the stub is cross-origin, as in production.
import { createServer } from "node:http";

import { test as svcStubTest } from "svc-stub/playwright";

export { expect } from "svc-stub/playwright";

/** The browser key the page's client sends. */
export const BROWSER_KEY = "svc_public_web";

/**
 * The page stands in for the web client: one evaluate with the browser key; a 429 or a 503 tried
 * once more after Retry-After; anything but a 200 (or no answer at all) renders "control".
 */
const PAGE = `<!doctype html>
<title>Checkout</title>
<p>Checkout variant: <span id="checkout">loading</span></p>
<script type="module">
  const stub = new URLSearchParams(location.search).get("stub");
  const evaluate = () =>
    fetch(stub + "/v1/flags/evaluate", {
      method: "POST",
      headers: { Authorization: "Bearer ${BROWSER_KEY}", "Content-Type": "application/json" },
      body: JSON.stringify({ targetingKey: "user-1", flagKeys: ["checkout-v2"] }),
    }).catch(() => undefined);
  const variantOf = async (answer) => {
    if (answer?.status !== 200) return "control";
    try {
      return (await answer.json()).decisions[0].variant ?? "control";
    } catch {
      return "control";
    }
  };

  let answer = await evaluate();
  if (answer?.status === 429 || answer?.status === 503) {
    const seconds = Number(answer.headers.get("Retry-After") ?? 1);
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    answer = await evaluate();
  }
  document.querySelector("#checkout").textContent = await variantOf(answer);
</script>
`;

/** The page's address with the stub's (the test's namespace's) in its query string. */
export function checkoutUrl(appUrl, stubUrl) {
  return appUrl + "?stub=" + encodeURIComponent(stubUrl);
}

export const test = svcStubTest.extend({
  /** The application's page, `http://localhost:PORT/`: one server per worker, on a free port. */
  appUrl: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const server = createServer((request, response) => {
        const found = new URL(request.url, "http://localhost").pathname === "/";
        response.writeHead(found ? 200 : 404, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
        response.end(found ? PAGE : "not found");
      });
      await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        await use(`http://localhost:${server.address().port}/`);
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
    { scope: "worker" },
  ],
});
