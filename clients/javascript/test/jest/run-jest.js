// A Jest of its own, in a child process, on one file of child/: what a user's run would print.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const PACKAGE = fileURLToPath(new URL("../..", import.meta.url));
const JEST = fileURLToPath(new URL("../../node_modules/jest/bin/jest.js", import.meta.url));
const CONFIG = fileURLToPath(new URL("./child/jest.config.js", import.meta.url));

/**
 * Runs Jest on `child/<file>` with these variables (undefined: unset); its exit code, its report
 * (stderr) and its `--json` results, one entry per test.
 */
export function runJest(file, env) {
  const environment = { ...process.env, NODE_OPTIONS: "--experimental-vm-modules", FORCE_COLOR: "0", ...env };
  delete environment.JEST_WORKER_ID; // the child is a Jest of its own, not one of this run's workers
  for (const [name, value] of Object.entries(environment)) if (value === undefined) delete environment[name];

  const run = spawnSync(process.execPath, [JEST, "--config", CONFIG, "--json", "--watchman=false", `child/${file}$`], {
    cwd: PACKAGE,
    env: environment,
    encoding: "utf8",
    timeout: 60_000,
  });
  const json = JSON.parse(run.stdout || "null");
  return { status: run.status, report: run.stderr, tests: json?.testResults.flatMap((r) => r.assertionResults) ?? [] };
}
