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

test.each`
  mode              | status
  ${"quota_limited"} | ${200}
  ${"401"}          | ${401}
`("a tagged template: $mode answers $status", async ({ mode, status }, { svcStub }) => {
  await svcStub.arm(mode, { applyTo: "evaluate", ttlRequests: 1 });
  expect((await evaluate(svcStub.url)).status).toBe(status);
  namespaces.push(svcStub.namespace);
});

// Jest settles the rows above in order before it runs this one.
test("every row had a namespace of its own, named after the row", () => {
  expect(namespaces).toHaveLength(10);
  expect(new Set(namespaces).size).toBe(10);
  const rows = namespaces.map((name) => name.replace(/-[0-9a-f]{8}$/, ""));
  expect(rows.slice(0, 2)).toEqual(["an-armed-500-answers-500-and-nothing-else-is-armed", "an-armed-429-answers-429-and-nothing-else-is-armed"]);
  expect(rows).toContain("a-single-value-max-items");
  expect(rows).toContain("an-object-row-status-503");
  expect(rows.filter((row) => row.startsWith("concurrent-row-")).sort()).toEqual([1, 2, 3].map((n) => `concurrent-row-${n}-sees-only-its-own-request`));
  expect(rows.slice(-2)).toEqual(["a-tagged-template-quota_limited-answers-200", "a-tagged-template-401-answers-401"]);
});
