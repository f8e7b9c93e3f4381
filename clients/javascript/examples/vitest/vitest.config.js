// vitest.config.js: one stub for the run, shared by every worker
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: { globalSetup: ["svc-stub/global-setup"] },
});
