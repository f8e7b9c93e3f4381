/**
 * A namespace per test: named after the test, created before it with the test's own fixtures
 * and keys, deleted after it; when the test failed, its journal is written first and named.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";

import { SvcStub, type FixtureSource } from "./control.js";
import { StubError } from "./errors.js";
import { TOKEN_VARIABLE } from "./run.js";

/** Where failed tests' journals go (default `svc-stub-journal`, under the working directory). */
export const JOURNAL_VARIABLE = "SVC_STUB_JOURNAL_DIR";
const JOURNAL_DEFAULT = "svc-stub-journal";

/** What a test may ask of its namespace. */
export interface NamespaceOptions {
  /** Fixtures served in it: a document, a file, or several (the first replaces, later ones overlay key by key). */
  fixtures?: FixtureSource | readonly FixtureSource[];
  /** Keys bound to it: requests that name no namespace but present one are served in it. */
  keys?: readonly string[];
}

/** Readable in `/_test/namespaces`, unique across workers and runs: at most 64 characters. */
export function namespaceName(testName: string): string {
  const readable = testName.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[-._]+|[-._]+$/g, "").slice(0, 55);
  return `${readable.replace(/[-._]+$/, "") || "test"}-${randomBytes(4).toString("hex")}`;
}

/** A test's namespace on the stub at `stubUrl`, ready with its fixtures and keys. */
export async function openNamespace(stubUrl: string, testName: string, options: NamespaceOptions = {}): Promise<SvcStub> {
  const stub = new SvcStub(stubUrl, { controlToken: process.env[TOKEN_VARIABLE] });
  const client = await stub.createNamespace(namespaceName(testName), { keys: options.keys });
  const fixtures = options.fixtures === undefined ? [] : isList(options.fixtures) ? options.fixtures : [options.fixtures];
  for (const [index, source] of fixtures.entries()) {
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
 * Deletes the test's namespace; if the test failed, writes its journal (the inspector page, one
 * HTML file) first and says where.
 */
export async function closeNamespace(client: SvcStub, test: { id: string; failed: boolean }): Promise<KeptJournal | undefined> {
  let kept: KeptJournal | undefined;
  if (test.failed) kept = await keepJournal(client, test.id);
  try {
    await client.deleteNamespace();
  } catch (error) {
    if (!(error instanceof StubError && error.status === 404)) throw error; // 404: the test deleted it
  }
  return kept;
}

async function keepJournal(client: SvcStub, testId: string): Promise<KeptJournal> {
  const readable = testId.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 120) || "test";
  const unique = createHash("sha256").update(testId).digest("hex").slice(0, 8);
  const directory = resolve(process.env[JOURNAL_VARIABLE] || JOURNAL_DEFAULT);
  let path = join(directory, `${readable}-${unique}.html`);
  try {
    const page = await client.snapshot();
    await mkdir(directory, { recursive: true });
    // another attempt of the same test (a retry, a repeat) keeps its own: never written over
    for (let attempt = 2; !(await writtenAnew(path, page)); attempt++) {
      path = join(directory, `${readable}-${unique}-${attempt}.html`);
    }
  } catch (error) {
    return { path: undefined, line: `svc-stub journal not written: ${(error as Error).message}` };
  }
  return { path, line: `svc-stub journal of this test: ${path} (open it in a browser)` };
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

function isList(fixtures: FixtureSource | readonly FixtureSource[]): fixtures is readonly FixtureSource[] {
  return Array.isArray(fixtures);
}
