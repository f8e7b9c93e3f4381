// `test.concurrent`: a file's tests running at once, each still in a namespace of its own.
import { expect } from "@jest/globals";
import { test } from "svc-stub/jest";

import { evaluate } from "../support.js";

const FLAG = "ns-flag";
const DELAY_MS = 400;
const spans = [];

// Every test arms its delay, then waits for all of them to have armed theirs before it sends its
// request: the four requests are then sent in one turn of the event loop, before any answer can be
// read, whatever the machine's speed. (Without it, the delay alone had to outlast the others'
// setting up: a test that took longer than DELAY_MS to arm, on a busy machine, started after
// another's request ended.) Jest not running them at once would leave them waiting here.
const TESTS = [1, 2, 3, 4];
let armedSoFar = 0;
let everyoneArmed;
const allArmed = new Promise((resolve) => (everyoneArmed = resolve));

for (const n of TESTS) {
  const value = `concurrent-value-${n}`;
  test.concurrent(`concurrent test ${n} sees only its own value, its own delay and its own request`, async ({ svcStub }) => {
    await svcStub.setFixtures({ flags: { [FLAG]: { type: "string", value } } });
    // a delay on its one request keeps every test in flight at once, so their namespaces overlap
    const armed = await svcStub.arm("delay", { delayMs: DELAY_MS, applyTo: "evaluate", ttlRequests: 1 });
    if (++armedSoFar === TESTS.length) everyoneArmed();
    await allArmed;

    const started = performance.now();
    const answer = await evaluate(svcStub.url, { flagKeys: [FLAG], headers: { "X-Test": value } });
    spans.push({ started, ended: performance.now() });
    expect([answer.status, answer.json?.decisions?.[0]?.value]).toEqual([200, value]);
    expect(answer.ms).toBeGreaterThanOrEqual(DELAY_MS - 20);

    const journal = await svcStub.requests("evaluate");
    expect(journal.map((r) => r.headers["x-test"])).toEqual([value]);
    expect(journal[0].fault).toMatchObject({ mode: "delay", source: "armed", armedId: armed.id });
  });
}

// Jest settles the concurrent tests in order before it runs this one.
test("the concurrent tests' requests were all in flight at the same time", () => {
  expect(spans).toHaveLength(4);
  const lastStarted = Math.max(...spans.map((s) => s.started));
  const firstEnded = Math.min(...spans.map((s) => s.ended));
  expect(lastStarted).toBeLessThan(firstEnded);
});

// `.concurrent.skip` (and `.concurrent.only`) are the helper's too: skipped, this never runs.
test.concurrent.skip("a skipped concurrent test never runs", async () => {
  throw new Error("a skipped test ran");
});
