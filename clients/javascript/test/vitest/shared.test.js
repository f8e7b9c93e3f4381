// One stub for a Vitest run, shared by its workers and gone after it: with svc-stub's global setup
// (stopped by its teardown) and without it (started by the first worker that needs it, stopped
// when Vitest exits). Proven on child Vitest runs of two files, each saying which stub it had.
import { SvcStub } from "svc-stub";
import { expect, test } from "svc-stub/vitest";

import { CHILD_TEST_TIMEOUT_MS, runChild, until } from "../child-run.js";

const VITEST = new URL("../../node_modules/vitest/vitest.mjs", import.meta.url).pathname;
const CONFIG = new URL("runs/shared.config.js", import.meta.url).pathname;

/** A child Vitest run (not one of this run's workers, and with no stub of this run's); the stubs its files said they had. */
async function vitestRun(env) {
  const run = await runChild(process.execPath, [VITEST, "run", "--config", CONFIG], {
    env: { ...process.env, SVC_STUB_URL: undefined, VITEST: undefined, VITEST_WORKER_ID: undefined, VITEST_POOL_ID: undefined, NODE_ENV: undefined, ...env },
  });
  expect(run.status, run.output).toBe(0);
  const said = [...run.output.matchAll(/stub at (\S+) in pid (\d+)/g)];
  expect(said, run.output).toHaveLength(2);
  return { urls: said.map((m) => m[1]), pids: said.map((m) => m[2]) };
}

async function answers(url) {
  return new SvcStub(url).health().catch(() => false);
}

test("without a global setup, worker processes share the stub the first of them had started, which goes with Vitest", async () => {
  const { urls, pids } = await vitestRun({});
  expect(pids[1]).not.toBe(pids[0]); // two processes, each asking svc-stub shared
  expect(urls[1]).toBe(urls[0]);
  await until(async () => !(await answers(urls[0])), `the stub at ${urls[0]} to stop once Vitest has exited`);
}, CHILD_TEST_TIMEOUT_MS);

test("with the global setup, every worker has its stub, and its teardown has stopped it when Vitest exits", async () => {
  const { urls } = await vitestRun({ WITH_GLOBAL_SETUP: "1" });
  expect(urls[1]).toBe(urls[0]);
  expect(await answers(urls[0])).toBe(false); // the teardown waited for it to stop
}, CHILD_TEST_TIMEOUT_MS);
