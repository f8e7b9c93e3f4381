/**
 * What the stub recorded, as it sends it (`/_test/events`, `/_test/requests?bodies=true`): typed
 * data, each recorded request's body one call away. Verdicts on it are the stub's (`/_test/checks`).
 */
import { Buffer } from "node:buffer";

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

/** A body as sent: text when it is UTF-8, else base64. */
export type RecordedBody = { text: string; bytes: number } | { base64: string; bytes: number } | null;

/** One request as the journal lists it, in full (`GET /_test/requests?bodies=true`). */
export interface RecordedRequest {
  /** Its place in arrival order: the journal lists requests by it. */
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
  body: RecordedBody;
  answer: { status: number; headers: Record<string, string>; body: RecordedBody } | null;
  /** A command line that sends it again (keys as placeholders). */
  curl: string;
  /** The body as sent, as text ("" when it had none). */
  text(): string;
  /** The body parsed as JSON; throws, naming the request, when it had none or it is not JSON. */
  json<T = unknown>(): T;
}

/** The journal's entries as the stub sends them, with `text()` and `json()`. */
export function requestsOf(entries: readonly object[]): RecordedRequest[] {
  return entries.map((entry) => Object.assign(Object.create(BODY_READERS) as RecordedRequest, entry));
}

// Defined, so not enumerable: methods stay out of JSON.stringify, deep equality and diffs.
const BODY_READERS = Object.defineProperties({}, {
  text: {
    value(this: RecordedRequest): string {
      const body = this.body;
      if (!body) return "";
      return "text" in body ? body.text : Buffer.from(body.base64, "base64").toString("utf8");
    },
  },
  json: {
    value(this: RecordedRequest): unknown {
      const named = `#${this.seq} ${this.method} ${this.path}`;
      if (!this.body?.bytes) throw new TypeError(`${named} sent no body to read as JSON`);
      const text = this.text();
      try {
        return JSON.parse(text);
      } catch (error) {
        throw new SyntaxError(`${named} sent a body that is not JSON (${(error as Error).message}): ${text.slice(0, 200)}`);
      }
    },
  },
});

/** The exposures among the events `/v1/capture` kept. */
export function exposuresIn(recorded: Pick<Recorded, "svcEvents">): JsonObject[] {
  return recorded.svcEvents.filter((event) => event.type === "exposure");
}

/** Between each request's arrival and the next one's, in ms. */
export function gapsMs(requests: readonly RecordedRequest[]): number[] {
  return requests.slice(1).map((r, i) => Math.round((r.arrivedMs - requests[i]!.arrivedMs) * 1000) / 1000);
}

/** A requests list as one line each, for a failure message. */
export function listed(requests: readonly RecordedRequest[]): string {
  if (requests.length === 0) return "  (none)";
  return requests.map((r) => `  #${r.seq} ${r.method} ${r.path} -> ${r.status ?? "no answer"}`).join("\n");
}
