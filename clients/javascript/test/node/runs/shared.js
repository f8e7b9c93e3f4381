// Run by adapter.test.js in a child `node --test`, beside hanging.js: a second file, in a
// process of its own, says which stub it was given.
import { test } from "node:test";

import { useSvcStub } from "svc-stub/node-test";

const svcStub = useSvcStub();

test("says where its stub is", () => {
  console.log(`stub at ${svcStub.baseUrl}`);
});
