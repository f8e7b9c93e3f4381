// The JavaScript guide (docs/guides/javascript.md) shows the examples the suite runs: each of its
// JavaScript blocks is an example file, verbatim (scripts/examples.mjs runs them, in a new
// project with the packed package); its install block is the way that script installs it.
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
  const install = blocks.find((b) => b.text.startsWith("python3 -m venv .venv && .venv/bin/pip install /path/to/svc-stub\n")).text;
  assert.match(install, /^export SVC_STUB_BIN=\$PWD\/\.venv\/bin\/svc-stub$/m);
  assert.match(install, /cd \/path\/to\/svc-stub\/clients\/javascript && npm ci && npm pack/);
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  assert.match(install, new RegExp(`npm install --save-dev \\S+/svc-stub-${pkg.version}\\.tgz`));
  const script = readFileSync(new URL("../../scripts/examples.mjs", import.meta.url), "utf8");
  assert.match(script, /"npm", \["pack"/);
});

test("the guide's first line of what goes wrong is what a project outside the clone is told", async (t) => {
  const shown = blocks.find((b) => b.language === "text" && b.text.startsWith("svc-stub: no svc-stub command")).text.split("\n")[0];
  // the built package, installed in a project of its own: no clone two folders up
  const project = mkdtempSync(join(tmpdir(), "svc-stub-docs-"));
  t.after(() => rmSync(project, { recursive: true, force: true }));
  const installed = join(project, "node_modules", "svc-stub");
  cpSync(new URL("../../dist", import.meta.url), join(installed, "dist"), { recursive: true });
  cpSync(new URL("../../package.json", import.meta.url), join(installed, "package.json"));
  const { runStub } = await import(join(installed, "dist", "index.js"));
  const saved = { PATH: process.env.PATH, SVC_STUB_BIN: process.env.SVC_STUB_BIN, SVC_STUB_URL: process.env.SVC_STUB_URL };
  Object.assign(process.env, { PATH: "/nonexistent" });
  delete process.env.SVC_STUB_BIN;
  delete process.env.SVC_STUB_URL;
  try {
    await assert.rejects(runStub({ owner: process.pid }), { name: "StubStartError", message: shown });
  } finally {
    for (const [name, value] of Object.entries(saved)) if (value === undefined) delete process.env[name]; else process.env[name] = value;
  }
});
