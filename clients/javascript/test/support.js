// What the suites share: a real HTTP client's request to the stub, as a client library sends it.

export const SERVER_KEY = "project-api-key_js";

/**
 * How long `evaluate` waits for an answer before it gives up on it: a guard against a hung answer,
 * NOT a speed budget (it was 5 s, which a busy 2-core CI machine can exceed with a stub that
 * works). An answer that comes returns at once. A minute, under the runners' per-test guard
 * (TEST_TIMEOUT_MS in child-run.js), so that a hung answer fails the test with the request's own
 * TimeoutError. The one test that provokes a hung answer on purpose (the "hang" fault mode, in
 * node/faults.test.js) passes its own short `timeoutMs`: the abort is what it asserts.
 */
export const ANSWER_HANG_GUARD_MS = 60_000;

/**
 * The `timeoutMs` of a wait for the journal (waitForRequests, waitForSvcEvents, ...) for what a
 * client sends in the background: the longest the stub allows. A guard against a hang, NOT a speed
 * budget (the helper's default is 5 s): the long-poll returns as soon as what it waits for is there.
 */
export const WAIT_HANG_GUARD_MS = 60_000;

/** `POST {base}/v1/flags/evaluate`, answered or not (or given up on, at `signal`): what a client sees. */
export async function evaluate(base, { flagKeys = ["checkout-v2"], headers = {}, timeoutMs = ANSWER_HANG_GUARD_MS, signal } = {}) {
  const started = performance.now();
  try {
    const answer = await fetch(`${base}/v1/flags/evaluate`, {
      method: "POST",
      headers: { Authorization: `Bearer ${SERVER_KEY}`, "Content-Type": "application/json", ...headers },
      body: JSON.stringify({ targetingKey: "user-1", flagKeys }),
      signal: signal ?? AbortSignal.timeout(timeoutMs),
    });
    const text = await answer.text();
    return { status: answer.status, headers: answer.headers, text, json: parsed(text), ms: performance.now() - started };
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
}

/** `POST {base}/v1/capture` with these events. */
export async function capture(base, events) {
  const answer = await fetch(`${base}/v1/capture`, {
    method: "POST",
    headers: { Authorization: `Bearer ${SERVER_KEY}`, "Content-Type": "application/json" },
    body: JSON.stringify({ events }),
  });
  return answer.status;
}

/** The value served for `flagKey` to `base`'s namespace. */
export async function valueOf(base, flagKey) {
  const answer = await evaluate(base, { flagKeys: [flagKey] });
  return answer.json?.decisions?.[0]?.value;
}

function parsed(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
