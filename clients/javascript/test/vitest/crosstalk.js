// What each crosstalk file runs: tests that serve, fault and read in namespaces of their own,
// while the other files' workers do the same on the same stub.
import { setTimeout as sleep } from "node:timers/promises";
import { isMainThread } from "node:worker_threads";

import { inject } from "vitest";
import { expect, test } from "svc-stub/vitest";

import { evaluate, valueOf } from "../support.js";

export function crosstalkTests(file) {
  for (let i = 0; i < 6; i++) {
    test.concurrent(`${file}: test ${i} sees only its own fixtures, faults and journal`, async ({ svcStub }) => {
      const mine = `${file}-${i}`;
      await svcStub.setFixtures({ flags: { mine: { type: "string", value: mine } } });
      if (i % 2) await svcStub.arm("500", { applyTo: "evaluate", ttlRequests: 1 });
      await sleep(20);
      expect((await evaluate(svcStub.url, { flagKeys: ["mine"] })).status).toBe(i % 2 ? 500 : 200);
      expect(await valueOf(svcStub.url, "mine")).toBe(mine);
      expect(await svcStub.requests("evaluate")).toHaveLength(2);
      // every worker uses the run's one stub (global setup, provided to workers), never one of its own
      expect(svcStub.baseUrl).toBe(inject("svcStubUrl"));
      expect(isMainThread).toBe(false);
    });
  }
}
