// The package's own install is light: `npm ci && npm pack` brings the runners and the posthog-node
// client the examples drive, never Bun or Deno (~200 MB, and an install script npm warns about);
// the cross-runtime run (scripts/runtimes.mjs) uses PATH's or installs its pinned ones itself.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { PINNED } from "../../scripts/runtimes.mjs";

const read = (path) => JSON.parse(readFileSync(new URL(path, import.meta.url), "utf8"));

test("neither Bun nor Deno is a dependency of the package, its lockfile included", () => {
  const pkg = read("../../package.json");
  for (const field of ["dependencies", "devDependencies", "optionalDependencies"]) {
    assert.deepEqual(Object.keys(pkg[field] ?? {}).filter((name) => /^(bun|deno|@oven\/|@deno\/)/.test(name)), [], field);
  }
  const locked = Object.keys(read("../../package-lock.json").packages);
  assert.deepEqual(locked.filter((path) => /node_modules\/(bun|deno|@oven\/bun-|@deno\/)/.test(path)), []);
});

test("the cross-runtime run pins the versions it installs when none is on PATH", () => {
  assert.deepEqual(Object.keys(PINNED).sort(), ["bun", "deno"]);
  for (const version of Object.values(PINNED)) assert.match(version, /^\d+\.\d+\.\d+$/);
});
