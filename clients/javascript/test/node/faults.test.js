// Every fault mode, armed through the helper and seen by a real HTTP client in the test's namespace.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { FAULT_MODES, faultHeaders, StubArgumentError, StubError, SvcStubError } from "svc-stub";
import { useSvcStub } from "svc-stub/node-test";

import { evaluate, WAIT_HANG_GUARD_MS } from "../support.js";

const svcStub = useSvcStub();

/**
 * How long the client waits for the answer of a request the "hang" mode faults, and only that one:
 * that mode never answers, so the client's giving up (a TimeoutError) is what the test asserts, and
 * it comes after this whatever the machine's speed. Every other mode does answer (or closes the
 * connection), and its request gets evaluate's own generous guard: a budget of a second, as all
 * had before, could run out on a busy machine before the 300 ms delay and slow_body finish.
 */
const GIVE_UP_ON_HANG_MS = 1000;
const clientTimeout = (mode) => (mode === "hang" ? { timeoutMs: GIVE_UP_ON_HANG_MS } : {});

/** What each mode looks like to a client, and the options it is armed with. */
const SEEN = {
  delay: [{ delayMs: 300 }, (a) => a.status === 200 && a.ms >= 280],
  401: [{}, (a) => a.status === 401],
  429: [{ retryAfter: 3 }, (a) => a.status === 429 && a.headers.get("retry-after") === "3"],
  500: [{}, (a) => a.status === 500],
  invalid_json: [{}, (a) => a.status === 200 && a.json === undefined],
  truncated: [{}, (a) => a.error !== undefined || a.json === undefined],
  quota_limited: [{}, (a) => a.status === 200 && a.json.quotaLimited === true],
  status: [{ status: 503, retryAfter: 2 }, (a) => a.status === 503 && a.headers.get("retry-after") === "2"],
  reset: [{}, (a) => a.error !== undefined],
  empty_response: [{}, (a) => a.error !== undefined],
  slow_body: [{ delayMs: 300 }, (a) => a.status === 200 && a.json !== undefined && a.ms >= 280],
  hang: [{}, (a) => a.error?.name === "TimeoutError"],
};

describe("every fault mode", () => {
  test("the helper knows exactly the modes this test covers", () => {
    assert.deepEqual(Object.keys(SEEN).sort(), [...FAULT_MODES].sort());
  });

  for (const mode of FAULT_MODES) {
    test(`arm("${mode}") reaches the client, once, and the journal names it`, async () => {
      const [options, seen] = SEEN[mode];
      const armed = await svcStub.arm(mode, { applyTo: "evaluate", ttlRequests: 1, ...options });
      assert.equal(armed.mode, mode);

      const faulted = await evaluate(svcStub.url, clientTimeout(mode));
      assert.ok(seen(faulted), `${mode}: the client saw ${JSON.stringify({ ...faulted, headers: undefined })}`);
      const after = await evaluate(svcStub.url);
      assert.equal(after.status, 200, "ttlRequests: 1 faults one request only");

      // listed as each ends: a hung request only once its client has given up on it
      const requests = await svcStub.waitForRequests(2, { route: "evaluate", timeoutMs: WAIT_HANG_GUARD_MS });
      const faults = requests.map((r) => r.fault && { mode: r.fault.mode, source: r.fault.source });
      assert.deepEqual(faults.filter(Boolean), [{ mode, source: "armed" }]);
    });

    test(`faultHeaders("${mode}") faults one request, whatever is armed`, async () => {
      const [options, seen] = SEEN[mode];
      const { body: _unused, ...parameters } = options;
      const faulted = await evaluate(svcStub.url, { headers: faultHeaders(mode, parameters), ...clientTimeout(mode) });
      assert.ok(seen(faulted), `${mode}: the client saw ${JSON.stringify({ ...faulted, headers: undefined })}`);
      // listed as it ends: a hung request only once its client has given up on it
      const [request] = await svcStub.waitForRequests(1, { route: "evaluate", timeoutMs: WAIT_HANG_GUARD_MS });
      assert.equal(request.fault.source, "header");
    });
  }
});

describe("armed for a block, or for the rest of the test", () => {
  test("withFault disarms its fault when the block ends, and leaves others armed", async () => {
    const kept = await svcStub.arm("429", { applyTo: "capture" });
    const inside = await svcStub.withFault("500", { applyTo: "evaluate" }, async (armed) => {
      assert.equal(armed.mode, "500");
      return (await evaluate(svcStub.url)).status;
    });
    assert.equal(inside, 500);
    assert.equal((await evaluate(svcStub.url)).status, 200);
    assert.deepEqual((await svcStub.armed()).map((f) => f.id), [kept.id]);
  });

  test("withFault disarms even when the block throws", async () => {
    await assert.rejects(
      svcStub.withFault("500", async () => {
        throw new Error("the block failed");
      }),
      /the block failed/,
    );
    assert.deepEqual(await svcStub.armed(), []);
  });

  test("a sequence is consumed one request at a time, then disarmed", async () => {
    await svcStub.arm({ sequence: ["500", { mode: "status", status: 503 }, "none", "429"], applyTo: "evaluate" });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await evaluate(svcStub.url)).status);
    assert.deepEqual(statuses, [500, 503, 200, 429, 200]);
  });

  test("an armed fault lists the parameters its mode uses, and no other", async () => {
    const given = { delayMs: 50, status: 503, retryAfter: 2 };
    const delayed = await svcStub.arm("delay", { applyTo: "batch", ...given });
    const failing = await svcStub.arm("500", { applyTo: "batch", ...given });
    assert.deepEqual([delayed.delayMs, delayed.status, delayed.body, delayed.retryAfter], [50, undefined, undefined, undefined]);
    assert.deepEqual([failing.delayMs, failing.status, failing.body, failing.retryAfter], [undefined, 503, null, undefined]);
    assert.deepEqual(await svcStub.armed(), [delayed, failing]);
  });

  test("probability with a seed fires on a repeatable share", async () => {
    const armed = await svcStub.arm("500", { applyTo: "evaluate", probability: 0.5, seed: 7 });
    assert.equal(armed.seed, 7);
    const statuses = [];
    for (let i = 0; i < 20; i++) statuses.push((await evaluate(svcStub.url)).status);
    assert.ok(statuses.includes(500) && statuses.includes(200), String(statuses));
  });
});

describe("faultHeaders, a module function", () => {
  test('faultHeaders("none") lets one request through whatever is armed', async () => {
    assert.deepEqual(faultHeaders("none"), { "X-Svc-Test-Fault": "none" });
    await svcStub.arm("500", { applyTo: "evaluate" });
    assert.equal((await evaluate(svcStub.url, { headers: faultHeaders("none") })).status, 200);
    assert.equal((await evaluate(svcStub.url)).status, 500);
    const faults = (await svcStub.requests("evaluate")).map((r) => r.fault && { mode: r.fault.mode, source: r.fault.source });
    assert.deepEqual(faults, [{ mode: "none", source: "header" }, { mode: "500", source: "armed" }]);
  });
});

describe("a mistake is one line, before anything is sent", () => {
  test("an unknown mode lists the modes", async () => {
    await assert.rejects(svcStub.arm("boom"), {
      name: "StubArgumentError",
      message: `unknown fault mode 'boom'; the modes are ${FAULT_MODES.join(", ")}`,
    });
    assert.deepEqual(await svcStub.requests(), []);
  });

  test("a status given as a mode is told the status mode", async () => {
    await assert.rejects(svcStub.arm("503"), {
      name: "StubArgumentError",
      message: `unknown fault mode '503'; the modes are ${FAULT_MODES.join(", ")}; for a 503, use mode "status" with status: 503`,
    });
    for (const notAStatus of ["150", "600", "0503"]) {
      await assert.rejects(svcStub.arm(notAStatus), {
        name: "StubArgumentError",
        message: `unknown fault mode '${notAStatus}'; the modes are ${FAULT_MODES.join(", ")}`,
      });
    }
    assert.deepEqual(await svcStub.requests(), []);
  });

  test("an unknown selector lists the selectors", async () => {
    await assert.rejects(svcStub.arm("500", { applyTo: "evaluation" }), /applyTo: unknown selector 'evaluation'; the selectors are all, runtime/);
  });

  test("an unknown option names itself", async () => {
    await assert.rejects(svcStub.arm("500", { ttl: 1 }), /arm\(\): unknown option 'ttl'/);
  });

  test("the helper's refusals are the stub's kind: a StubError with the stub's status and INVALID_ARGUMENT", async () => {
    for (const wrong of [
      () => svcStub.arm("boom"),
      () => svcStub.arm("500", { applyTo: "evaluation" }),
      () => svcStub.arm("500", { ttl: 1 }),
      () => svcStub.arm({ sequence: ["boom"] }),
      () => svcStub.waitForRequests(1, { timeoutMs: 60_001 }),
      () => svcStub.inNamespace("x").inNamespace(undefined).deleteNamespace(),
      async () => faultHeaders("boom"),
      async () => faultHeaders("500", { body: "x" }),
    ]) {
      const error = await wrong().catch((e) => e);
      assert.ok(error instanceof StubArgumentError && error instanceof StubError && error instanceof SvcStubError, String(error));
      assert.deepEqual([error.status, error.code], [400, "INVALID_ARGUMENT"]);
      assert.equal(error.message, error.detail);
    }
    // a callback that is not one is JavaScript's own TypeError, as for every API that takes one
    await assert.rejects(svcStub.withFault("500", {}), { name: "TypeError", message: /withFault\(\): the last argument is the block/ });
  });

  test("faultHeaders names an unknown parameter (a body is armed, not sent)", () => {
    assert.throws(() => faultHeaders("500", { body: "x" }), {
      name: "StubArgumentError",
      message: "faultHeaders(): unknown parameter 'body'; the parameters are delayMs, status, retryAfter (a body is armed, not sent as a header)",
    });
  });

  test("what the stub refuses comes back as a StubError with its code and message", async () => {
    const refused = await svcStub.arm("status").catch((error) => error);
    assert.ok(refused instanceof StubError);
    assert.equal(refused.status, 400);
    assert.match(refused.message, /^400 INVALID_BODY: .*status/);
  });
});
