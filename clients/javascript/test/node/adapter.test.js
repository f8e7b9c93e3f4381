// The node:test adapter: a namespace per test named after it, side by side with no crosstalk,
// deleted after; a failed test's journal named in the output, outside the project's sources;
// one stub for the run, shared by its files and gone after it, however it ends.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, sep } from "node:path";
import { after, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

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
    // made by the stub from the test's full name (its rule: readable, cut to fit, a random suffix)
    assert.match(svcStub.namespace, /^a-namespace-per-test-is-[\w.-]*-[0-9a-f]{8}$/);
    assert.ok(svcStub.namespace.length <= 64, svcStub.namespace);
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

  describe("the file's svcStub while tests run at once", { concurrency: true }, () => {
    // each waits for the other to be running: both are, whatever the machine's speed
    let arrived = 0;
    let bothRunning;
    const both = new Promise((resolve) => (bothRunning = resolve));
    for (const n of [1, 2]) {
      test(`refuses, and says to use svcStub.of(t) (${n})`, async (t) => {
        if (++arrived === 2) bothRunning();
        await both;
        assert.throws(() => svcStub.arm, {
          name: "SvcStubError",
          message:
            "svcStub.arm: this file's tests run at once ({ concurrency: true }), so svcStub cannot tell which test is asking; " +
            'use the test\'s own client: test("...", async (t) => { const stub = svcStub.of(t); await stub.arm... })',
        });
        assert.match(svcStub.of(t).namespace, new RegExp(`svcStub\\.of-t-${n}-[0-9a-f]{8}$`)); // its own
      });
    }
  });

  test("once those are done, the file's svcStub is the running test's again", () => {
    assert.match(svcStub.namespace, /-running-test-s-again-[0-9a-f]{8}$/);
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

/** A temporary directory of the test's own, removed after it: for a child run's journals. */
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

const PACKAGE = fileURLToPath(new URL("../../", import.meta.url));
const JOURNAL_LINE = /svc-stub journal of this test: (\S+\.html) \(open it in a browser\)/;

/** A child `node --test` run of runs/<files>, in the package's folder, as a user's run would be. */
const nodeTest = (files, env) =>
  runChild(process.execPath, ["--test", "--test-reporter=spec", ...files.map((file) => new URL(file, RUNS).pathname)], { cwd: PACKAGE, env });

describe("a failed test's journal", () => {
  test("is named in its output, and written before its namespace went", async (t) => {
    const journals = scratch(t);
    const run = await nodeTest(["failing.js"], childEnvironment({ SVC_STUB_URL: svcStub.baseUrl, SVC_STUB_JOURNAL_DIR: journals }));
    assert.equal(run.status, 1, run.output);
    const named = run.stdout.match(JOURNAL_LINE);
    assert.ok(named, run.stdout);
    assert.deepEqual(readdirSync(journals), [basename(named[1])]); // the passing test left none
    assert.match(readFileSync(named[1], "utf8"), /\/v1\/flags\/evaluate/);
  });

  test("goes to the system's temporary folder, outside the sources, and keeps the last run's only", async (t) => {
    const tmp = scratch(t); // the child's os.tmpdir()
    const env = childEnvironment({ SVC_STUB_URL: svcStub.baseUrl, SVC_STUB_JOURNAL_DIR: undefined, TMPDIR: tmp });
    const first = (await nodeTest(["failing.js"], env)).stdout.match(JOURNAL_LINE)?.[1];
    const second = (await nodeTest(["failing.js"], env)).stdout.match(JOURNAL_LINE)?.[1];
    const project = join(tmp, "svc-stub-journal", "svc-stub"); // the package's name
    for (const path of [first, second]) assert.ok(path?.startsWith(project + sep), `${path} is not in ${project}`);
    assert.equal(existsSync(second), true);
    assert.equal(existsSync(first), false, "the earlier run's journal is pruned once this run writes its own");
    assert.deepEqual(readdirSync(project), [basename(dirname(second))]); // one run's folder: the last
    assert.equal(existsSync(join(PACKAGE, "svc-stub-journal")), false, "nothing among the sources");
  });
});

describe("one stub for the run", () => {
  test("the run's files share one stub, and it is gone when the run ends", async () => {
    const run = await nodeTest(["hanging.js", "shared.js"], childEnvironment({ SVC_STUB_URL: undefined }));
    assert.equal(run.status, 0, run.output);
    const urls = [...run.stdout.matchAll(/stub at (\S+)/g)].map((m) => m[1]);
    assert.equal(urls.length, 2, run.output);
    assert.equal(urls[0], urls[1], "each file, in a process of its own, attached to the run's one stub");
    await until(async () => !(await answers(urls[0])), `the stub at ${urls[0]} to stop once the run has ended`);
  });

  test("it is gone when the run is interrupted (Ctrl-C)", async () => {
    // its own process group, as a terminal's foreground job is: Ctrl-C signals the whole group
    const env = childEnvironment({ SVC_STUB_URL: undefined, HANG: "1" });
    const run = spawn(process.execPath, ["--test", new URL("hanging.js", RUNS).pathname], { env, detached: true });
    const [, url] = await printed(run, /stub at (\S+)/);
    assert.equal(await new SvcStub(url).health(), true);
    process.kill(-run.pid, "SIGINT");
    await exitOf(run);
    await until(async () => !(await answers(url)), `the stub at ${url} to stop answering`);
  });

  test("it is gone when the runner is killed outright, its test files' processes left running", async () => {
    const env = childEnvironment({ SVC_STUB_URL: undefined, HANG: "1" });
    const run = spawn(process.execPath, ["--test", new URL("hanging.js", RUNS).pathname], { env, detached: true });
    try {
      const [, url] = await printed(run, /stub at (\S+)/);
      run.kill("SIGKILL"); // `node --test` alone: no hook runs, and the file's process (the stub's caller) lives on
      await exitOf(run);
      // the stub follows the run's owner, not the process that asked for it
      await until(async () => !(await answers(url)), `the stub at ${url} to stop answering`);
    } finally {
      process.kill(-run.pid, "SIGKILL"); // the orphaned test file's process
    }
  });

  test("run as a script, the file's own process is the run: killed, its stub goes too", async () => {
    const run = spawn(process.execPath, [new URL("hanging.js", RUNS).pathname], { env: childEnvironment({ SVC_STUB_URL: undefined, HANG: "1" }) });
    const [, url] = await printed(run, /stub at (\S+)/);
    run.kill("SIGKILL");
    await exitOf(run);
    await until(async () => !(await answers(url)), `the stub at ${url} to stop answering`);
  });
});

async function answers(url) {
  try {
    return await new SvcStub(url).health();
  } catch {
    return false;
  }
}
