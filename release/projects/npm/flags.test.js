// flags.test.js: a brand-new project's one test, run with `node --test` after `npm i -D svc-stub`
import assert from "node:assert/strict";
import { test } from "node:test";

import { useSvcStub } from "svc-stub/node-test";

const svcStub = useSvcStub(); // each test gets a namespace of its own; svcStub.url points into it

test("an armed 500 on evaluate reaches a plain HTTP call, and the journal records it", async () => {
  await svcStub.arm("500", { applyTo: "evaluate", ttlRequests: 1 });
  const evaluate = () =>
    fetch(`${svcStub.url}/v1/flags/evaluate`, {
      method: "POST",
      headers: { Authorization: "Bearer project-api-key_rehearsal", "Content-Type": "application/json" },
      body: JSON.stringify({ targetingKey: "user-1" }),
    });
  assert.equal((await evaluate()).status, 500);
  assert.equal((await evaluate()).status, 200, "ttlRequests: 1 faults one request only");
  const requests = await svcStub.waitForRequests(2, { route: "evaluate" });
  assert.deepEqual(requests.map((r) => r.fault?.mode ?? null), ["500", null]);
});
