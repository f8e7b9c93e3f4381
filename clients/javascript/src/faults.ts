/** Faults as the stub arms them: what a test writes, checked before it is sent. */
import { StubArgumentError } from "./errors.js";
import { FAULT_HEADERS, FAULT_MODES, SELECTORS, type FaultMode, type Selector } from "./vocabulary.js";

/** What a fault answers with, for the modes that take it. */
export interface FaultParameters {
  /** For `delay` and `slow_body` (default 10,000). */
  delayMs?: number;
  /** The answer's status: required for `status`, else the mode's own. */
  status?: number;
  /** The answer's body instead of the mode's: a string as it is, anything else as JSON. */
  body?: unknown;
  /** Seconds in `Retry-After` for `429`, and for `status` 429 or 503 (default 1). */
  retryAfter?: number;
}

/** One step of a sequence: a mode, `none` (let one request through), or a mode with its own parameters. */
export type SequenceStep = FaultMode | "none" | ({ mode: FaultMode | "none" } & FaultParameters);

/** Where and how often an armed fault fires. */
export interface ArmOptions extends FaultParameters {
  /** A route, a management resource or a group, or several (default `all`). */
  applyTo?: Selector | readonly Selector[];
  /** Fault only the next N matching requests, then disarm. */
  ttlRequests?: number;
  /** Fire on this share (0 to 1] of matching requests. */
  probability?: number;
  /** Seeds this fault's own generator for `probability` (default 0). */
  seed?: number;
}

/** A sequence of steps, one matching request each, then disarmed. */
export interface SequenceOptions extends Omit<ArmOptions, "ttlRequests"> {
  sequence: readonly SequenceStep[];
}

/**
 * The parameters an armed fault (or a step of its sequence) lists: only those its mode uses, so
 * any other is absent (`undefined`). An earlier stub's record lists all four, whatever the mode.
 */
export interface ArmedParameters {
  /** For `delay` and `slow_body`. */
  delayMs?: number;
  /** For the modes that make their own answer; null: the mode's own. */
  status?: number | null;
  /** Likewise; null: the mode's own. */
  body?: unknown;
  /** For `429`, and `status` 429 or 503. */
  retryAfter?: number;
}

/** A fault as armed, as the stub describes it (`ArmedFault`); a sequence's parameters are in its steps. */
export interface ArmedFault extends ArmedParameters {
  id: number;
  applyTo: Selector[];
  mode?: FaultMode;
  sequence?: Array<{ mode: FaultMode | "none" } & ArmedParameters>;
  /** What remains; null: until cleared. */
  ttlRequests: number | null;
  probability: number | null;
  seed: number | null;
  fired: number;
}

const ARM_OPTIONS = new Set(["applyTo", "ttlRequests", "probability", "seed", "delayMs", "status", "body", "retryAfter", "sequence"]);

/** The `POST /_test/fault` document; a mistake is one line naming it, before anything is sent. */
export function armingDocument(mode: FaultMode | undefined, options: ArmOptions | SequenceOptions): Record<string, unknown> {
  if (mode !== undefined) checkMode(mode);
  const unknown = Object.keys(options).filter((name) => !ARM_OPTIONS.has(name));
  if (unknown.length) {
    throw new StubArgumentError(`arm(): unknown option '${unknown[0]}'; the options are ${[...ARM_OPTIONS].join(", ")}`);
  }
  const applyTo = options.applyTo;
  for (const selector of applyTo === undefined ? [] : typeof applyTo === "string" ? [applyTo] : applyTo) {
    if (!(SELECTORS as readonly string[]).includes(selector)) {
      throw new StubArgumentError(`applyTo: unknown selector '${selector}'; the selectors are ${SELECTORS.join(", ")}`);
    }
  }
  if ("sequence" in options) {
    options.sequence.forEach((step) => {
      const stepMode = typeof step === "string" ? step : step.mode;
      if (stepMode !== "none") checkMode(stepMode);
    });
  }
  const document: Record<string, unknown> = mode === undefined ? {} : { mode };
  for (const [name, value] of Object.entries(options)) {
    if (value !== undefined) document[name] = value;
  }
  return document;
}

const HEADER_PARAMETERS = new Set(["delayMs", "status", "retryAfter"]);

function checkMode(mode: string): void {
  if (!(FAULT_MODES as readonly string[]).includes(mode)) {
    // A status guessed as a mode (arm("503")) is told where a status goes.
    const hint = /^[2-5]\d\d$/.test(String(mode)) ? `; for a ${mode}, use mode "status" with status: ${mode}` : "";
    throw new StubArgumentError(`unknown fault mode '${mode}'; the modes are ${FAULT_MODES.join(", ")}${hint}`);
  }
}

/**
 * The headers that fault one request, whatever is armed: a module function (no stub needed), its
 * headers given to the client's request (`{ headers: faultHeaders("status", { status: 503,
 * retryAfter: 2 }) }`); `faultHeaders("none")` lets that request through an armed fault.
 */
export function faultHeaders(mode: FaultMode | "none", parameters: Omit<FaultParameters, "body"> = {}): Record<string, string> {
  if (mode !== "none") checkMode(mode);
  const unknown = Object.keys(parameters).filter((name) => !HEADER_PARAMETERS.has(name));
  if (unknown.length) {
    throw new StubArgumentError(
      `faultHeaders(): unknown parameter '${unknown[0]}'; the parameters are ${[...HEADER_PARAMETERS].join(", ")} (a body is armed, not sent as a header)`,
    );
  }
  const headers: Record<string, string> = { [FAULT_HEADERS.mode]: mode };
  if (parameters.delayMs !== undefined) headers[FAULT_HEADERS.delayMs] = String(parameters.delayMs);
  if (parameters.status !== undefined) headers[FAULT_HEADERS.status] = String(parameters.status);
  if (parameters.retryAfter !== undefined) headers[FAULT_HEADERS.retryAfter] = String(parameters.retryAfter);
  return headers;
}
