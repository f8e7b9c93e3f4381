// Without a global setup, a Jest run's test files share one stub (the first to need it has
// svc-stub shared start it, the others attach to it), and it goes when Jest exits.
import { expect } from "@jest/globals";
import { SvcStub } from "svc-stub";
import { test } from "svc-stub/jest";

import { CHILD_TEST_TIMEOUT_MS, until } from "../child-run.js";
import { runJest } from "./run-jest.js";

test("the files of a run without the global setup share one stub, gone once Jest has exited", async () => {
  const run = await runJest("says-its-stub-[ab]\\.fixture\\.js", { SVC_STUB_URL: undefined });
  expect(run.status).toBe(0);
  const urls = [...run.report.matchAll(/stub at (\S+) in pid \d+/g)].map((m) => m[1]);
  expect(urls).toHaveLength(2);
  expect(urls[1]).toBe(urls[0]);
  const answers = () => new SvcStub(urls[0]).health().catch(() => false);
  await until(async () => !(await answers()), `the stub at ${urls[0]} to stop once Jest has exited`);
}, CHILD_TEST_TIMEOUT_MS); // the child Jest run, waited for to its exit
