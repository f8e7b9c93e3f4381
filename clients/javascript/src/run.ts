/**
 * The stub a test run uses: the one at `SVC_STUB_URL` (checked once), or the run's own, which
 * `svc-stub shared` starts or attaches to. Sharing is the command's to decide (the lock, the
 * owner process, `--stop-with`, the ready line, the version check); this file only asks it.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { isMainThread } from "node:worker_threads";

import { SvcStub } from "./control.js";
import { StubAnswerError, StubError, StubStartError, StubUnreachable } from "./errors.js";
import { isRecentEnough, VERSION } from "./version.js";

export const URL_VARIABLE = "SVC_STUB_URL";
export const TOKEN_VARIABLE = "SVC_STUB_CONTROL_TOKEN";
/** Where a test run finds `svc-stub` when it is not on PATH. */
export const BIN_VARIABLE = "SVC_STUB_BIN";
/** What `svc-stub shared` prints, then the stub's URL. */
export const READY_PREFIX = "svc-stub listening on ";

export interface StartOptions {
  /** Fixture files or directories (`--fixtures`), later ones winning per key. */
  fixtures?: readonly string[];
  /** Any other options of `svc-stub` (`["--strict-keys"]`). */
  args?: readonly string[];
  /** The command to run; default `SVC_STUB_BIN`, else `svc-stub` from PATH. */
  bin?: string;
  /** The process whose PID keys the run and whose end stops its stub; default the test runner's. */
  owner?: number;
}

/** A stub for the run, and how to let it go. */
export interface RunStub {
  url: string;
  /** Whether it is the run's own (started or attached to by `svc-stub shared`), not `SVC_STUB_URL`'s. */
  started: boolean;
  /** Stops the run's own stub now (`svc-stub shared --stop`); the owner's end stops it anyway. */
  stop(): Promise<void>;
}

/** `SVC_STUB_URL` if it is set (the stub there checked), else the run's own stub. */
export async function runStub(options: StartOptions = {}): Promise<RunStub> {
  const running = process.env[URL_VARIABLE];
  if (running) {
    await checkStub(running);
    return { url: running.replace(/\/+$/, ""), started: false, stop: async () => {} };
  }
  const stubOptions = [...(options.fixtures ?? []).flatMap((path) => ["--fixtures", path]), ...(options.args ?? [])];
  const shared = (...own: string[]) => ["shared", "--owner", String(options.owner ?? runnerPid()), ...own, "--", ...stubOptions];
  const said = await runSvcStub(options.bin, shared("--require", VERSION));
  if (!said.startsWith(READY_PREFIX)) throw new StubStartError(`svc-stub shared printed ${JSON.stringify(said)}, not its ready line`);
  return { url: said.slice(READY_PREFIX.length), started: true, stop: async () => void (await runSvcStub(options.bin, shared("--stop"))) };
}

/**
 * The test runner's main process: this one, unless this is a worker process of it (forked, so
 * with an IPC channel to it: Vitest's forks, Jest's and Playwright's workers; or a file's process
 * under `node --test`), whose parent it then is. A worker thread is in the runner's own process.
 */
export function runnerPid(): number {
  const forked = isMainThread && (process as { channel?: unknown }).channel !== undefined;
  return forked || process.env.NODE_TEST_CONTEXT !== undefined ? process.ppid : process.pid;
}

/** Runs `svc-stub ARGS` to its end: what it printed, or its one line of error as a StubStartError. */
function runSvcStub(bin: string | undefined, args: string[]): Promise<string> {
  const fromVariable = process.env[BIN_VARIABLE] || undefined;
  const command = bin ?? fromVariable ?? "svc-stub";
  return new Promise((resolve, reject) => {
    execFile(command, args, { encoding: "utf8" }, (error, stdout, stderr) => {
      if (error === null) return resolve(stdout.trim());
      const said = stderr.trim().split("\n").at(-1);
      const tried = bin ?? (fromVariable && `${BIN_VARIABLE}=${fromVariable}`);
      if (error.code === "ENOENT") reject(new StubStartError(noCommand(tried)));
      else if (typeof error.code === "string") reject(new StubStartError(`svc-stub: could not run ${command}: ${error.message}`));
      else reject(new StubStartError(said || `svc-stub: '${command} ${args[0]}' ended (exit code ${error.code}) without a word`));
    });
  });
}

/** No `svc-stub` to run: how to get one, on this machine. */
function noCommand(tried: string | undefined): string {
  const why = tried === undefined ? `${BIN_VARIABLE} is not set and none is on PATH` : `there is none at ${tried}`;
  return (
    `svc-stub: no svc-stub command (${why}); install it from its clone (python3 -m venv .venv && .venv/bin/pip install ${clone()}) ` +
    `and set ${BIN_VARIABLE}=$PWD/.venv/bin/svc-stub, or ${URL_VARIABLE} to a running stub`
  );
}

/** The clone of svc-stub this package is part of (it is its clients/javascript), else a placeholder. */
function clone(): string {
  const root = new URL("../../../", import.meta.url); // from dist/: the package, clients/, the clone
  try {
    const pyproject = readFileSync(new URL("pyproject.toml", root), "utf8");
    if (/^name\s*=\s*"svc-stub"\s*$/m.test(pyproject)) return fileURLToPath(root).replace(/\/$/, "");
  } catch {
    // no pyproject.toml there: an installed package
  }
  return "path/to/svc-stub";
}

/** The stub at `SVC_STUB_URL` answers as svc-stub, and is not older than this helper; otherwise one line that says what to do. */
export async function checkStub(url: string): Promise<void> {
  const named = `${URL_VARIABLE}=${url}`;
  const control = new SvcStub(url, { controlToken: process.env[TOKEN_VARIABLE] });
  let version: string;
  try {
    if (!(await control.health())) throw new StubAnswerError("its /health does not say ok");
    version = await control.version();
  } catch (error) {
    const problem =
      error instanceof StubUnreachable
        ? error.reason
        : error instanceof StubError
          ? `${error.status} from ${error.status === 404 ? "/health" : "its control plane"}: ${error.detail || error.code}`
          : String((error as Error).message ?? error);
    throw new StubUnreachable(
      `svc-stub: ${named} does not answer as svc-stub (${problem.split("\n")[0]}); ` +
        `start one there (svc-stub --port PORT) or unset ${URL_VARIABLE} to have one started`,
      problem,
      { cause: error },
    );
  }
  if (!isRecentEnough(version)) {
    throw new StubUnreachable(
      `svc-stub: ${named} is svc-stub ${version}, older than this helper (${VERSION}); ` +
        `start a newer one there (from its clone: .venv/bin/pip install --upgrade ${clone()})`,
    );
  }
}
