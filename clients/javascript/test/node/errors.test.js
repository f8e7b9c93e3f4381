// Every way the run's stub can be missing, each one line that says what to do.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";

import { runStub, StubProcess, StubStartError, StubUnreachable, SvcStub, VERSION } from "svc-stub";

/** A server on a free loopback port answering every request with `answer`; its URL. */
async function serving(answer) {
  const server = createServer((request, response) => answer(request, response));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

/** Runs `body` with SVC_STUB_URL set to `url`, then puts it back. */
async function withStubUrl(url, body) {
  const before = process.env.SVC_STUB_URL;
  process.env.SVC_STUB_URL = url;
  try {
    return await body();
  } finally {
    if (before === undefined) delete process.env.SVC_STUB_URL;
    else process.env.SVC_STUB_URL = before;
  }
}

describe("starting a stub", () => {
  test("no svc-stub to run: how to install it", async () => {
    await assert.rejects(StubProcess.start({ bin: "/nonexistent/svc-stub" }), {
      name: "StubStartError",
      message: "svc-stub: no '/nonexistent/svc-stub' to run; install it (pip install svc-stub) or set SVC_STUB_BIN to its path",
    });
  });

  test("SVC_STUB_BIN names the command when svc-stub is not on PATH", async () => {
    const before = process.env.SVC_STUB_BIN;
    process.env.SVC_STUB_BIN = "/nonexistent/bin/svc-stub";
    try {
      await assert.rejects(withStubUrl("", () => runStub()), /no '\/nonexistent\/bin\/svc-stub' to run/);
    } finally {
      if (before === undefined) delete process.env.SVC_STUB_BIN;
      else process.env.SVC_STUB_BIN = before;
    }
  });

  test("a stub that does not start: its own last log line", async () => {
    const error = await StubProcess.start({ fixtures: ["/nonexistent/flags.yaml"] }).catch((e) => e);
    assert.ok(error instanceof StubStartError);
    assert.equal(error.message, "svc-stub did not start (exit code 2): svc-stub: error: /nonexistent/flags.yaml: no such file");
  });

  test("a started stub serves, and is gone once stopped", async () => {
    const stub = await StubProcess.start();
    assert.match(stub.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(await new SvcStub(stub.url).health(), true);
    assert.equal(await stub.stop(), 0);
    await assert.rejects(new SvcStub(stub.url).health(), StubUnreachable);
  });
});

describe("SVC_STUB_URL", () => {
  let running;
  before(async () => {
    running = await StubProcess.start();
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
        message: `svc-stub: SVC_STUB_URL=${old.url} is svc-stub 0.0.9, older than this helper (${VERSION}); upgrade it (pip install -U svc-stub)`,
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

  test("a namespace name the stub would refuse is refused before anything is sent", () => {
    assert.throws(() => new SvcStub(running.url, { namespace: "no spaces" }), /namespace: 'no spaces' is not a namespace name/);
  });
});
