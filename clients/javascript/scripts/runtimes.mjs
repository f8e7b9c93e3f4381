// Bun and Deno, for the cross-runtime tests only: not among the package's devDependencies, so
// `npm ci && npm pack` installs neither (they are ~200 MB, and Bun's install script is one npm
// warns about). Each is the one on PATH if there is one, else the pinned version installed here on
// demand, once, into node_modules/.cross-runtimes (which `npm ci` clears with the rest).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

/** The versions the suite is run with when none is on PATH (bump them here). */
export const PINNED = { bun: "1.4.5", deno: "2.9.6" };

const HERE = resolve(new URL("..", import.meta.url).pathname);
const PREFIX = join(HERE, "node_modules", ".cross-runtimes");

/** The command that runs `name` (bun or deno): PATH's, else the pinned one, installed now if it is not yet. */
export function runtime(name) {
  if (spawnSync(name, ["--version"], { stdio: "ignore" }).status === 0) return name;
  const installed = join(PREFIX, "node_modules", ".bin", name);
  if (!existsSync(installed)) {
    const wanted = `${name}@${PINNED[name]}`;
    console.log(`${name} is not on PATH: installing ${wanted} for the cross-runtime tests into ${PREFIX}`);
    try {
      execFileSync("npm", ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--prefix", PREFIX, wanted], {
        stdio: ["ignore", "inherit", "inherit"],
      });
    } catch (error) {
      throw new Error(
        `${name}: not on PATH, and npm could not install ${wanted} (${error.message.split("\n")[0]}); ` +
          `install ${name} (https://${name === "bun" ? "bun.sh" : "deno.com"}) or run the other runners alone: npm test -- node:test Vitest Jest "Playwright Test" examples`,
      );
    }
  }
  return installed;
}
