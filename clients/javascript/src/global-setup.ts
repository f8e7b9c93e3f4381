/**
 * One stub for a whole test run, for a runner's global setup: Vitest's and Playwright's
 * `globalSetup`, Jest's `globalSetup` (with `svc-stub/global-teardown`), and Node's
 * `--test-global-setup` (Node 24+). It has `svc-stub shared` start the run's stub (or checks the
 * one at `SVC_STUB_URL`), hands its URL to every worker in `SVC_STUB_URL`, and the teardown
 * stops it (the runner's end would anyway, a killed runner's too).
 *
 * The stub reads its options from `SVC_STUB_*` variables too (`SVC_STUB_FIXTURES=flags.yaml`);
 * for more, call `startRunStub(options)` from a global setup of your own.
 */
import { runStub, URL_VARIABLE, type RunStub, type StartOptions } from "./run.js";

const RUN = Symbol.for("svc-stub.run");
type Holder = { [RUN]?: RunStub };

/** Starts (or checks) the run's stub and shares its URL; returns the teardown. */
export async function startRunStub(options: StartOptions = {}): Promise<() => Promise<void>> {
  // the global setup runs in the runner's main process: its PID keys the run, its end ends the stub
  const run = await runStub({ owner: process.pid, ...options });
  (globalThis as Holder)[RUN] = run;
  process.env[URL_VARIABLE] = run.url;
  return stopRunStub;
}

/** Stops the run's stub, if the global setup started it. */
export async function stopRunStub(): Promise<void> {
  const run = (globalThis as Holder)[RUN];
  delete (globalThis as Holder)[RUN];
  if (run?.started) {
    delete process.env[URL_VARIABLE];
    await run.stop();
  }
}

/** Vitest, Playwright and Jest call the default export (with arguments of their own, unused). */
export default function svcStubGlobalSetup(): Promise<() => Promise<void>> {
  return startRunStub();
}

/** Vitest's named form, and Node's `--test-global-setup`. */
export { svcStubGlobalSetup as setup, stopRunStub as teardown };
export { svcStubGlobalSetup as globalSetup, stopRunStub as globalTeardown };
