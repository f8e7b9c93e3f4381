// A suite that arms only a 500 on evaluate: the run's coverage says what it never met. Run by
// coverage.test.js in a child Vitest of its own (its own stub, so the run is only this file).
import { assertCovers, coverage } from "svc-stub";
import { expect, test } from "svc-stub/vitest";

import { evaluate } from "../../support.js";

test("evaluate answers 500 twice", async ({ svcStub }) => {
  await svcStub.arm("500", { applyTo: ["evaluate"] });
  expect((await evaluate(svcStub.url)).status).toBe(500);
  expect((await evaluate(svcStub.url)).status).toBe(500);
});

test("the run's coverage, typed: one cell met, twice", async ({ svcStub }) => {
  const report = await coverage({ stub: svcStub });
  expect(report.scope).toBe("run");
  expect(report.cells).toEqual([{ route: "evaluate", outcome: "fault 500", count: 2 }]);
  expect(report.profiles.runtime.gaps.map((gap) => gap.says)).toContain("evaluate never met a 429 with Retry-After");
});

test("the gate fails under its threshold, naming the gaps", async ({ svcStub }) => {
  const gate = assertCovers("runtime", { atLeast: 80, stub: svcStub });
  await expect(gate).rejects.toThrow(/runtime 1 of 15 cells met \(6\.7 %\), under 80 %/);
  await expect(gate).rejects.toThrow("evaluate never met a 429 with Retry-After");
  await assertCovers("runtime", { atLeast: 5, stub: svcStub }); // 1 of 15 is over 5 %
});
