// What was sent, waited for with the stub's long-poll and asserted, through real requests.
import assert, { AssertionError } from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { WaitTimeout } from "svc-stub";
import { useSvcStub } from "svc-stub/node-test";

import { capture, evaluate, valueOf, WAIT_HANG_GUARD_MS } from "../support.js";

const svcStub = useSvcStub();

const EXPOSURE = { type: "exposure", targetingKey: "user-1", flagKey: "checkout-v2", variant: "treatment-b", value: "treatment-b" };

describe("waits", () => {
  test("a wait returns as soon as a late capture arrives (the long-poll, not a sleep)", async () => {
    const later = sleep(300).then(() => capture(svcStub.url, [EXPOSURE]));
    // No upper bound on how long it took (there was one, 5 s, which a busy machine can exceed):
    // a wait that runs out rejects with WaitTimeout, so one that returns the capture sent after it
    // began did not run out, it returned on that capture. Its timeoutMs is a guard against a hang.
    const events = await svcStub.waitForSvcEvents(1, { timeoutMs: WAIT_HANG_GUARD_MS });
    assert.deepEqual(events, [EXPOSURE]);
    assert.equal(await later, 200);
  });

  test("a wait that runs out says what did arrive", async () => {
    await capture(svcStub.url, [EXPOSURE]);
    const error = await svcStub.waitForSvcEvents(2, { timeoutMs: 200 }).catch((e) => e);
    assert.ok(error instanceof WaitTimeout);
    assert.match(error.message, /^waited 0.2 s for 2 svcEvents, got 1:\n\[\n  \{\n    "type": "exposure"/);
  });

  test("waitForRequests counts one route's requests and lists them when short", async () => {
    await evaluate(svcStub.url);
    const requests = await svcStub.waitForRequests(1, { route: "evaluate", timeoutMs: WAIT_HANG_GUARD_MS });
    assert.equal(requests[0].path, "/v1/flags/evaluate");
    const error = await svcStub.waitForRequests(2, { route: "evaluate", timeoutMs: 100 }).catch((e) => e);
    assert.ok(error instanceof WaitTimeout);
    assert.match(error.message, /for 2 requests to evaluate, got 1:\n  #\d+ POST \/v1\/flags\/evaluate -> 200/);
  });

  test("a timeout outside 0 to 60 s is refused before anything is sent", async () => {
    await assert.rejects(svcStub.waitForTargets(1, { timeoutMs: 61_000 }), /timeoutMs: expected 0 to 60000, got 61000/);
  });
});

describe("assertions read well when they fail", () => {
  test("assertExposure passes on the exposure sent, and lists the exposures when it fails", async () => {
    await capture(svcStub.url, [EXPOSURE]);
    await svcStub.waitForSvcEvents(1, { timeoutMs: WAIT_HANG_GUARD_MS });
    await svcStub.assertExposure("checkout-v2", "user-1", { variant: "treatment-b" });
    const error = await svcStub.assertExposure("checkout-v2", "user-2").catch((e) => e);
    assert.ok(error instanceof AssertionError);
    assert.match(error.message, /^no exposure of checkout-v2 for user-2; exposures recorded:\n\[/);
  });

  test("assertNoRequest lists the requests it did not expect", async () => {
    await svcStub.assertNoRequest("capture");
    await capture(svcStub.url, [EXPOSURE]);
    await assert.rejects(svcStub.assertNoRequest("capture"), {
      name: "AssertionError",
      message: /^expected no request to capture, got 1:\n  #\d+ POST \/v1\/capture -> 200$/,
    });
  });

  test("assertNoRetryBeforeRetryAfter catches a client that came back early", async () => {
    await svcStub.arm("429", { applyTo: "evaluate", ttlRequests: 1, retryAfter: 2 });
    await evaluate(svcStub.url);
    await evaluate(svcStub.url); // at once: two seconds early
    await assert.rejects(svcStub.assertNoRetryBeforeRetryAfter("evaluate"), {
      message: /^retried evaluate before Retry-After allowed:\n  #\d+ came \d+ ms after #\d+ was answered 429 with Retry-After: 2$/,
    });
    assert.equal((await svcStub.gapsMs("evaluate")).length, 1);
  });

  test("assertNoWarnings names the request that used a key of the wrong plane", async () => {
    await fetch(`${svcStub.url}/v1/flags/evaluate`, {
      method: "POST",
      headers: { Authorization: "Bearer svc_org_secret", "Content-Type": "application/json" },
      body: JSON.stringify({ targetingKey: "u" }),
    });
    const error = await svcStub.assertNoWarnings().catch((e) => e);
    assert.match(error.message, /^1 request used a key where the service refuses it:\n  #\d+ POST \/v1\/flags\/evaluate: /);
    assert.doesNotMatch(error.message, /svc_org_secret/);
  });
});

describe("the journal in full", () => {
  test("a request in full has its body, its answer and a curl line", async () => {
    await evaluate(svcStub.url);
    const [listed] = await svcStub.requests("evaluate");
    const full = await svcStub.request(listed.seq);
    assert.deepEqual(JSON.parse(full.body.text), { targetingKey: "user-1", flagKeys: ["checkout-v2"] });
    assert.equal(full.answer.status, 200);
    assert.match(full.curl, /curl/);
    assert.equal(full.headers.authorization, "Bearer project-api-key_[redacted]");
  });

  test("the snapshot is the namespace's inspector page", async () => {
    await evaluate(svcStub.url);
    const page = await svcStub.snapshot();
    assert.match(page, /^<!doctype html>/i);
    assert.match(page, /\/v1\/flags\/evaluate/);
  });

  test("recorded() has every list and what was dropped", async () => {
    const recorded = await svcStub.recorded();
    assert.deepEqual(recorded, { events: [], svcEvents: [], targets: [], dropped: { events: 0, svcEvents: 0, targets: 0 } });
  });
});

describe("fixtures", () => {
  test("a document served in the test's namespace, then overlaid key by key", async () => {
    const flags = await svcStub.setFixtures({ flags: { "js-flag": { type: "string", value: "a" } } });
    assert.deepEqual(flags, ["js-flag"]);
    await svcStub.setFixtures({ flags: { "js-other": { type: "boolean", value: true } } }, { merge: true });
    assert.deepEqual((await svcStub.servedFixtures()).flags, ["js-flag", "js-other"]);
    assert.equal(await valueOf(svcStub.url, "js-flag"), "a");
  });

  test("a file, by path or file: URL, YAML or JSON", async () => {
    await svcStub.setFixtures(new URL("../fixtures/beta.yaml", import.meta.url));
    assert.equal(await valueOf(svcStub.url, "beta-banner"), true);
    await svcStub.setFixtures(new URL("../fixtures/pricing.json", import.meta.url).pathname, { merge: true });
    assert.equal(await valueOf(svcStub.url, "pricing-layout"), "grid");
  });

  test("a fixture the stub refuses is a StubError naming the field", async () => {
    await assert.rejects(svcStub.setFixtures({ flags: { bad: { type: "colour", value: 1 } } }), {
      name: "StubError",
      message: /^400 .*bad.*type/,
    });
  });

  test("reset serves the start-up fixtures again and clears what was recorded", async () => {
    await svcStub.setFixtures({ flags: { only: { type: "boolean", value: true } } });
    await evaluate(svcStub.url);
    await svcStub.reset();
    assert.equal(await valueOf(svcStub.url, "checkout-v2"), "treatment-b");
    assert.deepEqual((await svcStub.requests()).filter((r) => r.route === "evaluate").length, 1);
  });
});
