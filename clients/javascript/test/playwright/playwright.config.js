// The package's Playwright Test suite: pages in the system's Chromium, one stub for the run.
import { fileURLToPath } from "node:url";

import { defineConfig } from "@playwright/test";

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
  outputDir: "../../test-results/playwright", // gitignored
  use: CHROMIUM,
});
