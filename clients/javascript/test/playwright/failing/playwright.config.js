// A run that fails on purpose, started only by ../journal.spec.js (its *.fails.js is outside the
// main run's testMatch): the main config's browser and global setup, and each test attempted
// four times, at once where it can be (two projects, a retry each), as a real CI config does.
import { defineConfig } from "@playwright/test";

import { IN_CHILD_TIMEOUT_MS } from "../../child-run.js";
import { CHROMIUM, GLOBAL_SETUP } from "../playwright.config.js";

export default defineConfig({
  testDir: ".",
  testMatch: "*.fails.js",
  globalSetup: GLOBAL_SETUP, // SVC_STUB_URL is set: it checks that stub and starts none
  workers: 2,
  retries: 1,
  // journal.spec.js asserts which attempts fail (and why): Playwright's 30 s per test and 5 s per
  // expect, running out on a busy machine, would change that. A hang guard instead, not a budget.
  timeout: IN_CHILD_TIMEOUT_MS,
  expect: { timeout: IN_CHILD_TIMEOUT_MS },
  projects: [{ name: "first" }, { name: "second" }],
  reporter: "list",
  outputDir: "../../../test-results/playwright-failing", // journal.spec.js passes --output instead
  use: CHROMIUM,
});
