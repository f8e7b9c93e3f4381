// `test.each`: one test a row, each in a namespace of its own, given the row's values and then
// `{ svcStub }`, in every form Jest has (array rows, single values, objects; concurrent).
import { expect } from "@jest/globals";
import { test } from "svc-stub/jest";

import { evaluate } from "../support.js";

const namespaces = [];

test.each([
  ["500", 500],
  ["429", 429],
])("an armed %s answers %i, and nothing else is armed", async (mode, status, { svcStub }) => {
  const armed = await svcStub.arm(mode, { applyTo: "evaluate" });
  expect((await evaluate(svcStub.url)).status).toBe(status);
  expect((await svcStub.armed()).map((f) => f.id)).toEqual([armed.id]);
  namespaces.push(svcStub.namespace);
});

test.each(["dark-mode", "max-items"])("a single value: %s", async (flagKey, { svcStub }) => {
  const answer = await evaluate(svcStub.url, { flagKeys: [flagKey] });
  expect(answer.json.decisions.map((d) => d.flagKey)).toEqual([flagKey]);
  namespaces.push(svcStub.namespace);
});

test.each([{ mode: "status", status: 503 }])("an object row: $mode $status", async ({ mode, status }, { svcStub }) => {
  await svcStub.arm(mode, { status, applyTo: "evaluate", ttlRequests: 1 });
  expect((await evaluate(svcStub.url)).status).toBe(503);
  expect((await svcStub.requests("evaluate")).map((r) => r.status)).toEqual([503]);
  namespaces.push(svcStub.namespace);
});

test.concurrent.each([[1], [2], [3]])("concurrent row %i sees only its own request", async (n, { svcStub }) => {
  await evaluate(svcStub.url, { headers: { "X-Row": String(n) } });
  expect((await svcStub.requests("evaluate")).map((r) => r.headers["x-row"])).toEqual([String(n)]);
  namespaces.push(svcStub.namespace);
});

// Jest settles the rows above in order before it runs this one.
test("every row had a namespace of its own", () => {
  expect(namespaces).toHaveLength(8);
  expect(new Set(namespaces).size).toBe(8);
  expect(namespaces.every((name) => typeof name === "string")).toBe(true);
});
