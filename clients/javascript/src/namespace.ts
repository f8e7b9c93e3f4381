/**
 * A namespace per test, named by the stub from the test's full name, created before the test
 * with its fixtures and keys and deleted after it; a failed test's journal is written first,
 * where the run keeps its output (never among the sources).
 */
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";

import { SvcStub, type FixtureSource } from "./control.js";
import { StubError } from "./errors.js";
import { runnerPid, TOKEN_VARIABLE } from "./run.js";

/** Where failed tests' journals go, instead of the runner's output folder or the system's temporary one. */
export const JOURNAL_VARIABLE = "SVC_STUB_JOURNAL_DIR";

/** What a test may ask of its namespace. */
export interface NamespaceOptions {
  /** Fixtures served in it: a document, a file, or several (the first replaces, later ones overlay key by key). */
  fixtures?: FixtureSource | readonly FixtureSource[];
  /** Keys bound to it: requests that name no namespace but present one are served in it. */
  keys?: readonly string[];
}

/** A namespace for the test named `testName` on the stub at `stubUrl`, serving its fixtures. */
export async function openNamespace(stubUrl: string, testName: string, options: NamespaceOptions = {}): Promise<SvcStub> {
  const stub = new SvcStub(stubUrl, { controlToken: process.env[TOKEN_VARIABLE] });
  const client = await stub.createNamespace({ test: testName }, { keys: options.keys });
  const fixtures = options.fixtures === undefined ? [] : Array.isArray(options.fixtures) ? options.fixtures : [options.fixtures];
  for (const [index, source] of (fixtures as readonly FixtureSource[]).entries()) {
    await client.setFixtures(source, { merge: index > 0 });
  }
  return client;
}

/** A failed test's journal: where it was written (if it was), and the line that says so. */
export interface KeptJournal {
  path: string | undefined;
  line: string;
}

/**
 * Deletes the test's namespace; if the test failed, first writes its journal (the inspector
 * page, one HTML file) into `SVC_STUB_JOURNAL_DIR`, else `directory` (the runner's output
 * folder for the test), else this run's folder under `<tmp>/svc-stub-journal/<package name>`.
 */
export async function closeNamespace(
  client: SvcStub,
  test: { id: string; failed: boolean; directory?: string },
): Promise<KeptJournal | undefined> {
  let kept: KeptJournal | undefined;
  if (test.failed) kept = await keepJournal(client, test.id, test.directory);
  try {
    await client.deleteNamespace();
  } catch (error) {
    if (!(error instanceof StubError && error.status === 404)) throw error; // 404: the test deleted it
  }
  return kept;
}

async function keepJournal(client: SvcStub, testId: string, directory: string | undefined): Promise<KeptJournal> {
  const readable = testId.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 120) || "test";
  const unique = createHash("sha256").update(testId).digest("hex").slice(0, 8);
  try {
    const folder = directory && !process.env[JOURNAL_VARIABLE] ? directory : await journalFolder();
    const page = await client.snapshot();
    await mkdir(folder, { recursive: true });
    // another attempt of the same test (a retry, a repeat) keeps its own: never written over
    for (let attempt = 1; ; attempt++) {
      const path = join(folder, `${readable}-${unique}${attempt > 1 ? `-${attempt}` : ""}.html`);
      if (await writtenAnew(path, page)) return { path, line: `svc-stub journal of this test: ${path} (open it in a browser)` };
    }
  } catch (error) {
    return { path: undefined, line: `svc-stub journal not written: ${(error as Error).message}` };
  }
}

/** Writes `page` at `path` unless a file is there already; whether it did. */
async function writtenAnew(path: string, page: string): Promise<boolean> {
  try {
    await writeFile(path, page, { encoding: "utf8", flag: "wx" });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/** Where this run's journals go: `SVC_STUB_JOURNAL_DIR`, else this run's folder under `<tmp>/svc-stub-journal/<package name>`. */
export async function journalFolder(): Promise<string> {
  const chosen = process.env[JOURNAL_VARIABLE];
  return chosen ? resolve(chosen) : thisRunsFolder();
}

let runsFolder: Promise<string> | undefined;

/**
 * `<tmp>/svc-stub-journal/<package name>/<runner's PID>`, made when the run writes its first
 * journal: the folders of runs that have ended are removed then, so it holds the last run's.
 */
function thisRunsFolder(): Promise<string> {
  runsFolder ??= (async () => {
    const project = join(tmpdir(), "svc-stub-journal", (await packageName()).replace(/[\\/]/g, "+"));
    const run = String(runnerPid());
    await mkdir(join(project, run), { recursive: true });
    for (const entry of await readdir(project)) {
      if (/^\d+$/.test(entry) && entry !== run && !alive(Number(entry))) await rm(join(project, entry), { recursive: true, force: true });
    }
    return join(project, run);
  })();
  return runsFolder;
}

/** The name in the nearest package.json above the working directory, else the directory's name. */
async function packageName(): Promise<string> {
  for (let folder = process.cwd(); ; folder = dirname(folder)) {
    try {
      const { name } = JSON.parse(await readFile(join(folder, "package.json"), "utf8")) as { name?: unknown };
      if (typeof name === "string" && name) return name;
    } catch {
      // none here, or not JSON: look further up
    }
    if (dirname(folder) === folder) return basename(process.cwd()) || "project";
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
