// Run by adapter.test.js in a child `node --test`: one test that fails, one that passes.
import assert from "node:assert/strict";
import { test } from "node:test";

import { useSvcStub } from "svc-stub/node-test";

const svcStub = useSvcStub();

test("checkout reads the flag", async () => {
  await fetch(`${svcStub.url}/v1/flags/evaluate`, {
    method: "POST",
    headers: { Authorization: "Bearer project-api-key_js", "Content-Type": "application/json" },
    body: JSON.stringify({ targetingKey: "user-1", flagKeys: ["checkout-v2"] }),
  });
  assert.equal("treatment-b", "control");
});

test("this one passes", () => {});
