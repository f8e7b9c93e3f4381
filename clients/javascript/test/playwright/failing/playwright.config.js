// A run that fails on purpose, started only by ../journal.spec.js (its *.fails.js is outside the
// main run's testMatch): the main config's browser and global setup, and each test attempted
// four times, at once where it can be (two projects, a retry each), as a real CI config does.
import { defineConfig } from "@playwright/test";

import { CHROMIUM, GLOBAL_SETUP } from "../playwright.config.js";

export default defineConfig({
  testDir: ".",
  testMatch: "*.fails.js",
  globalSetup: GLOBAL_SETUP, // SVC_STUB_URL is set: it checks that stub and starts none
  workers: 2,
  retries: 1,
  projects: [{ name: "first" }, { name: "second" }],
  reporter: "list",
  outputDir: "../../../test-results/playwright-failing", // journal.spec.js passes --output instead
  use: CHROMIUM,
});
