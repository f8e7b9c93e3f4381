// Per-test fixtures and keys, faults for a block, waits, through Vitest's fixtures.
import { inject } from "vitest";
import { describe, expect, test } from "svc-stub/vitest";

import { capture, evaluate, valueOf, WAIT_HANG_GUARD_MS } from "../support.js";

describe("with svcStubOptions", () => {
  test.override({
    svcStubOptions: {
      fixtures: [new URL("../fixtures/beta.yaml", import.meta.url), { flags: { "from-object": { type: "boolean", value: true } } }],
      keys: ["phc_vitest_bound"],
    },
  });

  test("the test's namespace serves its files and documents, later ones overlaid", async ({ svcStub }) => {
    expect((await svcStub.servedFixtures()).flags).toEqual(["beta-banner", "from-object"]);
    expect(await valueOf(svcStub.url, "beta-banner")).toBe(true);
  });

  test("a bound key brings a request that names no namespace into the test's", async ({ svcStub }) => {
    const answer = await fetch(`${svcStub.baseUrl}/flags/?v=2`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ api_key: "phc_vitest_bound", distinct_id: "user-1" }),
    });
    expect(answer.status).toBe(200);
    expect(await svcStub.requests("flags")).toHaveLength(1);
  });
});

test("the run's stub reaches the worker through Vitest's provide/inject, typed fixtures and all", async ({ svcStub, svcStubUrl }) => {
  expect(inject("svcStubUrl")).toBe(svcStubUrl);
  expect(svcStub.baseUrl).toBe(svcStubUrl);
  expect(process.env.SVC_STUB_URL ?? "").toBe(process.env.SVC_STUB_URL_BEFORE_THE_RUN); // not set by the global setup
});

test("without options, the run's fixtures", async ({ svcStub }) => {
  expect(await valueOf(svcStub.url, "checkout-v2")).toBe("treatment-b");
});

test("withFault for a block, then served again", async ({ svcStub }) => {
  const inside = await svcStub.withFault("status", { status: 503, applyTo: "evaluate" }, () => evaluate(svcStub.url));
  expect(inside.status).toBe(503);
  expect((await evaluate(svcStub.url)).status).toBe(200);
});

test("a wait for what a client sends in the background", async ({ svcStub }) => {
  setTimeout(() => capture(svcStub.url, [{ type: "signal", name: "checkout-latency", value: 120 }]), 100);
  const [signal] = await svcStub.waitForSvcEvents(1, { timeoutMs: WAIT_HANG_GUARD_MS });
  expect(signal).toMatchObject({ type: "signal", name: "checkout-latency" });
});

// Vitest's own test.for: one test a row, the row then the context, fixtures included.
const forNamespaces = [];
test.for([
  ["500", 500],
  ["429", 429],
])("test.for: an armed %s answers %i in the row's own namespace", async ([mode, status], { svcStub }) => {
  await svcStub.arm(mode, { applyTo: "evaluate" });
  expect((await evaluate(svcStub.url)).status).toBe(status);
  expect(await svcStub.armed()).toHaveLength(1);
  forNamespaces.push(svcStub.namespace);
});

test("test.for's rows each had a namespace of their own", () => {
  expect(forNamespaces).toHaveLength(2);
  expect(new Set(forNamespaces).size).toBe(2);
});
