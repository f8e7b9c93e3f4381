// The docs' examples (examples/<runner>/), run as a new project runs them: each in a project of
// its own with the package installed from its packed tarball (what `npm pack` ships, not this
// folder), by the command its first line names. The runners and clients they import are this
// folder's, linked in, so nothing is fetched.
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const HERE = resolve(new URL("..", import.meta.url).pathname);
const EXAMPLES = join(HERE, "examples");

/** The command a file's first line names: `// name.test.js: run with `COMMAND``. */
export function commandOf(directory) {
  for (const file of readdirSync(directory)) {
    const named = readFileSync(join(directory, file), "utf8").split("\n")[0].match(/run with `(.+)`$/);
    if (named) return named[1];
  }
  throw new Error(`${directory}: no file names the command that runs it`);
}

function packed(into) {
  const name = execFileSync("npm", ["pack", "--silent", "--pack-destination", into], { cwd: HERE, encoding: "utf8" }).trim();
  return join(into, name.split("\n").pop());
}

function project(example, tarball) {
  const root = mkdtempSync(join(tmpdir(), `svc-stub-example-${example}-`));
  cpSync(join(EXAMPLES, example), root, { recursive: true });
  writeFileSync(join(root, "package.json"), JSON.stringify({ name: `example-${example}`, private: true, type: "module" }));
  const modules = join(root, "node_modules");
  mkdirSync(join(modules, "svc-stub"), { recursive: true });
  execFileSync("tar", ["-xzf", tarball, "-C", join(modules, "svc-stub"), "--strip-components=1"]);
  for (const entry of readdirSync(join(HERE, "node_modules"))) {
    if (entry !== "svc-stub") symlinkSync(join(HERE, "node_modules", entry), join(modules, entry));
  }
  return root;
}

function run(example, tarball) {
  const root = project(example, tarball);
  const command = commandOf(root);
  const [, variables = "", program, args = ""] = command.match(/^((?:\w+=\S+ )*)(npx \S+|node)(.*)$/);
  const env = { ...process.env };
  for (const assignment of variables.trim().split(" ").filter(Boolean)) {
    const [name, value] = assignment.split("=");
    env[name] = value;
  }
  const bin = program === "node" ? process.execPath : join(root, "node_modules", ".bin", program.slice(4));
  console.log(`\n-- examples/${example}: ${command}`);
  const done = spawnSync(bin, args.trim().split(" ").filter(Boolean), { cwd: root, env, stdio: "inherit" });
  rmSync(root, { recursive: true, force: true });
  return done.status === 0;
}

const scratch = mkdtempSync(join(tmpdir(), "svc-stub-pack-"));
try {
  const tarball = packed(scratch);
  const chosen = process.argv.slice(2);
  const failed = readdirSync(EXAMPLES).filter((e) => !chosen.length || chosen.includes(e)).filter((e) => !run(e, tarball));
  if (failed.length) {
    console.error(`\nexamples that failed: ${failed.join(", ")}`);
    process.exit(1);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
