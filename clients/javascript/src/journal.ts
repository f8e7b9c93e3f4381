/**
 * What the stub recorded, as it sends it (`/_test/events`, `/_test/requests`), and the checks a
 * test makes of it, each failing with what was recorded instead.
 */
import { AssertionError } from "node:assert";

import type { FaultMode } from "./vocabulary.js";

/** Any JSON object, as a client sent it. */
export type JsonObject = { [member: string]: unknown };

/** Everything clients sent to be kept (`GET /_test/events`). */
export interface Recorded {
  /** Items of vendor `/batch` bodies. */
  events: JsonObject[];
  /** Events of `/v1/capture` bodies: exposures, signals, events. */
  svcEvents: JsonObject[];
  /** `/v1/targets/register` bodies. */
  targets: JsonObject[];
  /** How many of each were dropped past the stub's bound. */
  dropped: { events: number; svcEvents: number; targets: number };
}

/** The fault that fired on a request, and where it came from. */
export interface FaultRecord {
  mode: FaultMode | "none";
  source: "header" | "query" | "armed" | "rate-limit";
  armedId?: number;
  step?: number;
}

/** One request as the journal lists it (`GET /_test/requests`). */
export interface RecordedRequest {
  seq: number;
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  /** The route's name; `preflight` for a browser's preflight; null for an unknown path. */
  route: string | null;
  /** null when no HTTP answer was given (`reset`, `hang`, a client that left). */
  status: number | null;
  clientGone: boolean;
  fault: FaultRecord | null;
  /** ms since the stub started, on one clock for every request. */
  arrivedMs: number;
  durationMs: number;
  /** Why the service would refuse the key the request used, when the stub served it anyway. */
  warning: string | null;
  retryAfter: number | null;
  /** The headers the client sent, by lower-case name, secrets redacted. */
  headers: Record<string, string>;
  upstream: { status: number | null; durationMs: number } | null;
  bodyBytes: number | null;
  answerBytes: number | null;
  unmatched: JsonObject | null;
}

/** A body as sent: text when it is UTF-8, else base64. */
export type RecordedBody = { text: string; bytes: number } | { base64: string; bytes: number } | null;

/** One request in full (`GET /_test/requests/{seq}`): its body, the answer, a curl line. */
export interface RequestInFull extends RecordedRequest {
  body: RecordedBody;
  answer: { status: number; headers: Record<string, string>; body: RecordedBody } | null;
  curl: string;
}

/** The exposures among the events `/v1/capture` kept. */
export function exposuresIn(recorded: Pick<Recorded, "svcEvents">): JsonObject[] {
  return recorded.svcEvents.filter((event) => event.type === "exposure");
}

export function findExposure(
  exposures: JsonObject[],
  flagKey: string,
  targetingKey: string,
  variant: string | undefined,
): JsonObject {
  const found = exposures.find(
    (e) =>
      e.flagKey === flagKey &&
      e.targetingKey === targetingKey &&
      (variant === undefined || e.variant === variant),
  );
  if (found !== undefined) return found;
  const wanted = `exposure of ${flagKey} for ${targetingKey}` + (variant === undefined ? "" : ` (variant ${variant})`);
  const shown = exposures.length ? JSON.stringify(exposures, null, 2) : "(none)";
  throw new AssertionError({ message: `no ${wanted}; exposures recorded:\n${shown}` });
}

export function noRequest(requests: RecordedRequest[], route: string): void {
  if (requests.length === 0) return;
  throw new AssertionError({
    message: `expected no request to ${route}, got ${requests.length}:\n${listed(requests)}`,
  });
}

export function noWarnings(requests: RecordedRequest[]): void {
  const warned = requests.filter((r) => r.warning !== null && r.warning !== undefined);
  if (warned.length === 0) return;
  const lines = warned.map((r) => `  #${r.seq} ${r.method} ${r.path}: ${r.warning}`).join("\n");
  const count = `${warned.length} request${warned.length > 1 ? "s" : ""}`;
  throw new AssertionError({ message: `${count} used a key where the service refuses it:\n${lines}` });
}

/** Between each request's arrival and the next one's, in ms. */
export function gapsMs(requests: RecordedRequest[]): number[] {
  return requests.slice(1).map((r, i) => round(r.arrivedMs - requests[i]!.arrivedMs));
}

/** What a timer may fire early by (a runtime rounds its sleeps) before a wait counts as short. */
const RETRY_AFTER_SLACK_MS = 5;

/** Each request that came back sooner after an answer than its `Retry-After` asked, in words. */
export function earlyRetries(requests: RecordedRequest[]): string[] {
  const early: string[] = [];
  requests.slice(1).forEach((after, i) => {
    const before = requests[i]!;
    if (before.retryAfter === null || before.retryAfter === undefined) return;
    const waited = after.arrivedMs - (before.arrivedMs + before.durationMs);
    if (waited + RETRY_AFTER_SLACK_MS < before.retryAfter * 1000) {
      early.push(
        `#${after.seq} came ${waited.toFixed(0)} ms after #${before.seq} was answered ` +
          `${before.status} with Retry-After: ${before.retryAfter}`,
      );
    }
  });
  return early;
}

export function noEarlyRetry(requests: RecordedRequest[], route: string): void {
  const early = earlyRetries(requests);
  if (early.length === 0) return;
  const lines = early.map((line) => `  ${line}`).join("\n");
  throw new AssertionError({ message: `retried ${route} before Retry-After allowed:\n${lines}` });
}

/** A requests list as one line each, for a failure message. */
export function listed(requests: RecordedRequest[]): string {
  if (requests.length === 0) return "  (none)";
  return requests.map((r) => `  #${r.seq} ${r.method} ${r.path} -> ${r.status ?? "no answer"}`).join("\n");
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
