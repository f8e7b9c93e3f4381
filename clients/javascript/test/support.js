// What the suites share: a real HTTP client's request to the stub, as a client library sends it.

export const SERVER_KEY = "project-api-key_js";

/** `POST {base}/v1/flags/evaluate`, answered or not: what a client sees. */
export async function evaluate(base, { flagKeys = ["checkout-v2"], headers = {}, timeoutMs = 5000 } = {}) {
  const started = performance.now();
  try {
    const answer = await fetch(`${base}/v1/flags/evaluate`, {
      method: "POST",
      headers: { Authorization: `Bearer ${SERVER_KEY}`, "Content-Type": "application/json", ...headers },
      body: JSON.stringify({ targetingKey: "user-1", flagKeys }),
      signal: AbortSignal.timeout(timeoutMs),
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
