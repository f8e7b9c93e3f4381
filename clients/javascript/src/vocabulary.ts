/**
 * The words of svc-stub's control plane, as types. Each list is the stub's own
 * (`stub/openapi.json`); the suite checks them against it, so this file cannot drift.
 */

/** Every fault mode the stub has (`FaultMode`). */
export const FAULT_MODES = [
  "delay",
  "401",
  "429",
  "500",
  "invalid_json",
  "truncated",
  "quota_limited",
  "status",
  "reset",
  "empty_response",
  "slow_body",
  "hang",
] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

/** What a fault can target: a route, a management resource, or a group (`Selector`). */
export const SELECTORS = [
  "all",
  "runtime",
  "vendor",
  "management",
  "evaluate",
  "capture",
  "register",
  "flags",
  "definitions",
  "batch",
  "whoami",
  "projects",
  "environments",
  "control-points",
] as const;
export type Selector = (typeof SELECTORS)[number];

/** The name a request is recorded under in the journal (`RouteName`). */
export const ROUTE_NAMES = [
  "evaluate",
  "capture",
  "register",
  "flags",
  "definitions",
  "batch",
  "whoami",
  "projects.list",
  "projects.create",
  "projects.get",
  "projects.update",
  "projects.delete",
  "environments.list",
  "environments.create",
  "environments.get",
  "environments.update",
  "environments.delete",
  "control-points.list",
  "control-points.graph",
] as const;
export type RouteName = (typeof ROUTE_NAMES)[number];

/** A browser's preflight, as the journal names it: listed, but no client's request. */
export const PREFLIGHT = "preflight";

/**
 * What `requests(route)` takes: a route's name, or a management resource (`projects`), which
 * keeps every one of its routes (`projects.create`, `projects.get`, ...).
 */
export type RouteFilter = RouteName | "projects" | "environments" | "control-points" | typeof PREFLIGHT;

/** The headers that fault one request, as the stub reads them. */
export const FAULT_HEADERS = {
  mode: "X-Svc-Test-Fault",
  delayMs: "X-Svc-Test-Delay-Ms",
  status: "X-Svc-Test-Status",
  retryAfter: "X-Svc-Test-Retry-After",
} as const;

/** The header that names a request's namespace, for a client that keeps no base path. */
export const NAMESPACE_HEADER = "X-Svc-Test-Namespace";
