// Run only by journal-of-failure.test.js, in a Jest of its own: tests that fail on purpose, so
// that their errors name their journals, and one that passes, which must leave none. Each asks
// for a flag named after itself, for its journal to show.
import { expect } from "@jest/globals";
import { test } from "svc-stub/jest";

import { evaluate } from "../../support.js";

test("fails after one request", async ({ svcStub }) => {
  await evaluate(svcStub.url, { flagKeys: ["asked-by-the-failing-test"] });
  expect("what the test got").toBe("what it wanted");
});

// The error a test throws is Jest's to show, with the journal's line; it is not rewritten in place.
const thrown = new Error("the test's own error");
const stackBefore = thrown.stack;
test("fails with an error of its own", async ({ svcStub }) => {
  await evaluate(svcStub.url, { flagKeys: ["asked-by-the-failing-test"] });
  throw thrown;
});
test("the error that test threw is left as it was", () => {
  expect([thrown.message, thrown.stack]).toEqual(["the test's own error", stackBefore]);
});

test("passes after one request", async ({ svcStub }) => {
  await evaluate(svcStub.url, { flagKeys: ["asked-by-a-passing-test"] });
});

// Jest passes a `.failing` test that throws: that is a passing test too.
test.failing("fails as it is declared to, and so passes", async ({ svcStub }) => {
  await evaluate(svcStub.url, { flagKeys: ["asked-by-a-passing-test"] });
  expect("what the test got").toBe("what it wanted");
});

// Running at once, each must still name a journal of its own (not the test started last's). Each
// waits for the other to have sent its request before it fails: both are started before either
// fails, whatever the machine's speed (a pause of 50 ms had to be long enough for that).
let requestsSent = 0;
let bothSent;
const bothRequestsSent = new Promise((resolve) => (bothSent = resolve));
for (const n of [1, 2]) {
  test.concurrent(`concurrent test ${n} fails after one request`, async ({ svcStub }) => {
    await evaluate(svcStub.url, { flagKeys: [`asked-by-concurrent-test-${n}`] });
    if (++requestsSent === 2) bothSent();
    await bothRequestsSent;
    expect(n).toBe(0);
  });
}

// A table's rows are tests of their own: the failing row's journal holds its request alone.
test.each(["one", "two"])("row %s fails only as row two", async (row, { svcStub }) => {
  await evaluate(svcStub.url, { flagKeys: [`asked-by-row-${row}`] });
  expect(row).toBe("one");
});
