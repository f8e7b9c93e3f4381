/**
 * What the run's tests exercised: the stub's coverage report for the whole run, typed, a gate for
 * CI, and the run's end (the global setup's teardown) printing the stub's summary and keeping the
 * full report where the run's journals go.
 *
 *     import { assertCovers } from "svc-stub";
 *     test("the suite meets the runtime profile", () => assertCovers("runtime", { atLeast: 80 }));
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

import { SvcStub } from "./control.js";
import { assertReportCovers, type CoverageReport, type CoversOptions } from "./coverage-report.js";
import { StubArgumentError } from "./errors.js";
import { journalFolder } from "./namespace.js";
import { TOKEN_VARIABLE, URL_VARIABLE } from "./run.js";

/** The file the run's end writes the full report to, in the journals' folder. */
export const COVERAGE_FILE = "coverage.json";
/** `off`: the run's end neither prints nor writes the coverage. */
export const COVERAGE_VARIABLE = "SVC_STUB_COVERAGE";

/** Where the report is read: a control client, a stub's URL; default `SVC_STUB_URL`. */
export interface CoverageOptions {
  stub?: SvcStub | string;
  /** One profile, rather than every one the stub has. */
  profile?: string;
}

/** The whole run's coverage (`GET /_test/coverage?scope=run`), every namespace's counts together. */
export async function coverage(options: CoverageOptions = {}): Promise<CoverageReport> {
  return controlOf(options.stub).coverage({ scope: "run", profile: options.profile });
}

/**
 * A gate: rejects with an AssertionError unless the run so far met at least `atLeast` percent
 * (default 100) of `profile`'s cells, the message naming every gap.
 */
export async function assertCovers(profile: string, options: CoversOptions & CoverageOptions = {}): Promise<void> {
  assertReportCovers(await coverage({ stub: options.stub, profile }), profile, options);
}

function controlOf(stub: SvcStub | string | undefined): SvcStub {
  if (stub instanceof SvcStub) return stub;
  const url = stub ?? process.env[URL_VARIABLE];
  if (!url) throw new StubArgumentError(`coverage(): no stub to ask; pass { stub: svcStub } (the test's fixture) or its URL, or set ${URL_VARIABLE}`);
  return new SvcStub(url, { controlToken: process.env[TOKEN_VARIABLE] });
}

/**
 * The run's end: prints the report's `summary` (the stub's lines, as they are) and writes the full
 * report as `coverage.json` where the run's journals go. Never fails the run: a stub that cannot
 * say is one line instead.
 */
export async function reportRunCoverage(url: string, print: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Promise<string | undefined> {
  if (process.env[COVERAGE_VARIABLE] === "off") return undefined;
  try {
    const report = await coverage({ stub: url });
    const folder = await journalFolder();
    await mkdir(folder, { recursive: true });
    const path = join(folder, COVERAGE_FILE);
    await writeFile(path, `${JSON.stringify(report, null, 2)}\n`, "utf8");
    print(`\n${report.summary.join("\n")}\nsvc-stub coverage report: ${path}`);
    return path;
  } catch (error) {
    print(`svc-stub coverage not reported: ${(error as Error).message.split("\n")[0]}`);
    return undefined;
  }
}

export { assertReportCovers, percentMet } from "./coverage-report.js";
export type { CoverageCell, CoverageFlags, CoverageGap, CoverageProfile, CoverageReport, CoverageScope, CoversOptions } from "./coverage-report.js";
