// What was sent, waited for with the stub's long-poll and checked by the stub, through real
// requests; each recorded request's body one call away; an address where nothing listens.
import assert, { AssertionError } from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { WaitTimeout } from "svc-stub";
import { useSvcStub } from "svc-stub/node-test";

import { until } from "../child-run.js";
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

describe("the stub's checks, failing in the stub's own words", () => {
  test("assertExposure passes on the exposure sent, and lists the exposures when it fails", async () => {
    await capture(svcStub.url, [EXPOSURE]);
    await svcStub.waitForSvcEvents(1, { timeoutMs: WAIT_HANG_GUARD_MS });
    await svcStub.assertExposure("checkout-v2", "user-1", { variant: "treatment-b" });
    const error = await svcStub.assertExposure("checkout-v2", "user-2").catch((e) => e);
    assert.ok(error instanceof AssertionError);
    assert.equal(error.message, "no exposure of checkout-v2 for user-2; exposures recorded:\n  checkout-v2 for user-1: variant treatment-b");
  });

  test("assertExposure waits, with timeoutMs, for an exposure sent after it began", async () => {
    const later = sleep(300).then(() => capture(svcStub.url, [EXPOSURE]));
    await svcStub.assertExposure("checkout-v2", "user-1", { timeoutMs: WAIT_HANG_GUARD_MS });
    assert.equal(await later, 200);
  });

  test("assertNoRequest lists the requests it did not expect", async () => {
    await svcStub.assertNoRequest("capture");
    await capture(svcStub.url, [EXPOSURE]);
    await assert.rejects(svcStub.assertNoRequest("capture"), {
      name: "AssertionError",
      message: /^expected no request to route 'capture', got 1:\n  #\d+ POST \/v1\/capture -> 200$/,
    });
  });

  test("assertNoRetryBeforeRetryAfter catches a client that came back early, on one route or any", async () => {
    await svcStub.arm("429", { applyTo: "evaluate", ttlRequests: 1, retryAfter: 2 });
    await evaluate(svcStub.url);
    await evaluate(svcStub.url); // at once: two seconds early
    const early = /^retried 'evaluate' before Retry-After allowed:\n  #\d+ came \d+ ms after #\d+ was answered 429 with Retry-After: 2$/;
    await assert.rejects(svcStub.assertNoRetryBeforeRetryAfter("evaluate"), { name: "AssertionError", message: early });
    await assert.rejects(svcStub.assertNoRetryBeforeRetryAfter(), { name: "AssertionError", message: early });
    await svcStub.assertNoRetryBeforeRetryAfter("capture");
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
  test("a recorded body read as JSON in one call, and as text", async () => {
    await capture(svcStub.url, [EXPOSURE]);
    const [sent] = await svcStub.requests("capture");
    assert.deepEqual(sent.json(), { events: [EXPOSURE] });
    assert.equal(sent.text(), JSON.stringify({ events: [EXPOSURE] }));
    assert.deepEqual((await svcStub.request(sent.seq)).json(), { events: [EXPOSURE] }); // one request, the same
  });

  test("each listed request has its answer and a curl line; the readers stay out of its data", async () => {
    await evaluate(svcStub.url);
    const [listed] = await svcStub.requests("evaluate");
    assert.equal(listed.answer.status, 200);
    assert.match(listed.curl, /curl/);
    assert.equal(listed.headers.authorization, "Bearer project-api-key_[redacted]");
    assert.deepEqual(Object.keys(listed).filter((key) => key === "text" || key === "json"), []);
    assert.equal(JSON.parse(JSON.stringify(listed)).body.text, listed.text());
  });

  test("no body: text() is empty, and json() says which request sent none", async () => {
    await fetch(`${svcStub.url}/v1/flags/evaluate`, { method: "POST", headers: { Authorization: "Bearer project-api-key_js" } });
    const [empty] = await svcStub.requests("evaluate");
    assert.equal(empty.text(), "");
    assert.throws(() => empty.json(), { name: "TypeError", message: `#${empty.seq} POST /v1/flags/evaluate sent no body to read as JSON` });
  });

  test("requests are listed as they arrived: one held by a delay before a quick one that ended first", async () => {
    await svcStub.arm("delay", { applyTo: "evaluate", ttlRequests: 1, delayMs: 60_000 });
    const leave = new AbortController();
    const held = evaluate(svcStub.url, { flagKeys: ["held"], signal: leave.signal });
    // the delay has taken the first request once it is no longer armed (it was armed for one)
    await until(async () => (await svcStub.armed()).length === 0, "the delay to hold the first request");
    assert.equal((await evaluate(svcStub.url, { flagKeys: ["quick"] })).status, 200); // answered, and ended, first
    leave.abort(); // the held request ends now, its client gone
    await held;
    const listed = await svcStub.waitForRequests(2, { route: "evaluate", timeoutMs: WAIT_HANG_GUARD_MS });
    assert.deepEqual(
      listed.map((r) => [r.fault?.mode ?? null, r.status]),
      [["delay", null], [null, 200]],
    );
    assert.ok(listed[0].seq < listed[1].seq, `#${listed[0].seq} is listed before #${listed[1].seq}`);
    assert.deepEqual(listed[1].json().flagKeys, ["quick"]);
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

describe("an address where nothing listens", () => {
  test("offlineUrl: a real client's request there is refused at once", async () => {
    const offline = await svcStub.offlineUrl();
    assert.match(offline, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(offline, svcStub.baseUrl);
    const refused = await evaluate(offline);
    assert.ok(refused.error, `a client got an answer there: ${refused.status}`);
    if (!process.versions.bun && !process.versions.deno) assert.equal(refused.error.cause?.code, "ECONNREFUSED");
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
