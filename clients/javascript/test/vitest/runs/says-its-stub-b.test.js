// Run by ../shared.test.js in a child Vitest, beside its twin: which stub this file's worker was given.
import { test } from "svc-stub/vitest";

test("says where its stub is", ({ svcStub }) => {
  console.log(`stub at ${svcStub.baseUrl} in pid ${process.pid}`);
});
