// playwright.config.js: one stub for the run; Chromium from the system
import { defineConfig } from "@playwright/test";

export default defineConfig({
  globalSetup: "svc-stub/global-setup",
  use: {
    launchOptions: { executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] },
    // a page the test serves itself (page.route) is on no address Chromium knows, so Chromium
    // asks before it calls the stub on loopback: granted here
    permissions: ["local-network-access"],
  },
});
