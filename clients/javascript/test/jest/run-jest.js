// A Jest of its own, in a child process, on one file of child/: what a user's run would print.
import { fileURLToPath } from "node:url";

import { runChild } from "../child-run.js";

const PACKAGE = fileURLToPath(new URL("../..", import.meta.url));
const JEST = fileURLToPath(new URL("../../node_modules/jest/bin/jest.js", import.meta.url));
const CONFIG = fileURLToPath(new URL("./child/jest.config.js", import.meta.url));

/**
 * Runs Jest on `child/<file>` with these variables (undefined: unset); its exit code, its report
 * (stderr) and its `--json` results, one entry per test. Waited for to its exit, with no time
 * limit but runChild's hang guard: a test that awaits it gives itself CHILD_TEST_TIMEOUT_MS.
 */
export async function runJest(file, env) {
  const environment = { ...process.env, NODE_OPTIONS: "--experimental-vm-modules", FORCE_COLOR: "0", ...env };
  delete environment.JEST_WORKER_ID; // the child is a Jest of its own, not one of this run's workers
  for (const [name, value] of Object.entries(environment)) if (value === undefined) delete environment[name];

  const run = await runChild(process.execPath, [JEST, "--config", CONFIG, "--json", "--watchman=false", `child/${file}$`], {
    cwd: PACKAGE,
    env: environment,
  });
  const json = JSON.parse(run.stdout || "null");
  return { status: run.status, report: run.stderr, tests: json?.testResults.flatMap((r) => r.assertionResults) ?? [] };
}
