// What each namespaces-*.test.js file runs. Jest runs those files at once, in worker processes of
// their own, against the one stub of the run: every test serves its own value and arms its own
// fault, and must see nothing of the others'.
import { beforeAll, expect } from "@jest/globals";
import { SvcStub } from "svc-stub";
import { test } from "svc-stub/jest";

import { evaluate } from "../support.js";

const FLAG = "ns-flag";
const TESTS_PER_FILE = 4;
const WAIT_FOR_PEERS_MS = 20_000;

/** The namespace every file of this run checks in at, named after the Jest process its workers share. */
function rollCall() {
  return new SvcStub(process.env.SVC_STUB_URL).inNamespace(`jest-roll-call-${process.ppid}`);
}

/** The tests of file `file`; its faults answer `firstStatus`, `firstStatus + 1`, ... (unique per test). */
export function crosstalkSuite(file, firstStatus) {
  const me = `worker ${process.env.JEST_WORKER_ID} pid ${process.pid}`;
  let present; // who had checked in, or why the wait for them failed

  // Every file checks in, then waits until another file has: the files' tests then run at the same
  // time, and a file run alone (or every file in one process) cannot pass.
  beforeAll(async () => {
    const roll = rollCall();
    await evaluate(roll.url, { headers: { "X-Jest-Worker": me } });
    present = await roll.waitForRequests(2, { route: "evaluate", timeoutMs: WAIT_FOR_PEERS_MS }).then(
      (checkIns) => checkIns.map((request) => request.headers["x-jest-worker"]),
      (error) => error, // this file's first test fails with it; the others are not about it
    );
  }, WAIT_FOR_PEERS_MS + 5_000);

  test(`file ${file} runs in a Jest worker, next to another worker process, on the run's one stub`, ({ svcStub }) => {
    expect(process.env.JEST_WORKER_ID).toBeDefined();
    expect(svcStub.baseUrl).toBe(process.env.SVC_STUB_URL);
    if (present instanceof Error) throw present;
    // another worker process checked in on this same stub: one stub for the run, not one per worker
    expect(present).toContain(me);
    expect(new Set(present).size).toBeGreaterThan(1);
  });

  for (let i = 0; i < TESTS_PER_FILE; i++) {
    const value = `value-of-${file}-${i}`;
    const status = firstStatus + i;
    test(`test ${file}-${i} sees only its own value (${value}), its own fault (${status}) and its own 3 requests`, async ({
      svcStub,
    }) => {
      expect(svcStub.baseUrl).toBe(process.env.SVC_STUB_URL);
      await svcStub.setFixtures({ flags: { [FLAG]: { type: "string", value } } });
      const armed = await svcStub.arm("status", { status, applyTo: "evaluate", ttlRequests: 1 });
      const ask = () => evaluate(svcStub.url, { flagKeys: [FLAG], headers: { "X-Test": value } });

      expect((await ask()).status).toBe(status);
      for (let n = 0; n < 2; n++) {
        const answer = await ask();
        expect([answer.status, answer.json?.decisions?.[0]?.value]).toEqual([200, value]);
      }

      const journal = await svcStub.requests("evaluate");
      expect(journal.map((r) => [r.status, r.headers["x-test"]])).toEqual([
        [status, value],
        [200, value],
        [200, value],
      ]);
      expect(journal[0].fault).toMatchObject({ mode: "status", source: "armed", armedId: armed.id });
      expect(await svcStub.armed()).toEqual([]); // its one request used, it is gone
    });
  }
}
