// The node:test adapter: a namespace per test named after it, side by side with no crosstalk,
// deleted after; a failed test's journal named in the output; the stub stopped at the end.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { SvcStub } from "svc-stub";
import { useSvcStub } from "svc-stub/node-test";

import { exitOf, printed, runChild, until } from "../child-run.js";
import { evaluate, valueOf } from "../support.js";

const RUNS = new URL("./runs/", import.meta.url);
const used = [];
let stubUrl;

// Registered before useSvcStub's own hooks, so it runs while the file's stub still serves.
after(async () => {
  const left = (await new SvcStub(stubUrl).namespaces()).map((n) => n.name);
  assert.equal(used.length, 9);
  assert.deepEqual(left.filter((name) => used.includes(name)), [], "every test's namespace is deleted after it");
});

const svcStub = useSvcStub();

describe("a namespace per test", () => {
  test("is named after the test, and is what svcStub.url points into", async () => {
    stubUrl = svcStub.baseUrl;
    used.push(svcStub.namespace);
    // the test's name made safe and cut to fit the stub's 64 characters, and a random suffix
    assert.match(svcStub.namespace, /^is-named-after-the-test-and-is-what-svcStub.url-points-[0-9a-f]{8}$/);
    assert.equal(svcStub.url, `${svcStub.baseUrl}/ns/${svcStub.namespace}`);
  });

  describe("tests that run at once", { concurrency: true }, () => {
    for (let i = 0; i < 8; i++) {
      test(`each sees only its own fixtures, faults and journal (${i})`, async (t) => {
        const own = svcStub.of(t);
        used.push(own.namespace);
        await own.setFixtures({ flags: { mine: { type: "string", value: `value-${i}` } } });
        if (i % 2) await own.arm("500", { applyTo: "evaluate", ttlRequests: 1 });
        await sleep(20); // let the others arm and serve theirs meanwhile
        const first = await evaluate(own.url, { flagKeys: ["mine"] });
        assert.equal(first.status, i % 2 ? 500 : 200);
        assert.equal(await valueOf(own.url, "mine"), `value-${i}`);
        assert.equal((await own.requests("evaluate")).length, 2);
      });
    }
  });

  test("outside a test, the client says where it can be used", () => {
    assert.throws(() => unused.url, {
      message: "svcStub.url: there is no test running; use it inside a node:test test (useSvcStub())",
    });
  });
});

// A client whose hooks never run (its suite has no test): what code outside a test meets.
let unused;
describe("a suite with no tests", () => {
  unused = useSvcStub();
});

/**
 * A temporary directory of the test's own, removed after it: for a child run's journals, or for
 * a child run that is killed, which cannot remove its stub's log.
 */
function scratch(t) {
  const directory = mkdtempSync(join(tmpdir(), "svc-stub-test-"));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

/** The environment of a child test run: not this run's (node:test would refuse to nest). */
function childEnvironment(changes) {
  const env = { ...process.env, ...changes };
  delete env.NODE_TEST_CONTEXT;
  for (const [name, value] of Object.entries(changes)) if (value === undefined) delete env[name];
  return env;
}

describe("the run", () => {
  test("a failed test names its journal, written before its namespace went", async (t) => {
    const journals = scratch(t);
    const run = await runChild(process.execPath, ["--test", "--test-reporter=spec", new URL("failing.js", RUNS).pathname], {
      env: childEnvironment({ SVC_STUB_URL: svcStub.baseUrl, SVC_STUB_JOURNAL_DIR: journals }),
    });
    assert.equal(run.status, 1, run.output);
    const named = run.stdout.match(/svc-stub journal of this test: (\S+\.html) \(open it in a browser\)/);
    assert.ok(named, run.stdout);
    assert.deepEqual(readdirSync(journals), [named[1].split("/").pop()]); // the passing test left none
    const page = readFileSync(named[1], "utf8");
    assert.match(page, /\/v1\/flags\/evaluate/);
  });

  test("its stub is stopped when the run ends", async () => {
    const env = childEnvironment({ SVC_STUB_URL: undefined }); // the file starts its own
    const run = await runChild(process.execPath, ["--test", new URL("hanging.js", RUNS).pathname], { env });
    assert.equal(run.status, 0, run.output);
    const url = run.stdout.match(/stub at (\S+)/)[1];
    await assert.rejects(new SvcStub(url).health(), { name: "StubUnreachable" });
  });

  test("its stub is stopped when the run is interrupted (Ctrl-C)", async (t) => {
    const env = childEnvironment({ SVC_STUB_URL: undefined, HANG: "1", TMPDIR: scratch(t) });
    // its own process group, as a terminal's foreground job is: Ctrl-C signals the whole group
    const run = spawn(process.execPath, ["--test", new URL("hanging.js", RUNS).pathname], { env, detached: true });
    const [, url] = await printed(run, /stub at (\S+)/);
    assert.equal(await new SvcStub(url).health(), true);
    process.kill(-run.pid, "SIGINT");
    await exitOf(run);
    await until(async () => !(await answers(url)), `the stub at ${url} to stop answering`);
    assert.equal(await answers(url), false);
  });
});

test("the run's stub is stopped when the run is killed outright", async (t) => {
  // the test file run as a script: its process is the one that started the stub
  const run = spawn(process.execPath, [new URL("hanging.js", RUNS).pathname], {
    env: childEnvironment({ SVC_STUB_URL: undefined, HANG: "1", TMPDIR: scratch(t) }),
  });
  const [, url] = await printed(run, /stub at (\S+)/);
  run.kill("SIGKILL"); // no hook of its own runs: the stub notices by itself
  await exitOf(run);
  // waited for until it has noticed, however long that takes on a busy machine
  await until(async () => !(await answers(url)), `the stub at ${url} to stop answering`);
  assert.equal(await answers(url), false);
});

async function answers(url) {
  try {
    return await new SvcStub(url).health();
  } catch {
    return false;
  }
}
