// Fails on purpose: ../journal.spec.js runs it and checks what the failure leaves behind.
import { checkoutUrl, expect, test } from "../app.js";

test("the page read its flag, then the test failed", async ({ page, appUrl, svcStub }) => {
  await page.goto(checkoutUrl(appUrl, svcStub.url));
  await expect(page.locator("#checkout")).toHaveText("treatment-b");
  expect("treatment-b", "fails on purpose: its journal is what is checked").toBe("treatment-a");
});

test("a test that passes keeps no journal", async ({ page, appUrl, svcStub }) => {
  await page.goto(checkoutUrl(appUrl, svcStub.url));
  await expect(page.locator("#checkout")).toHaveText("treatment-b");
});
