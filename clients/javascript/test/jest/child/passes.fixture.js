// Run only by no-stub.test.js, in a Jest of its own with no stub to be had: the test would pass,
// given one, so what fails it is svc-stub's start alone.
import { expect } from "@jest/globals";
import { test } from "svc-stub/jest";

test("passes, given a stub", ({ svcStub }) => {
  expect(svcStub.url).toContain("/ns/");
});
