// checkout.test.js: run with `npx vitest run`
import { PostHog } from "posthog-node";
import { describe, expect, test } from "svc-stub/vitest";

function connect(url) {
  return new PostHog("phc_checkout", { host: url, flushAt: 1, featureFlagsRequestMaxRetries: 0 });
}

async function checkoutVariant(client) {
  const flags = await client.evaluateFlags("user-1", { flagKeys: ["checkout-v2"] });
  return flags.getFlag("checkout-v2") ?? "control";
}

test("checkout falls back while /flags fails, and reads it again after", async ({ svcStub }) => {
  const client = connect(svcStub.url); // this test's namespace
  await svcStub.arm("500", { applyTo: "flags", ttlRequests: 1 }); // the next /flags only
  expect(await checkoutVariant(client)).toBe("control");
  expect(await checkoutVariant(client)).toBe("treatment-b");
  await client.shutdown();
});

describe("the new checkout for everyone", () => {
  test.override({
    svcStubOptions: { fixtures: { flags: { "checkout-v2": { type: "string", value: "new", variant: "new" } } } },
  });

  test("reads the variant this test serves", async ({ svcStub }) => {
    const client = connect(svcStub.url);
    expect(await checkoutVariant(client)).toBe("new");
    await client.shutdown();
  });
});
