// What each namespaces-*.test.js file runs. Jest runs those files at once, in worker processes of
// their own, against the one stub of the run: every test serves its own value and arms its own
// fault, and must see nothing of the others'.
import { beforeAll, expect } from "@jest/globals";
import { SvcStub, WaitTimeout } from "svc-stub";
import { test } from "svc-stub/jest";

import { HANG_GUARD_MS } from "../child-run.js";
import { evaluate, WAIT_HANG_GUARD_MS } from "../support.js";

const FLAG = "ns-flag";
const TESTS_PER_FILE = 4;

/**
 * The check-ins of this file and of at least one other, waited for: one long-poll after another
 * (the stub allows a minute at most per wait) until they are there, for no longer than the hang
 * guard. There used to be a budget of 20 s for the others to check in, which a busy 2-core machine,
 * starting Jest's workers one after the other, can exceed with workers that work.
 */
async function checkIns(roll) {
  const started = performance.now();
  for (;;) {
    try {
      return await roll.waitForRequests(2, { route: "evaluate", timeoutMs: WAIT_HANG_GUARD_MS });
    } catch (error) {
      if (!(error instanceof WaitTimeout) || performance.now() - started > HANG_GUARD_MS) throw error;
    }
  }
}

/** The hook's own timeout: above checkIns' hang guard plus its last wait, so Jest never cuts it short. */
const CHECK_IN_HOOK_TIMEOUT_MS = HANG_GUARD_MS + 2 * 60_000;

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
    present = await checkIns(roll).then(
      (checkIns) => checkIns.map((request) => request.headers["x-jest-worker"]),
      (error) => error, // this file's first test fails with it; the others are not about it
    );
  }, CHECK_IN_HOOK_TIMEOUT_MS);

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
