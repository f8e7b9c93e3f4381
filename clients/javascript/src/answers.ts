/**
 * The stub's answers checked where they come in: a light guard of the fields this helper reads,
 * so a stub of another version (or something else at its URL) is one clear error naming the
 * call and the field, never an `undefined` further on. No schema library: a few lines, the
 * fields' kinds only.
 */
import { StubAnswerError } from "./errors.js";
import { VERSION } from "./version.js";

/** What a field must be: `?` after a kind lets it be null or absent. */
export type Kind = "string" | "number" | "boolean" | "object" | "array" | "string?" | "number?" | "object?";

/** The fields an answer must have, by name; a nested shape for an object field. */
export type Shape = { readonly [field: string]: Kind | Shape };

/** `value` as `T` once it has `shape`; else a StubAnswerError naming `call` and the field. */
export function answered<T>(value: unknown, shape: Shape, call: string, at = ""): T {
  if (!isObject(value)) throw wrong(call, at || "its body", "an object", value);
  for (const [field, kind] of Object.entries(shape)) {
    const path = at ? `${at}.${field}` : field;
    const got = value[field];
    if (typeof kind === "object") answered(got, kind, call, path);
    else if (!fits(got, kind)) throw wrong(call, path, described(kind), got);
  }
  return value as T;
}

/** Each item of `list` (the answer's `field`) with `shape`. */
export function eachAnswered<T>(list: readonly unknown[], shape: Shape, call: string, field: string): T[] {
  list.forEach((item, index) => answered(item, shape, call, `${field}[${index}]`));
  return list as T[];
}

function fits(value: unknown, kind: Kind): boolean {
  if (kind.endsWith("?") && (value === null || value === undefined)) return true;
  switch (kind.replace("?", "")) {
    case "array":
      return Array.isArray(value);
    case "object":
      return isObject(value);
    default:
      return typeof value === kind.replace("?", "");
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function described(kind: Kind): string {
  const base = kind.replace("?", "");
  const article = base === "array" || base === "object" ? "an" : "a";
  return `${article} ${base}${kind.endsWith("?") ? " or null" : ""}`;
}

function wrong(call: string, field: string, expected: string, got: unknown): StubAnswerError {
  const seen = got === undefined ? "nothing" : JSON.stringify(got)?.slice(0, 80) ?? String(got);
  return new StubAnswerError(
    `svc-stub answered ${call} with ${field} ${seen === "nothing" ? "missing" : `= ${seen}`}, where this helper (${VERSION}) ` +
      `expects ${expected}: is the stub there svc-stub ${VERSION}? (svc-stub --version)`,
  );
}
