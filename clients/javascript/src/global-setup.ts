/**
 * One stub for a whole test run, for a runner's global setup: Vitest's and Playwright's
 * `globalSetup`, Jest's `globalSetup` (with `svc-stub/global-teardown`), and Node's
 * `--test-global-setup` (Node 24+). It starts the stub (or checks the one at `SVC_STUB_URL`)
 * and hands its URL to every worker in `SVC_STUB_URL`; the teardown stops it.
 *
 * The stub reads its options from `SVC_STUB_*` variables too (`SVC_STUB_FIXTURES=flags.yaml`);
 * for more, call `startRunStub(options)` from a global setup of your own.
 */
import { runStub, URL_VARIABLE, type RunStub } from "./run.js";
import type { StartOptions } from "./process.js";

const RUN = Symbol.for("svc-stub.run");
type Holder = { [RUN]?: RunStub };

/** Starts (or checks) the run's stub and shares its URL; returns the teardown. */
export async function startRunStub(options: StartOptions = {}): Promise<() => Promise<void>> {
  const run = await runStub(options);
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
