// Faults in Jest: armed for the rest of the test, or for a block; either way, the test's alone.
import { expect } from "@jest/globals";
import { test } from "svc-stub/jest";

import { evaluate } from "../support.js";

const status = async (svcStub) => (await evaluate(svcStub.url)).status;

test("arm() faults the test's requests until its ttl runs out", async ({ svcStub }) => {
  const armed = await svcStub.arm("500", { applyTo: "evaluate", ttlRequests: 2 });
  expect(armed).toMatchObject({ mode: "500", applyTo: ["evaluate"], ttlRequests: 2 });

  expect([await status(svcStub), await status(svcStub), await status(svcStub)]).toEqual([500, 500, 200]);
  const journal = await svcStub.requests("evaluate");
  expect(journal.map((r) => r.fault?.armedId ?? null)).toEqual([armed.id, armed.id, null]);
});

test("a fault armed with no ttl faults every request of the test, and is never disarmed", async ({ svcStub }) => {
  await svcStub.arm("429", { applyTo: "all", retryAfter: 3 });
  for (let i = 0; i < 2; i++) {
    const answer = await evaluate(svcStub.url);
    expect([answer.status, answer.headers.get("retry-after")]).toEqual([429, "3"]);
  }
});

// Runs after the test above: its fault ended with its namespace.
test("the next test starts with nothing armed", async ({ svcStub }) => {
  expect(await svcStub.armed()).toEqual([]);
  expect(await status(svcStub)).toBe(200);
});

test("withFault() faults its block only, and leaves the test's other faults armed", async ({ svcStub }) => {
  const kept = await svcStub.arm("500", { applyTo: "capture" });
  const inside = await svcStub.withFault("status", { status: 503, applyTo: "evaluate" }, async (armed) => {
    expect(armed.status).toBe(503);
    return status(svcStub);
  });
  expect(inside).toBe(503);
  expect(await status(svcStub)).toBe(200);
  expect((await svcStub.armed()).map((f) => f.id)).toEqual([kept.id]);
});

test("withFault() disarms when its block throws, and the error reaches the test", async ({ svcStub }) => {
  const failing = svcStub.withFault("500", async () => {
    throw new Error("the block failed");
  });
  await expect(failing).rejects.toThrow("the block failed");
  expect(await svcStub.armed()).toEqual([]);
});

test("a sequence answers one step a request, then is gone", async ({ svcStub }) => {
  await svcStub.arm({ sequence: ["500", "none", { mode: "status", status: 502 }], applyTo: "evaluate" });
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push(await status(svcStub));
  expect(statuses).toEqual([500, 200, 502, 200]);
});
