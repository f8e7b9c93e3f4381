// Run only by ../shared.test.js, in a Jest of its own beside its twin: which stub this file was given.
import { test } from "svc-stub/jest";

test("says where its stub is", ({ svcStub }) => {
  console.log(`stub at ${svcStub.baseUrl} in pid ${process.pid}`);
});
