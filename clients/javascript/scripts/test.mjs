// `npm test`: the package built, then its suite under each runner it serves, each with the
// runner's own command line. Every runner needs `svc-stub` on PATH (or SVC_STUB_BIN).
import { spawnSync } from "node:child_process";

import { runtime } from "./runtimes.mjs";

/** What Bun and Deno run too: the client, its waits and assertions, and a real client through it. */
const BOTH_RUNTIMES = ["test/node/journal.test.js", "test/node/posthog.test.js"];

const RUNS = [
  ["build", "tsc", ["-p", "."]],
  ["types", "tsc", ["-p", "test", "--noEmit"]],
  ["node:test", process.execPath, ["--test", "--test-reporter=spec", "test/node/"]],
  ["Vitest", "vitest", ["run", "--config", "test/vitest/vitest.config.js"]],
  ["Jest", "jest", ["--config", "test/jest/jest.config.js"], { NODE_OPTIONS: "--experimental-vm-modules" }],
  ["Playwright Test", "playwright", ["test", "--config", "test/playwright/playwright.config.js"]],
  // the node:test adapter under the other runtimes' own test runners: PATH's, else installed on
  // demand (scripts/runtimes.mjs), never among the package's own devDependencies
  ["Bun", () => runtime("bun"), ["test", ...BOTH_RUNTIMES]],
  ["Deno", () => runtime("deno"), ["test", "--allow-all", "--no-check", "--no-lock", ...BOTH_RUNTIMES]],
  ["examples", process.execPath, ["scripts/examples.mjs"]],
];

const only = process.argv.slice(2);
for (const [name, named, args, env = {}] of RUNS) {
  if (only.length && !only.includes(name) && name !== "build") continue;
  const command = typeof named === "function" ? named() : named;
  console.log(`\n== ${name}: ${command === process.execPath ? "node" : command} ${args.join(" ")}`);
  const bin = command === process.execPath || typeof named === "function" ? command : `node_modules/.bin/${command}`;
  const run = spawnSync(bin, args, { stdio: "inherit", env: { ...process.env, ...env } });
  if (run.status !== 0) {
    console.error(`\n${name} failed (exit ${run.status ?? run.signal})`);
    process.exit(1);
  }
}
