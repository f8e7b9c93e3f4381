// Every way the run's stub can be missing, each one line that says what to do.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";

import { isRecentEnough, runStub, StubAnswerError, StubStartError, StubUnreachable, SvcStub, SvcStubError, VERSION } from "svc-stub";

/** The clone this package is part of: what its messages tell to install. */
const CLONE = fileURLToPath(new URL("../../../../", import.meta.url)).replace(/\/$/, "");
const INSTALL = `install it from its clone (python3 -m venv .venv && .venv/bin/pip install ${CLONE}) and set SVC_STUB_BIN=$PWD/.venv/bin/svc-stub, or SVC_STUB_URL to a running stub`;

/** A server on a free loopback port answering every request with `answer`; its URL. */
async function serving(answer) {
  const server = createServer((request, response) => answer(request, response));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

/** Runs `body` with these variables set (undefined: unset), then puts them back. */
async function withEnvironment(variables, body) {
  const before = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
  const set = (values) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  set(variables);
  try {
    return await body();
  } finally {
    set(before);
  }
}

const withStubUrl = (url, body) => withEnvironment({ SVC_STUB_URL: url }, body);

/**
 * A stub of this file's own: its process owns it (the run's stub, which the node:test files
 * share, is owned by `node --test`, and stopping it here would stop it under their feet).
 */
const ownStub = (options = {}) => withStubUrl(undefined, () => runStub({ owner: process.pid, ...options }));

describe("the run's stub, from svc-stub shared", () => {
  test("no svc-stub command: how to install it from the clone this package is in", async () => {
    await withEnvironment({ SVC_STUB_BIN: undefined, PATH: "/nonexistent" }, async () => {
      await assert.rejects(ownStub(), {
        name: "StubStartError",
        message: `svc-stub: no svc-stub command (SVC_STUB_BIN is not set and none is on PATH); ${INSTALL}`,
      });
    });
  });

  test("SVC_STUB_BIN naming nothing: said, with how to install it", async () => {
    await withEnvironment({ SVC_STUB_BIN: "/nonexistent/bin/svc-stub" }, async () => {
      await assert.rejects(ownStub(), {
        name: "StubStartError",
        message: `svc-stub: no svc-stub command (there is none at SVC_STUB_BIN=/nonexistent/bin/svc-stub); ${INSTALL}`,
      });
    });
  });

  test("a stub that does not start: the command's one line as it said it, with the stub's own last log line", async () => {
    const args = ["shared", "--owner", String(process.pid), "--", "--fixtures", "/nonexistent/flags.yaml"];
    const said = await new Promise((resolve) => execFile("svc-stub", args, (error, stdout, stderr) => resolve(stderr.trim())));
    assert.match(said, /^svc-stub: error: .*\/nonexistent\/flags\.yaml: no such file$/);
    const error = await ownStub({ fixtures: ["/nonexistent/flags.yaml"] }).catch((e) => e);
    assert.ok(error instanceof StubStartError, String(error));
    assert.equal(error.message, said);
  });

  test("the same owner and options: the same stub; --stop stops it", async () => {
    const first = await ownStub({ args: ["--api-key", "k-errors"] });
    const again = await ownStub({ args: ["--api-key", "k-errors"] });
    const other = await ownStub({ args: ["--api-key", "k-other"] });
    assert.match(first.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(again.url, first.url);
    assert.notEqual(other.url, first.url); // two option sets, two stubs
    assert.equal(await new SvcStub(first.url).health(), true);
    await first.stop();
    await assert.rejects(new SvcStub(first.url).health(), StubUnreachable);
    assert.equal(await new SvcStub(other.url).health(), true);
    await other.stop();
  });
});

describe("SVC_STUB_URL", () => {
  let running;
  before(async () => {
    running = await ownStub();
  });
  after(() => running.stop());

  test("a stub that answers is used, not started again, and not stopped after", async () => {
    const run = await withStubUrl(running.url + "/", () => runStub());
    assert.deepEqual([run.url, run.started], [running.url, false]);
    await run.stop();
    assert.equal(await new SvcStub(running.url).health(), true);
  });

  test("nothing answering there: the URL, why, and what to do", async () => {
    const closed = await serving(() => {});
    await closed.close();
    await assert.rejects(withStubUrl(closed.url, () => runStub()), {
      name: "StubUnreachable",
      message:
        `svc-stub: SVC_STUB_URL=${closed.url} does not answer as svc-stub (ECONNREFUSED); ` +
        "start one there (svc-stub --port PORT) or unset SVC_STUB_URL to have one started",
    });
  });

  test("something else answering there", async () => {
    const other = await serving((_, response) => response.writeHead(404, { "Content-Type": "text/html" }).end("<h1>Not Found</h1>"));
    try {
      await assert.rejects(withStubUrl(other.url, () => runStub()), {
        message:
          `svc-stub: SVC_STUB_URL=${other.url} does not answer as svc-stub (404 from /health: <h1>Not Found</h1>); ` +
          "start one there (svc-stub --port PORT) or unset SVC_STUB_URL to have one started",
      });
    } finally {
      await other.close();
    }
  });

  test("a stub older than the helper is refused with one line", async () => {
    const old = await serving((request, response) => {
      const body = request.url === "/health" ? { ok: true } : { info: { version: "0.0.9" } };
      response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(body));
    });
    try {
      await assert.rejects(withStubUrl(old.url, () => runStub()), {
        message:
          `svc-stub: SVC_STUB_URL=${old.url} is svc-stub 0.0.9, older than this helper (${VERSION}); ` +
          `start a newer one there (from its clone: .venv/bin/pip install --upgrade ${CLONE})`,
      });
    } finally {
      await old.close();
    }
  });

  test("the control client at a dead URL says so in one line", async () => {
    const closed = await serving(() => {});
    await closed.close();
    const port = new URL(closed.url).port;
    await assert.rejects(new SvcStub(closed.url).armed(), {
      name: "StubUnreachable",
      message: `svc-stub at ${closed.url} does not answer (ECONNREFUSED); start one there (svc-stub --port ${port}) or correct the URL`,
    });
  });

  test("unreachable keeps its cause: what fetch said, with the system's error under it", async () => {
    const closed = await serving(() => {});
    await closed.close();
    const error = await new SvcStub(closed.url).armed().catch((e) => e);
    assert.ok(error instanceof StubUnreachable && error instanceof SvcStubError);
    assert.equal(error.reason, "ECONNREFUSED");
    assert.equal(error.cause?.name, "TypeError"); // fetch's "fetch failed"
    assert.equal(error.cause?.cause?.code, "ECONNREFUSED");
    const checked = await withStubUrl(closed.url, () => runStub()).catch((e) => e);
    assert.ok(checked instanceof StubUnreachable);
    assert.ok(checked.cause instanceof StubUnreachable, "the check's error keeps the client's, and through it fetch's");
    assert.equal(checked.cause.cause?.cause?.code, "ECONNREFUSED");
  });

  test("an answer of another shape (a stub of another version): which call, which field, what to check", async () => {
    const other = await serving((request, response) => {
      const bodies = { "/_test/fault": { faults: [] }, "/_test/events": { events: [], svcEvents: "none", targets: [] }, "/health": { ok: "yes" } };
      response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(bodies[request.url.split("?")[0]] ?? {}));
    });
    try {
      const client = new SvcStub(other.url);
      const expects = (call, field) =>
        new RegExp(`^svc-stub answered ${call} with ${field}, where this helper \\(${VERSION}\\) expects .*: is the stub there svc-stub ${VERSION}\\? \\(svc-stub --version\\)$`);
      await assert.rejects(client.armed(), { name: "StubAnswerError", message: expects("GET /_test/fault", "armed missing") });
      await assert.rejects(client.recorded(), { name: "StubAnswerError", message: expects("GET /_test/events", 'svcEvents = "none"') });
      await assert.rejects(client.health(), { name: "StubAnswerError", message: expects("GET /health", 'ok = "yes"') });
      await assert.rejects(client.version(), { name: "StubAnswerError", message: expects("GET /_test/openapi.json", "info missing") });
      const error = await client.offlineUrl().catch((e) => e);
      assert.ok(error instanceof StubAnswerError && error instanceof SvcStubError, String(error));
    } finally {
      await other.close();
    }
  });

  test("a namespace name the stub refuses: its own words, naming its rule", async () => {
    await assert.rejects(new SvcStub(running.url).createNamespace("no spaces"), {
      name: "StubError",
      message: /^400 INVALID_NAMESPACE: name: 'no spaces' is not a namespace name \(1 to 64 of/,
    });
  });
});

describe("which stub is recent enough: the one rule (clients/compatibility.json)", () => {
  const shared = JSON.parse(readFileSync(new URL("../../../compatibility.json", import.meta.url), "utf8"));

  test("every case of the shared file", () => {
    assert.ok(shared.cases.length > 0);
    for (const { stub, helper, compatible } of shared.cases) {
      assert.equal(isRecentEnough(stub, helper), compatible, `stub ${JSON.stringify(stub)} for helper ${helper}`);
    }
  });

  test("numbers, not text; anything that is not a version is not compatible", () => {
    const cases = [
      ["0.10.0", "0.9.0", true],
      ["1.0.0-alpha", "1.0.0-alpha.1", true], // any prerelease of the same numbers goes with any other
      ["1.0.0", "1.0.0-rc.1", true],
      ["0.1.0b2", "0.1.0", false],
      ["not a version", "0.1.0", false],
      ["undefined", "0.1.0", false],
      ["0.1.0", "VERSION", false],
    ];
    for (const [stub, need, expected] of cases) assert.equal(isRecentEnough(stub, need), expected, `${stub} for ${need}`);
  });
});
