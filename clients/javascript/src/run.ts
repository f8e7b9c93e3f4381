/**
 * The stub a test run uses: the one at `SVC_STUB_URL` (checked once), or one this process
 * starts. A runner's global setup starts it and hands its URL to the workers in
 * `SVC_STUB_URL`, so every worker (and every test, each in a namespace of its own) shares it.
 */
import { StubError, StubUnreachable } from "./errors.js";
import { StubProcess, type StartOptions } from "./process.js";
import { SvcStub } from "./control.js";
import { isRecentEnough, VERSION } from "./version.js";

export const URL_VARIABLE = "SVC_STUB_URL";
export const TOKEN_VARIABLE = "SVC_STUB_CONTROL_TOKEN";

/** A stub for the run, and how to let it go (stop it, if this process started it). */
export interface RunStub {
  url: string;
  /** Whether this process started it (and so stops it). */
  started: boolean;
  stop(): Promise<void>;
}

/**
 * `SVC_STUB_URL` if it is set (the stub there checked), else a stub started now with `options`.
 */
export async function runStub(options: StartOptions = {}): Promise<RunStub> {
  const running = process.env[URL_VARIABLE];
  if (running) {
    await checkStub(running, `${URL_VARIABLE}=${running}`);
    return { url: running.replace(/\/+$/, ""), started: false, stop: async () => {} };
  }
  const stub = await StubProcess.start(options);
  try {
    await checkStub(stub.url, stub.url);
  } catch (error) {
    await stub.stop();
    throw error;
  }
  return { url: stub.url, started: true, stop: async () => void (await stub.stop()) };
}

/**
 * The stub at `url` answers as svc-stub, and is not older than this helper; otherwise one line
 * that says what to do. `named` is how the message names the URL.
 */
export async function checkStub(url: string, named: string = url): Promise<void> {
  const control = new SvcStub(url, { controlToken: process.env[TOKEN_VARIABLE] });
  let version: unknown;
  try {
    if (!(await control.health())) throw new Error("its /health does not say ok");
    version = await control.version();
  } catch (error) {
    const advice = named.startsWith(URL_VARIABLE)
      ? `start one there (svc-stub --port PORT) or unset ${URL_VARIABLE} to have one started`
      : "its log says why";
    const problem =
      error instanceof StubUnreachable
        ? error.reason
        : error instanceof StubError
          ? `${error.status} from ${error.status === 404 ? "/health" : "its control plane"}: ${error.detail || error.code}`
          : String((error as Error).message ?? error);
    throw new StubUnreachable(
      `svc-stub: ${named} does not answer as svc-stub (${problem.split("\n")[0]}); ${advice}`,
      problem,
    );
  }
  if (typeof version !== "string" || !isRecentEnough(version)) {
    throw new StubUnreachable(
      `svc-stub: ${named} is svc-stub ${String(version)}, older than this helper (${VERSION}); upgrade it (pip install -U svc-stub)`,
    );
  }
}
