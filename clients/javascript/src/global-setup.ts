/**
 * One stub for a whole test run, for a runner's global setup: Vitest's and Playwright's
 * `globalSetup`, Jest's `globalSetup` (with `svc-stub/global-teardown`), and Node's
 * `--test-global-setup` (Node 24+). It has `svc-stub shared` start the run's stub (or checks the
 * one at `SVC_STUB_URL`), hands its URL to every worker (Vitest's through `project.provide`, read
 * with `inject("svcStubUrl")`; the others' in `SVC_STUB_URL`), and the teardown stops it (the
 * runner's end would anyway, a killed runner's too).
 *
 * The stub reads its options from `SVC_STUB_*` variables too (`SVC_STUB_FIXTURES=flags.yaml`);
 * for more, call `startRunStub(options)` from a global setup of your own.
 */
import { reportRunCoverage } from "./coverage.js";
import { SvcStubError } from "./errors.js";
import { runStub, URL_VARIABLE, type RunStub, type StartOptions } from "./run.js";

const RUN = Symbol.for("svc-stub.run");
const SET = Symbol.for("svc-stub.run.variable-set");
type Holder = { [RUN]?: RunStub; [SET]?: boolean };

/** Vitest's global setup argument (its `TestProject`): what it provides, its workers inject. */
interface Provider {
  provide(key: "svcStubUrl", value: string): void;
}

/**
 * Starts (or checks) the run's stub and shares its URL; returns the teardown. `project`: Vitest's
 * (the argument its global setup gets), which provides the URL to its workers; without it (Jest,
 * Playwright, Node), the URL goes to the workers in `SVC_STUB_URL`.
 */
export async function startRunStub(options: StartOptions = {}, project?: unknown): Promise<() => Promise<void>> {
  // the global setup runs in the runner's main process: its PID keys the run, its end ends the stub
  let run: RunStub;
  try {
    run = await runStub({ owner: process.pid, ...options });
  } catch (error) {
    throw saidFirst(error, isProvider(project));
  }
  (globalThis as Holder)[RUN] = run;
  if (isProvider(project)) project.provide("svcStubUrl", run.url);
  else process.env[URL_VARIABLE] = run.url;
  (globalThis as Holder)[SET] = !isProvider(project) && run.started;
  return stopRunStub;
}

function isProvider(value: unknown): value is Provider {
  return typeof (value as Partial<Provider> | undefined)?.provide === "function";
}

/**
 * A stub that cannot be had stops the run with its one line: the error thrown carries no frames
 * of this package (the line says everything there is to do), and under Vitest, which prints a
 * global setup's error after words of its own ("No test files found"), it is written out first.
 */
function saidFirst(error: unknown, vitest: boolean): unknown {
  if (error instanceof SvcStubError) {
    if (vitest) process.stderr.write(`\n${error.message}\n\n`);
    error.stack = `${error.name}: ${error.message}`;
  }
  return error;
}

/**
 * The run's end: prints the run's coverage summary, the stub's lines (`svc-stub coverage: runtime
 * 9 of 15 cells met; gaps: ...`), and writes the full report, `coverage.json`, where the run's
 * journals go, if the global setup started the run's stub (not `SVC_STUB_URL`'s); then stops it.
 */
export async function stopRunStub(): Promise<void> {
  const run = (globalThis as Holder)[RUN];
  delete (globalThis as Holder)[RUN];
  if ((globalThis as Holder)[SET]) delete process.env[URL_VARIABLE];
  delete (globalThis as Holder)[SET];
  // the run's end: what its tests exercised, on the run's own stub (one at SVC_STUB_URL serves
  // other runs too: `svc-stub coverage --url` tells its coverage)
  if (run?.started) await reportRunCoverage(run.url);
  if (run?.started) await run.stop();
}

/** Vitest, Playwright and Jest call the default export: Vitest with its project (whose `provide` is used), the others with arguments of their own, unused. */
export default function svcStubGlobalSetup(project?: unknown): Promise<() => Promise<void>> {
  return startRunStub({}, project);
}

/** Vitest's named form, and Node's `--test-global-setup`. */
export { svcStubGlobalSetup as setup, stopRunStub as teardown };
export { svcStubGlobalSetup as globalSetup, stopRunStub as globalTeardown };
