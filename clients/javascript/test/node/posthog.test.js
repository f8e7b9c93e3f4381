// The published posthog-node client, driven through the helper: it reads flags and sends
// events through the test's namespace, and meets the faults the test arms.
import assert from "node:assert/strict";
import { test } from "node:test";

import { PostHog } from "posthog-node";
import { useSvcStub } from "svc-stub/node-test";

import { ANSWER_HANG_GUARD_MS, WAIT_HANG_GUARD_MS } from "../support.js";

const svcStub = useSvcStub();

/** One flag as posthog-node reads it remotely: the variant, true/false, or undefined. */
async function flag(client, key) {
  const flags = await client.evaluateFlags("user-1", { flagKeys: [key] });
  return flags.getFlag(key, { sendFeatureFlagEvents: false });
}

/** posthog-node as an application configures it, pointed at the test's namespace. */
function posthog() {
  return new PostHog("phc_js_tests", {
    host: svcStub.url, // it keeps the base path: /ns/<test>/flags, /ns/<test>/batch
    flushAt: 1,
    flushInterval: 0,
    fetchRetryCount: 0,
    featureFlagsRequestMaxRetries: 0,
    sendFeatureFlagEvent: false,
    // posthog-node gives up on an answer after 10 s by default, a budget a busy 2-core machine can
    // exceed with a stub that works (the flag then reads undefined): a guard against a hang instead
    requestTimeout: ANSWER_HANG_GUARD_MS,
  });
}

/**
 * Shuts `client` down once it has sent what it holds. posthog-node stops waiting for that after 30 s
 * by default, and then goes on silently without it: a budget, given a hang guard's length instead.
 */
const shutDown = (client) => client.shutdown(ANSWER_HANG_GUARD_MS);

test("posthog-node reads the flags the test serves", async () => {
  await svcStub.setFixtures({ flags: { "new-onboarding": { type: "string", value: "guided", variant: "guided" } } });
  const client = posthog();
  try {
    assert.equal(await flag(client, "new-onboarding"), "guided");
  } finally {
    await shutDown(client);
  }
  const [read] = await svcStub.waitForRequests(1, { route: "flags", timeoutMs: WAIT_HANG_GUARD_MS });
  assert.equal(read.status, 200);
});

test("posthog-node's events arrive in the journal", async () => {
  const client = posthog();
  client.capture({ distinctId: "user-1", event: "checkout started", properties: { plan: "pro" } });
  await shutDown(client); // flushes
  const [event] = await svcStub.waitForEvents(1, { timeoutMs: WAIT_HANG_GUARD_MS });
  assert.equal(event.event, "checkout started");
  assert.equal(event.distinct_id, "user-1");
  assert.equal(event.properties.plan, "pro");
});

test("a fault on /flags: posthog-node falls back, and the journal shows what it met", async () => {
  const client = posthog();
  try {
    const value = await svcStub.withFault("500", { applyTo: "flags" }, () => flag(client, "checkout-v2"));
    assert.equal(value, undefined);
    assert.equal(await flag(client, "checkout-v2"), "treatment-b");
  } finally {
    await shutDown(client);
  }
  const [faulted, served] = await svcStub.requests("flags");
  assert.deepEqual([faulted.status, faulted.fault.mode, served.status], [500, "500", 200]);
});

test("a suite that armed only a 500 on /flags: the vendor profile's coverage names what posthog-node never met", async () => {
  await svcStub.arm("500", { applyTo: "flags", ttlRequests: 1 });
  const client = posthog();
  try {
    assert.equal(await flag(client, "new-checkout"), undefined); // the 500: posthog-node falls back
    assert.equal(await flag(client, "new-checkout"), true);
  } finally {
    await shutDown(client);
  }
  const report = await svcStub.coverage({ profile: "vendor" }); // this test's namespace's
  const cells = report.cells.map((cell) => `${cell.route}/${cell.outcome}`);
  assert.deepEqual(cells.filter((cell) => cell.startsWith("flags/")), ["flags/fault 500", "flags/ok"]);
  const gaps = report.profiles.vendor.gaps.map((gap) => gap.says);
  assert.ok(gaps.includes("flags never met a 429 with Retry-After"), gaps.join("\n"));
  assert.ok(!gaps.includes("flags never met the backend unavailable (a 500 or 503)"), gaps.join("\n"));
  assert.ok(report.flags.read.includes("new-checkout"), `read: ${report.flags.read}`);
  assert.ok(!report.flags.neverRead.includes("new-checkout"));
});
