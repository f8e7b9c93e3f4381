// checkout.test.js: run with `NODE_OPTIONS=--experimental-vm-modules npx jest`
import { expect } from "@jest/globals";
import { PostHog } from "posthog-node";
import { test, withSvcStub } from "svc-stub/jest";

function connect(url) {
  return new PostHog("phc_checkout", { host: url, flushAt: 1, featureFlagsRequestMaxRetries: 0 });
}

async function checkoutVariant(client) {
  const flags = await client.evaluateFlags("user-1", { flagKeys: ["checkout-v2"] });
  return flags.getFlag("checkout-v2") ?? "control";
}

test("checkout falls back while /flags fails", async ({ svcStub }) => {
  const client = connect(svcStub.url); // this test's namespace
  await svcStub.withFault("status", { status: 503, applyTo: "flags" }, async () => {
    expect(await checkoutVariant(client)).toBe("control");
  });
  expect(await checkoutVariant(client)).toBe("treatment-b");
  await client.shutdown();
});

// One test a row, each in a namespace of its own: the row's values, then { svcStub }
test.each(["500", "invalid_json", "reset"])("checkout falls back on %s from /flags", async (mode, { svcStub }) => {
  const client = connect(svcStub.url);
  await svcStub.arm(mode, { applyTo: "flags" });
  expect(await checkoutVariant(client)).toBe("control");
  await client.shutdown();
});

const newCheckout = withSvcStub({
  fixtures: { flags: { "checkout-v2": { type: "string", value: "new", variant: "new" } } },
});

newCheckout("reads the variant this test serves", async ({ svcStub }) => {
  const client = connect(svcStub.url);
  expect(await checkoutVariant(client)).toBe("new");
  client.capture({ distinctId: "user-1", event: "checkout started" });
  await client.shutdown();
  const events = await svcStub.waitForEvents(2); // the stub's long-poll: no sleep
  // posthog-node reports the flag read too
  expect(events.map((e) => e.event).sort()).toEqual(["$feature_flag_called", "checkout started"]);
});
