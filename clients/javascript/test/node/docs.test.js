// The JavaScript guide (docs/guides/javascript.md) shows the examples the suite runs: each of its
// JavaScript blocks is an example file, verbatim (scripts/examples.mjs runs them, in a new
// project with the packed package); its install block is the way that script installs it.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

const GUIDE = readFileSync(new URL("../../../../docs/guides/javascript.md", import.meta.url), "utf8");
const EXAMPLES = new URL("../../examples/", import.meta.url);
const blocks = [...GUIDE.matchAll(/^```(\w*)\n(.*?)^```$/gms)].map(([, language, text]) => ({ language, text }));

function exampleFiles() {
  return readdirSync(EXAMPLES).flatMap((runner) =>
    readdirSync(new URL(`${runner}/`, EXAMPLES)).map((file) => readFileSync(new URL(`${runner}/${file}`, EXAMPLES), "utf8")),
  );
}

test("every JavaScript block is an example file, and every example file is shown", () => {
  const shown = blocks.filter((b) => b.language === "js").map((b) => b.text);
  assert.deepEqual(shown.slice().sort(), exampleFiles().sort());
});

test("each example says how it is run", () => {
  const commands = blocks
    .filter((b) => b.language === "js")
    .map((b) => b.text.split("\n")[0].match(/run with `(.+)`$/)?.[1])
    .filter(Boolean);
  assert.deepEqual(commands, [
    "node --test",
    "npx vitest run",
    "NODE_OPTIONS=--experimental-vm-modules npx jest",
    "npx playwright test",
  ]);
});

test("the install block installs what the examples run against: the packed package", () => {
  const install = blocks.find((b) => b.text.startsWith("pip install /path/to/svc-stub\n")).text;
  assert.match(install, /cd \/path\/to\/svc-stub\/clients\/javascript && npm ci && npm pack/);
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  assert.match(install, new RegExp(`npm install --save-dev \\S+/svc-stub-${pkg.version}\\.tgz`));
  const script = readFileSync(new URL("../../scripts/examples.mjs", import.meta.url), "utf8");
  assert.match(script, /"npm", \["pack"/);
});
