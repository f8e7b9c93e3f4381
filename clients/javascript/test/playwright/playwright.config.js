// The package's Playwright Test suite: pages in the system's Chromium, one stub for the run.
import { fileURLToPath } from "node:url";

import { defineConfig } from "@playwright/test";

import { EXPECT_TIMEOUT_MS, TEST_TIMEOUT_MS } from "../child-run.js";

/**
 * The system's Chromium, never a downloaded one. The background-networking switches keep it
 * from calling out (this machine's network refuses it); `--no-sandbox`: we run as root.
 */
export const CHROMIUM = {
  launchOptions: {
    executablePath: "/usr/bin/chromium",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  },
};

// Playwright resolves a module name from its own node_modules, where this package is not: a path.
export const GLOBAL_SETUP = fileURLToPath(import.meta.resolve("svc-stub/global-setup"));

export default defineConfig({
  testDir: ".",
  testMatch: "*.spec.js",
  globalSetup: GLOBAL_SETUP,
  workers: 2,
  fullyParallel: true,
  forbidOnly: true,
  reporter: "list",
  // Hang guards, not speed budgets: Playwright's 30 s per test and 5 s per expect are budgets a
  // busy 2-core CI machine can exceed with tests that work (a page waiting out a Retry-After, a
  // browser started under load). Two minutes per test, and journal.spec.js's hook, which waits on a
  // child run, gives itself CHILD_TEST_TIMEOUT_MS, above that run's hang guard; a minute per
  // expect, which returns as soon as what it asserts is true.
  timeout: TEST_TIMEOUT_MS,
  expect: { timeout: EXPECT_TIMEOUT_MS },
  outputDir: "../../test-results/playwright", // gitignored
  use: CHROMIUM,
});
