// Run by journal.test.js in a child Vitest: one test that fails, one that passes.
import { expect, test } from "svc-stub/vitest";

test("checkout reads the flag", async ({ svcStub }) => {
  await fetch(`${svcStub.url}/v1/flags/evaluate`, {
    method: "POST",
    headers: { Authorization: "Bearer project-api-key_js", "Content-Type": "application/json" },
    body: JSON.stringify({ targetingKey: "user-1", flagKeys: ["checkout-v2"] }),
  });
  expect("treatment-b").toBe("control");
});

test("this one passes", async ({ svcStub }) => {
  expect(svcStub.url).toContain("/ns/this-one-passes-");
});
