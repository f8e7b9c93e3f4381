// Tests in two workers at once, on one stub, each in a namespace of its own: what one serves and
// records, no other sees.
import { checkoutUrl, expect, test } from "./app.js";

test("every worker uses the one stub global setup started", async ({ svcStub, svcStubUrl }) => {
  expect(process.env.SVC_STUB_URL, "global setup hands the stub's URL to the workers").toMatch(/^http:\/\//);
  expect(svcStubUrl).toBe(process.env.SVC_STUB_URL);
  expect(svcStub.baseUrl).toBe(process.env.SVC_STUB_URL);
  expect(svcStub.url).toBe(`${process.env.SVC_STUB_URL}/ns/${svcStub.namespace}`);
});

// fullyParallel: these run in both workers at once, each serving a value no other test serves.
for (const n of [1, 2, 3, 4, 5, 6, 7, 8]) {
  const variant = `variant-${n}`;

  test(`namespace ${n} serves its own value and records its own requests only`, async ({ page, appUrl, svcStub }) => {
    expect(svcStub.baseUrl).toBe(process.env.SVC_STUB_URL);
    await svcStub.setFixtures({ flags: { "checkout-v2": { type: "string", value: variant, variant } } });

    await page.goto(checkoutUrl(appUrl, svcStub.url));
    await expect(page.locator("#checkout")).toHaveText(variant);

    const journal = await svcStub.requests();
    expect(journal.map((r) => r.route)).toEqual(["preflight", "evaluate"]);
    const evaluate = await svcStub.request(journal[1].seq);
    expect(JSON.parse(evaluate.answer.body.text).decisions[0].value).toBe(variant);
  });
}
