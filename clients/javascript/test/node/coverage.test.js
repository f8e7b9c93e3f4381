// The coverage gate, on a report as the stub sends it (no stub needed): assertCovers says what the
// CLI's --fail-under does. The run's end, which prints the stub's own summary lines, is proven on
// a child Vitest run (test/vitest/coverage.test.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { assertReportCovers, percentMet } from "svc-stub";

const gap = (route, says) => ({ route, expected: ["x"], says });
const REPORT = {
  scope: "run",
  cells: [{ route: "evaluate", outcome: "fault 500", count: 2 }],
  profiles: {
    runtime: { name: "runtime", description: "", met: 1, of: 3, gaps: [gap("evaluate", "evaluate never met a 401"), gap("evaluate", "evaluate never met a 429 with Retry-After")] },
    vendor: { name: "vendor", description: "", met: 0, of: 2, gaps: [gap("flags", "flags never met a 401")] },
  },
  flags: { read: [], neverRead: ["checkout-v2"], of: 1 },
  summary: ["svc-stub coverage: runtime 1 of 3 cells met; gaps: evaluate never met a 401; evaluate never met a 429 with Retry-After"],
};

test("the gate fails under its threshold, naming every gap; passes at or over it", () => {
  assert.throws(() => assertReportCovers(REPORT, "runtime", { atLeast: 80 }), {
    name: "AssertionError",
    message: "svc-stub coverage: runtime 1 of 3 cells met (33.3 %), under 80 %; gaps:\n  - evaluate never met a 401\n  - evaluate never met a 429 with Retry-After",
  });
  assert.throws(() => assertReportCovers(REPORT, "runtime"), { name: "AssertionError" }); // default: every cell
  assertReportCovers(REPORT, "runtime", { atLeast: 30 });
  assert.equal(percentMet(REPORT.profiles.vendor), 0);
  assert.throws(() => assertReportCovers(REPORT, "management", { atLeast: 10 }), { name: "StubArgumentError", message: /no profile "management" in the report \(it has runtime, vendor\)/ });
  assert.throws(() => assertReportCovers(REPORT, "runtime", { atLeast: 120 }), { name: "StubArgumentError" });
});
