/**
 * The coverage report's types, read as the stub sends them (`GET /_test/coverage`), and the
 * gate's words about it (the run's end prints the stub's own `summary`). No I/O here:
 * `coverage.ts` fetches and writes.
 */
import { AssertionError } from "node:assert";

import { eachAnswered, type Shape } from "./answers.js";
import { StubArgumentError } from "./errors.js";

/** `namespace`: one namespace's count (kept across `reset`); `run`: every namespace's, deleted ones' too. */
export type CoverageScope = "namespace" | "run";

/** One route against one outcome it was served (`"ok"`, `"401"`, `"fault 500"`, `"rate limited"`), and how often. */
export interface CoverageCell {
  route: string;
  outcome: string;
  count: number;
}

/** A cell a profile expects that nothing met: any of `expected` would have, and `says` puts it in words. */
export interface CoverageGap {
  route: string;
  expected: string[];
  says: string;
}

/** One profile (what a kind of client is expected to meet) held against the cells met. */
export interface CoverageProfile {
  name: string;
  description: string;
  met: number;
  of: number;
  gaps: CoverageGap[];
}

/** The fixture flags requests were answered (`read`), those never read (`neverRead`), and how many the fixtures hold (`of`). */
export interface CoverageFlags {
  read: string[];
  neverRead: string[];
  of: number;
}

/** `GET /_test/coverage`'s answer. */
export interface CoverageReport {
  scope: CoverageScope;
  cells: CoverageCell[];
  profiles: Record<string, CoverageProfile>;
  flags: CoverageFlags;
  /** The coverage short, in the stub's words: the lines a run's end prints, as they are. */
  summary: string[];
}

/** The fields this helper reads, checked as the answer comes in. */
export const COVERAGE: Shape = {
  scope: "string",
  cells: "array",
  profiles: "object",
  flags: { read: "array", neverRead: "array", of: "number" },
  summary: "array",
};

const CALL = "GET /_test/coverage";

/** The report, its cells and profiles checked field by field (a StubAnswerError naming the one that is not). */
export function checkedCoverage(report: CoverageReport): CoverageReport {
  eachAnswered(report.cells, { route: "string", outcome: "string", count: "number" }, CALL, "cells");
  const profiles = eachAnswered<CoverageProfile>(
    Object.values(report.profiles),
    { name: "string", met: "number", of: "number", gaps: "array" },
    CALL,
    "profiles",
  );
  for (const profile of profiles) eachAnswered(profile.gaps, { route: "string", expected: "array", says: "string" }, CALL, `profiles.${profile.name}.gaps`);
  return report;
}

/** A profile's share of its cells met, in percent (100 for a profile of none). */
export function percentMet(profile: CoverageProfile): number {
  return profile.of === 0 ? 100 : (100 * profile.met) / profile.of;
}

/** What a gate asks: a share of the profile's cells (`atLeast`, in percent; default 100: every one). */
export interface CoversOptions {
  atLeast?: number;
}

/**
 * Throws an AssertionError (the runners' own failure) unless `report` meets at least `atLeast`
 * percent of `profile`'s cells; its message names the share and every gap.
 */
export function assertReportCovers(report: CoverageReport, profile: string, options: CoversOptions = {}): void {
  const atLeast = options.atLeast ?? 100;
  if (!(atLeast >= 0 && atLeast <= 100)) throw new StubArgumentError(`assertCovers(): atLeast is a percentage from 0 to 100, not ${atLeast}`);
  const held = report.profiles[profile];
  if (held === undefined) {
    throw new StubArgumentError(`assertCovers(): no profile ${JSON.stringify(profile)} in the report (it has ${Object.keys(report.profiles).join(", ") || "none"})`);
  }
  const percent = percentMet(held);
  if (percent >= atLeast) return;
  const gaps = held.gaps.map((gap) => `  - ${gap.says}`).join("\n");
  throw new AssertionError({
    message: `svc-stub coverage: ${profile} ${held.met} of ${held.of} cells met (${percent.toFixed(1)} %), under ${atLeast} %; gaps:\n${gaps}`,
    actual: percent,
    expected: atLeast,
    operator: ">=",
  });
}
