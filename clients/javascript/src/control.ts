/**
 * The control client: svc-stub's test-control plane (`/_test/*`) in one namespace. What a test
 * arms, serves and reads stays in that namespace; `url` is the base URL to give the client under
 * test.
 */
import { AssertionError } from "node:assert";
import { readFile } from "node:fs/promises";

import { answered, eachAnswered, type Shape } from "./answers.js";
import { checkedCoverage, COVERAGE, type CoverageReport, type CoverageScope } from "./coverage-report.js";
import { StubArgumentError, StubError, StubUnreachable, WaitTimeout } from "./errors.js";
import { armingDocument, type ArmOptions, type ArmedFault, type SequenceOptions } from "./faults.js";
import { exposuresIn, gapsMs, listed, requestsOf, type JsonObject, type Recorded, type RecordedRequest } from "./journal.js";
import { PREFLIGHT, type FaultMode, type RouteFilter } from "./vocabulary.js";

/** A fixture document as an object, or the path (or `file:` URL) of a YAML or JSON file. */
export type FixtureSource = string | URL | JsonObject;

export interface ClientOptions {
  /** Scope every call, and `url`, to this namespace. */
  namespace?: string;
  /** The stub's `--control-token`, if it was started with one. */
  controlToken?: string;
  /** How long a control call may take, waits aside (default 10 s). */
  timeoutMs?: number;
}

export interface WaitOptions {
  /** How long to wait (default 5 s, at most 60 s). */
  timeoutMs?: number;
}

/** A namespace, as `GET /_test/namespaces` lists it. */
export interface NamespaceInfo {
  name: string;
  boundKeys: number;
  flags: number;
  armedFaults: number;
  recorded: { requests: number; events: number; svcEvents: number; targets: number };
}

/** The flag keys served, and with `--watch` how the files' changes went. */
export interface ServedFixtures {
  flags: string[];
  watching: boolean;
  reloads: number;
  reloadError: string | null;
}

const DEFAULT_WAIT_MS = 5_000;

// The fields of each answer this helper reads (the rest is passed on as the stub sent it).
const ARMED_FAULT: Shape = { id: "number", applyTo: "array", fired: "number" };
const RECORDED: Shape = { events: "array", svcEvents: "array", targets: "array" };
const REQUEST: Shape = { seq: "number", method: "string", path: "string", route: "string?", status: "number?", headers: "object" };
const FLAGS: Shape = { flags: "array" };
const MAX_WAIT_MS = 60_000;
const NAMESPACE_PREFIX = "/ns/";

interface Call {
  method: "GET" | "POST" | "DELETE";
  path: string;
  query?: Record<string, string>;
  body?: string;
  contentType?: string;
  /** Sent to the stub itself rather than into the namespace (the namespace registry). */
  unscoped?: boolean;
  text?: boolean;
  waitMs?: number;
  /** The fields of the answer this helper reads, checked before it is used. */
  shape?: Shape;
}

export class SvcStub {
  /** The stub itself. */
  readonly baseUrl: string;
  /** The namespace every call is in; undefined: the default one. */
  readonly namespace: string | undefined;
  /** The base URL to give a client library: `<stub>/ns/<namespace>`. */
  readonly url: string;
  readonly #controlToken: string | undefined;
  readonly #timeoutMs: number;

  constructor(url: string, options: ClientOptions = {}) {
    const { namespace, controlToken, timeoutMs = 10_000 } = options;
    this.baseUrl = url.replace(/\/+$/, "");
    this.namespace = namespace;
    this.url = namespace === undefined ? this.baseUrl : this.baseUrl + NAMESPACE_PREFIX + encodeURIComponent(namespace);
    this.#controlToken = controlToken;
    this.#timeoutMs = timeoutMs;
  }

  /** A client of the same stub in `namespace` (created by its first request there). */
  inNamespace(namespace: string): SvcStub {
    return new SvcStub(this.baseUrl, { namespace, controlToken: this.#controlToken, timeoutMs: this.#timeoutMs });
  }

  /** The stub's version (its OpenAPI document's). */
  async version(): Promise<string> {
    const document = await this.#call<{ info: { version: string } }>({
      method: "GET",
      path: "/_test/openapi.json",
      unscoped: true,
      shape: { info: { version: "string" } },
    });
    return document.info.version;
  }

  async health(): Promise<boolean> {
    const body = await this.#call<{ ok: boolean }>({ method: "GET", path: "/health", unscoped: true, shape: { ok: "boolean" } });
    return body.ok;
  }

  /** An address where nothing listens (the stub holds its port): a client sent there is refused at once. */
  async offlineUrl(): Promise<string> {
    return (await this.#call<{ url: string }>({ method: "GET", path: "/_test/offline", unscoped: true, shape: { url: "string" } })).url;
  }

  /** Everything recorded and armed in the namespace cleared, its start-up fixtures served again. */
  async reset(): Promise<void> {
    await this.#call({ method: "POST", path: "/_test/reset", body: "{}" });
  }

  // -- faults ----------------------------------------------------------------------------

  /**
   * Arms a fault for the rest of the test (until disarmed, or for `ttlRequests`):
   * `arm("500", { applyTo: "evaluate", ttlRequests: 1 })`, or a sequence,
   * `arm({ sequence: ["429", "none"], applyTo: "capture" })`.
   */
  arm(mode: FaultMode, options?: ArmOptions): Promise<ArmedFault>;
  arm(sequence: SequenceOptions): Promise<ArmedFault>;
  async arm(modeOrSequence: FaultMode | SequenceOptions, options: ArmOptions = {}): Promise<ArmedFault> {
    const document =
      typeof modeOrSequence === "string" ? armingDocument(modeOrSequence, options) : armingDocument(undefined, modeOrSequence);
    const body = await this.#call<{ fault: ArmedFault }>({
      method: "POST",
      path: "/_test/fault",
      body: JSON.stringify(document),
      shape: { fault: ARMED_FAULT },
    });
    return body.fault;
  }

  /**
   * Runs `block` with a fault armed, then disarms that fault alone (whether `block` threw or
   * not): `await svcStub.withFault("500", { applyTo: "evaluate" }, async () => { ... })`.
   */
  withFault<T>(mode: FaultMode, block: (armed: ArmedFault) => Promise<T> | T): Promise<T>;
  withFault<T>(mode: FaultMode, options: ArmOptions, block: (armed: ArmedFault) => Promise<T> | T): Promise<T>;
  withFault<T>(sequence: SequenceOptions, block: (armed: ArmedFault) => Promise<T> | T): Promise<T>;
  async withFault<T>(
    fault: FaultMode | SequenceOptions,
    optionsOrBlock: ArmOptions | ((armed: ArmedFault) => Promise<T> | T),
    maybeBlock?: (armed: ArmedFault) => Promise<T> | T,
  ): Promise<T> {
    const block = typeof optionsOrBlock === "function" ? optionsOrBlock : maybeBlock;
    // a missing callback is JavaScript's own TypeError, as in every API that takes one
    if (typeof block !== "function") throw new TypeError("withFault(): the last argument is the block to run with the fault armed");
    const options = typeof optionsOrBlock === "function" ? {} : optionsOrBlock;
    const armed = typeof fault === "string" ? await this.arm(fault, options) : await this.arm(fault);
    try {
      return await block(armed);
    } finally {
      await this.#disarmQuietly(armed.id);
    }
  }

  async armed(): Promise<ArmedFault[]> {
    const body = await this.#call<{ armed: unknown[] }>({ method: "GET", path: "/_test/fault", shape: { armed: "array" } });
    return eachAnswered<ArmedFault>(body.armed, ARMED_FAULT, "GET /_test/fault", "armed");
  }

  async disarm(id: number): Promise<void> {
    await this.#call({ method: "DELETE", path: `/_test/fault/${id}` });
  }

  async clearFaults(): Promise<void> {
    await this.#call({ method: "DELETE", path: "/_test/fault" });
  }

  // -- what was sent ------------------------------------------------------------------------

  async recorded(): Promise<Recorded> {
    return this.#call<Recorded>({ method: "GET", path: "/_test/events", shape: RECORDED });
  }

  /** Items of vendor `/batch` bodies. */
  async events(): Promise<JsonObject[]> {
    return (await this.recorded()).events;
  }

  /** Events of `/v1/capture` bodies. */
  async svcEvents(): Promise<JsonObject[]> {
    return (await this.recorded()).svcEvents;
  }

  async exposures(): Promise<JsonObject[]> {
    return exposuresIn(await this.recorded());
  }

  async targets(): Promise<JsonObject[]> {
    return (await this.recorded()).targets;
  }

  /**
   * The journal in arrival order (by `seq`), each request with its body (`text()`, `json()`), its
   * answer and a curl line; `route` keeps one route (`"projects"`: every `projects.*`). A request
   * still held by a `delay` or `hang` fault is listed once it ends.
   */
  async requests(route?: RouteFilter): Promise<RecordedRequest[]> {
    return this.#requests(route === undefined ? {} : { route });
  }

  /** One request, as `requests()` lists it. */
  async request(seq: number): Promise<RecordedRequest> {
    return requestsOf([await this.#call<object>({ method: "GET", path: `/_test/requests/${seq}`, shape: REQUEST })])[0]!;
  }

  /** The namespace's inspector page, as one HTML file. */
  async snapshot(): Promise<string> {
    return this.#call<string>({ method: "GET", path: "/_test/ui/snapshot", text: true });
  }

  // -- waits: the stub's long-poll, never a sleep ---------------------------------------------

  waitForEvents(n: number, options?: WaitOptions): Promise<JsonObject[]> {
    return this.#waitForRecorded("events", "minEvents", n, options);
  }

  waitForSvcEvents(n: number, options?: WaitOptions): Promise<JsonObject[]> {
    return this.#waitForRecorded("svcEvents", "minSvcEvents", n, options);
  }

  waitForTargets(n: number, options?: WaitOptions): Promise<JsonObject[]> {
    return this.#waitForRecorded("targets", "minTargets", n, options);
  }

  /** Waits until `n` requests (to `route`, if given) are in the journal; a preflight counts only when asked for. */
  async waitForRequests(n: number, options: WaitOptions & { route?: RouteFilter } = {}): Promise<RecordedRequest[]> {
    const waitMs = waitOf(options);
    const query: Record<string, string> = { min: String(n), waitMs: String(waitMs) };
    if (options.route !== undefined) query.route = options.route;
    const got = await this.#requests(query, waitMs);
    const counted = options.route === undefined ? got.filter((r) => r.route !== PREFLIGHT) : got;
    if (counted.length < n) {
      throw new WaitTimeout(
        `waited ${waitMs / 1000} s for ${n} requests to ${options.route ?? "any route"}, got ${counted.length}:\n${listed(got)}`,
      );
    }
    return got;
  }

  async #requests(query: Record<string, string>, waitMs?: number): Promise<RecordedRequest[]> {
    const call = "GET /_test/requests";
    const body = await this.#call<{ requests: unknown[] }>({
      method: "GET",
      path: "/_test/requests",
      query: { ...query, bodies: "true" },
      waitMs,
      shape: { requests: "array" },
    });
    return requestsOf(eachAnswered<object>(body.requests, REQUEST, call, "requests"));
  }

  async #waitForRecorded(
    list: "events" | "svcEvents" | "targets",
    minimum: string,
    n: number,
    options: WaitOptions = {},
  ): Promise<JsonObject[]> {
    const waitMs = waitOf(options);
    const query = { [minimum]: String(n), waitMs: String(waitMs) };
    const got = (await this.#call<Recorded>({ method: "GET", path: "/_test/events", query, waitMs, shape: RECORDED }))[list];
    if (got.length < n) {
      throw new WaitTimeout(`waited ${waitMs / 1000} s for ${n} ${list}, got ${got.length}:\n${JSON.stringify(got, null, 2)}`);
    }
    return got;
  }

  // -- checks: the stub's verdict, and its words when one fails --------------------------------

  /**
   * An exposure of `flagKey` for `targetingKey` (with `variant`, if given) was captured, or is
   * within `timeoutMs` (default 0: no wait); a failure lists the exposures that were.
   */
  async assertExposure(flagKey: string, targetingKey: string, options: { variant?: string } & WaitOptions = {}): Promise<void> {
    const waitMs = waitOf({ timeoutMs: options.timeoutMs ?? 0 });
    const query: Record<string, string> = { flagKey, targetingKey };
    if (options.variant !== undefined) query.variant = options.variant;
    if (waitMs > 0) query.waitMs = String(waitMs);
    await this.#check("exposure", query, waitMs);
  }

  /** Nothing was sent to `route`; a failure lists what was. */
  async assertNoRequest(route: RouteFilter): Promise<void> {
    await this.#check("no-request", { route });
  }

  /** No request used a key where the service would refuse it. */
  async assertNoWarnings(): Promise<void> {
    await this.#check("no-warnings", {});
  }

  /**
   * No request to `route` (default: to each route, each on its own) came back sooner than the
   * previous answer's `Retry-After` allowed; the slack for a timer's rounding is the stub's.
   */
  async assertNoRetryBeforeRetryAfter(route?: RouteFilter): Promise<void> {
    await this.#check("retry-after", route === undefined ? {} : { route });
  }

  /** The ms between each request to `route` and the next. */
  async gapsMs(route: RouteFilter): Promise<number[]> {
    return gapsMs(await this.requests(route));
  }

  /** `GET /_test/checks/{check}`: the stub's verdict; a failure is an AssertionError in the stub's words. */
  async #check(check: string, query: Record<string, string>, waitMs?: number): Promise<void> {
    const verdict = await this.#call<{ passed: boolean; message: string }>({
      method: "GET",
      path: `/_test/checks/${check}`,
      query,
      waitMs,
      shape: { passed: "boolean", message: "string" },
    });
    if (!verdict.passed) throw new AssertionError({ message: verdict.message });
  }

  // -- what is served -------------------------------------------------------------------------

  /** Serves these fixtures (`merge`: over the served ones, key by key); the flag keys served. */
  async setFixtures(source: FixtureSource, options: { merge?: boolean } = {}): Promise<string[]> {
    const body = await this.#call<{ flags: string[] }>({ ...(await documentCall("/_test/fixtures", source, options.merge)), shape: FLAGS });
    return body.flags;
  }

  async servedFixtures(): Promise<ServedFixtures> {
    return this.#call<ServedFixtures>({ method: "GET", path: "/_test/fixtures", shape: { ...FLAGS, watching: "boolean" } });
  }

  /** Serves this `/flags` body verbatim on the vendor routes; the flag keys served. */
  async setVendorFlags(body: JsonObject): Promise<string[]> {
    return (await this.#call<{ flags: string[] }>({ method: "POST", path: "/_test/flags", body: JSON.stringify(body), shape: FLAGS })).flags;
  }

  /** Seeds the management plane (a fixture file's `management:` section); what it holds now. */
  async seedManagement(source: FixtureSource, options: { merge?: boolean } = {}): Promise<JsonObject> {
    return this.#call<JsonObject>({ ...(await documentCall("/_test/management", source, options.merge)), shape: {} });
  }

  /** The management plane as it is now: every organisation, no key or token. */
  async management(): Promise<JsonObject> {
    return this.#call<JsonObject>({ method: "GET", path: "/_test/management", shape: {} });
  }

  /** Per-key rate limits until reset: every key's, and some keys' own. */
  async setRateLimit(limits: { perSecond?: number | null; perKey?: Record<string, number> }): Promise<void> {
    const body = { perSecond: limits.perSecond ?? null, perKey: limits.perKey ?? {} };
    await this.#call({ method: "POST", path: "/_test/rate-limit", body: JSON.stringify(body) });
  }

  // -- namespaces -----------------------------------------------------------------------------

  /**
   * A namespace created now, with keys bound to it and fixtures of its own; a client in it.
   * Named `name`, or by the stub from a test's full name: `createNamespace({ test: "checkout > falls back" })`.
   */
  async createNamespace(
    name: string | { test: string },
    options: { keys?: readonly string[]; fixtures?: FixtureSource } = {},
  ): Promise<SvcStub> {
    const body = JSON.stringify({ ...(typeof name === "string" ? { name } : name), keys: options.keys ?? [] });
    const created = await this.#call<{ name: string }>({
      method: "POST",
      path: "/_test/namespaces",
      body,
      unscoped: true,
      shape: { name: "string" },
    });
    const client = this.inNamespace(created.name);
    if (options.fixtures !== undefined) await client.setFixtures(options.fixtures);
    return client;
  }

  /**
   * What the tests exercised (`GET /_test/coverage`): this namespace's cells (kept across
   * `reset`), or with `scope: "run"` the whole run's, held against each profile (or the one named).
   */
  async coverage(options: { scope?: CoverageScope; profile?: string } = {}): Promise<CoverageReport> {
    const query: Record<string, string> = { scope: options.scope ?? "namespace" };
    if (options.profile !== undefined) query.profile = options.profile;
    const report = await this.#call<CoverageReport>({ method: "GET", path: "/_test/coverage", query, shape: COVERAGE });
    return checkedCoverage(report);
  }

  async namespaces(): Promise<NamespaceInfo[]> {
    const call = "GET /_test/namespaces";
    const body = await this.#call<{ namespaces: unknown[] }>({ method: "GET", path: "/_test/namespaces", unscoped: true, shape: { namespaces: "array" } });
    return eachAnswered<NamespaceInfo>(body.namespaces, { name: "string", recorded: "object" }, call, "namespaces");
  }

  /** Deletes a namespace and everything in it (by default this client's own). */
  async deleteNamespace(name?: string): Promise<void> {
    const doomed = name ?? this.namespace;
    if (doomed === undefined) throw new StubArgumentError("deleteNamespace(): name a namespace (this client is in none)");
    await this.#call({ method: "DELETE", path: `/_test/namespaces/${encodeURIComponent(doomed)}`, unscoped: true });
  }

  // -- over HTTP ------------------------------------------------------------------------------

  async #disarmQuietly(id: number): Promise<void> {
    try {
      await this.disarm(id);
    } catch (error) {
      if (!(error instanceof StubError && error.status === 404)) throw error; // 404: it ran out by itself
    }
  }

  async #call<T>(call: Call): Promise<T> {
    const query = call.query ? `?${new URLSearchParams(call.query)}` : "";
    const target = `${call.unscoped ? this.baseUrl : this.url}${call.path}${query}`;
    const headers: Record<string, string> = {};
    if (call.body !== undefined) headers["Content-Type"] = call.contentType ?? "application/json";
    if (this.#controlToken) headers.Authorization = `Bearer ${this.#controlToken}`;
    let answer: Response;
    try {
      answer = await fetch(target, {
        method: call.method,
        headers,
        body: call.body,
        signal: AbortSignal.timeout(this.#timeoutMs + (call.waitMs ?? 0)),
      });
    } catch (error) {
      const reason = reasonOf(error);
      throw new StubUnreachable(
        `svc-stub at ${this.baseUrl} does not answer (${reason}); start one there (svc-stub --port ${portOf(this.baseUrl)}) or correct the URL`,
        reason,
        { cause: error },
      );
    }
    const text = await answer.text();
    if (!answer.ok) throw stubError(answer.status, text);
    if (call.text) return text as T;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      const reason = `${call.path} answers something other than JSON`;
      throw new StubUnreachable(`${this.baseUrl} does not answer as svc-stub (${reason}); correct the URL`, reason, { cause: error });
    }
    return call.shape === undefined ? (parsed as T) : answered<T>(parsed, call.shape, `${call.method} ${call.path}`);
  }
}

async function documentCall(path: string, source: FixtureSource, merge = false): Promise<Call> {
  const query = merge ? { merge: "true" } : undefined;
  if (typeof source === "string" || source instanceof URL) {
    // read here: the stub never opens a path it is sent; JSON is YAML too
    return { method: "POST", path, query, body: await readFile(source, "utf8"), contentType: "application/yaml" };
  }
  return { method: "POST", path, query, body: JSON.stringify(source) };
}

function waitOf(options: WaitOptions): number {
  const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_MS;
  if (!(timeoutMs >= 0 && timeoutMs <= MAX_WAIT_MS)) {
    throw new StubArgumentError(`timeoutMs: expected 0 to ${MAX_WAIT_MS}, got ${timeoutMs}`);
  }
  return Math.round(timeoutMs);
}

function stubError(status: number, text: string): StubError {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const code = typeof body.error === "string" ? body.error : "ERROR";
    return new StubError(status, code, typeof body.message === "string" ? body.message : "");
  } catch {
    return new StubError(status, "ERROR", text.slice(0, 200));
  }
}

function reasonOf(error: unknown): string {
  if ((error as { name?: string }).name === "TimeoutError") return "no answer in time";
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? String(error);
}

function portOf(url: string): string {
  return new URL(url).port || "PORT";
}
