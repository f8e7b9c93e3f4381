/**
 * A stub as a child process: `svc-stub --port 0`, ready when it prints its ready line, stopped
 * by PID. Its log goes to a file of its own, never into the test output; a failed start quotes
 * the last line of it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

import { StubStartError } from "./errors.js";

/** The first line a stub prints, once its port is bound; the rest of it is the stub's URL. */
export const READY_PREFIX = "svc-stub listening on ";
/** Where a test run finds `svc-stub` when it is not on PATH. */
export const BIN_VARIABLE = "SVC_STUB_BIN";
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;
const INSTALL = "pip install svc-stub";

export interface StartOptions {
  /** Fixture files or directories (`--fixtures`), later ones winning per key. */
  fixtures?: readonly string[];
  /** Any other command-line options of `svc-stub` (`["--strict-keys"]`). */
  args?: readonly string[];
  /** The command to run; default `SVC_STUB_BIN`, else `svc-stub` from PATH. */
  bin?: string;
}

/** A running stub this process started. */
export class StubProcess {
  #stopped: Promise<number | null> | undefined;
  readonly #child: ChildProcess;
  readonly #logDirectory: string;
  readonly #forget: () => void;

  private constructor(
    /** Its base URL, from its ready line. */
    readonly url: string,
    child: ChildProcess,
    /** Its log (stderr), kept until it is stopped. */
    readonly logPath: string,
    logDirectory: string,
  ) {
    this.#child = child;
    this.#logDirectory = logDirectory;
    // A runner that exits without its teardown (a crash, process.exit) still stops the stub,
    // and leaves no log directory behind.
    const kill = () => {
      if (this.#child.exitCode === null) this.#child.kill("SIGKILL");
      rmSync(logDirectory, { recursive: true, force: true });
    };
    process.on("exit", kill);
    this.#forget = () => process.off("exit", kill);
  }

  get pid(): number {
    return this.#child.pid ?? -1;
  }

  /** Starts `svc-stub --port 0` and waits for its ready line. */
  static async start(options: StartOptions = {}): Promise<StubProcess> {
    const bin = options.bin ?? process.env[BIN_VARIABLE] ?? "svc-stub";
    const fixtures = (options.fixtures ?? []).flatMap((path) => ["--fixtures", path]);
    // --stop-with: the stub ends with this process, even one killed outright
    const args = ["--host", "127.0.0.1", "--port", "0", "--stop-with", String(process.pid), ...fixtures, ...(options.args ?? [])];
    const logDirectory = mkdtempSync(join(tmpdir(), "svc-stub-"));
    const logPath = join(logDirectory, "stub.log");
    const log = openSync(logPath, "w");
    let child: ChildProcess;
    try {
      child = spawn(bin, args, { stdio: ["ignore", "pipe", log] });
    } finally {
      closeSync(log); // the child has its own copy
    }
    try {
      const url = await readyUrl(child, bin, logPath);
      child.unref(); // the test run's end, not the stub, decides when this process exits
      child.stdout?.resume(); // it says nothing more; never let a full pipe block it
      (child.stdout as { unref?: () => void } | null)?.unref?.();
      return new StubProcess(url, child, logPath, logDirectory);
    } catch (error) {
      child.kill("SIGKILL");
      rmSync(logDirectory, { recursive: true, force: true });
      throw error;
    }
  }

  /** SIGTERM, then SIGKILL if it has not exited within 5 s; its exit code. Idempotent. */
  stop(): Promise<number | null> {
    this.#stopped ??= this.#stop();
    return this.#stopped;
  }

  async #stop(): Promise<number | null> {
    const child = this.#child;
    const exited = new Promise<number | null>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
      else child.once("exit", (code) => resolve(code));
    });
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
      this.#forget();
      rmSync(this.#logDirectory, { recursive: true, force: true });
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

function readyUrl(child: ChildProcess, bin: string, logPath: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const fail = (reason: string) => {
      clearTimeout(timer);
      lines.close();
      reject(new StubStartError(reason));
    };
    const timer = setTimeout(
      () => fail(`svc-stub did not start within ${START_TIMEOUT_MS / 1000} s: ${lastLine(logPath)}`),
      START_TIMEOUT_MS,
    );
    child.once("error", (error: NodeJS.ErrnoException) => {
      fail(
        error.code === "ENOENT"
          ? `svc-stub: no '${bin}' to run; install it (${INSTALL}) or set ${BIN_VARIABLE} to its path`
          : `svc-stub: could not run '${bin}': ${error.message}`,
      );
    });
    child.once("exit", (code, signal) => {
      const how = code !== null ? `exit code ${code}` : `signal ${signal}`;
      fail(`svc-stub did not start (${how}): ${lastLine(logPath) || "it printed nothing"}`);
    });
    lines.once("line", (line) => {
      if (!line.startsWith(READY_PREFIX)) return fail(`svc-stub did not start: it printed ${JSON.stringify(line)}`);
      clearTimeout(timer);
      child.removeAllListeners("exit");
      child.removeAllListeners("error");
      child.on("error", () => {}); // a failed kill later is not this run's failure
      lines.close();
      resolve(line.slice(READY_PREFIX.length).trim());
    });
  });
}

/** The last thing the stub logged: why it gave up, as it said it. */
function lastLine(logPath: string): string {
  try {
    const lines = readFileSync(logPath, "utf8").split("\n").map((l) => l.trim()).filter(Boolean);
    return lines.at(-1) ?? "";
  } catch {
    return "";
  }
}
