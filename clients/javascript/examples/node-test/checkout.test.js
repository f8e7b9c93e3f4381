// checkout.test.js: run with `node --test`
import assert from "node:assert/strict";
import { test } from "node:test";

import { PostHog } from "posthog-node";
import { useSvcStub } from "svc-stub/node-test";

const svcStub = useSvcStub(); // each test gets a namespace of its own; svcStub.url points into it

function connect() {
  return new PostHog("phc_checkout", { host: svcStub.url, flushAt: 1, featureFlagsRequestMaxRetries: 0 });
}

async function checkoutVariant(client) {
  const flags = await client.evaluateFlags("user-1", { flagKeys: ["checkout-v2"] });
  return flags.getFlag("checkout-v2") ?? "control";
}

test("checkout falls back when /flags fails", async () => {
  const client = connect();
  await svcStub.withFault("500", { applyTo: "flags" }, async () => {
    assert.equal(await checkoutVariant(client), "control");
  });
  assert.equal(await checkoutVariant(client), "treatment-b");
  await client.shutdown();
});

test("the checkout event reaches the stub", async () => {
  const client = connect();
  client.capture({ distinctId: "user-1", event: "checkout started" });
  await client.shutdown(); // sends what it holds
  const events = await svcStub.waitForEvents(1); // the stub's long-poll: no sleep
  assert.equal(events[0].event, "checkout started");
});
