// Run by adapter.test.js in a child `node --test`: says where its stub is, then waits forever
// (until the run is interrupted).
import { test } from "node:test";

import { useSvcStub } from "svc-stub/node-test";

const svcStub = useSvcStub();

test("waits", async (t) => {
  console.log(`stub at ${svcStub.baseUrl}`);
  if (process.env.HANG) await new Promise(() => {});
});
