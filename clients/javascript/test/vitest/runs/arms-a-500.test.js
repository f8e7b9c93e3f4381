// A suite that arms only a 500 on evaluate (for two requests), then evaluates checkout-v2: the
// run's coverage says what it never met. Run by coverage.test.js in a child Vitest of its own (its
// own stub, so the run is only this file).
import { assertCovers, coverage } from "svc-stub";
import { expect, test } from "svc-stub/vitest";

import { evaluate } from "../../support.js";

test("evaluate answers 500 twice, then checkout-v2", async ({ svcStub }) => {
  await svcStub.arm("500", { applyTo: ["evaluate"], ttlRequests: 2 });
  expect((await evaluate(svcStub.url)).status).toBe(500);
  expect((await evaluate(svcStub.url)).status).toBe(500);
  expect((await evaluate(svcStub.url, { flagKeys: ["checkout-v2"] })).status).toBe(200);
});

test("the run's coverage, typed: two cells met, one fixture flag read", async ({ svcStub }) => {
  const report = await coverage({ stub: svcStub });
  expect(report.scope).toBe("run");
  expect(report.cells).toEqual([
    { route: "evaluate", outcome: "fault 500", count: 2 },
    { route: "evaluate", outcome: "ok", count: 1 },
  ]);
  expect(report.profiles.runtime.gaps.map((gap) => gap.says)).toContain("evaluate never met a 429 with Retry-After");
  expect(report.flags.read).toEqual(["checkout-v2"]);
  expect(report.flags.neverRead).toContain("dark-mode");
  expect(report.flags.neverRead).not.toContain("checkout-v2");
  expect(report.flags.of).toBe(report.flags.read.length + report.flags.neverRead.length);
});

test("the gate fails under its threshold, naming the gaps", async ({ svcStub }) => {
  const gate = assertCovers("runtime", { atLeast: 80, stub: svcStub });
  await expect(gate).rejects.toThrow(/runtime 2 of 15 cells met \(13\.3 %\), under 80 %/);
  await expect(gate).rejects.toThrow("evaluate never met a 429 with Retry-After");
  await assertCovers("runtime", { atLeast: 10, stub: svcStub }); // 2 of 15 is over 10 %
});
