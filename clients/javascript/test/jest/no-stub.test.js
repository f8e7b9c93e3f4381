// With no stub to use and none to start, each test fails with one line that says what to do.
import { fileURLToPath } from "node:url";

import { expect } from "@jest/globals";
import { test } from "svc-stub/jest";

import { CHILD_TEST_TIMEOUT_MS } from "../child-run.js";
import { runJest } from "./run-jest.js";

const NO_BIN = "/nonexistent/svc-stub";
const CLONE = fileURLToPath(new URL("../../../../", import.meta.url)).replace(/\/$/, "");
const ADVICE =
  `svc-stub: no svc-stub command (there is none at SVC_STUB_BIN=${NO_BIN}); install it from its clone ` +
  `(python3 -m venv .venv && .venv/bin/pip install ${CLONE}) and set SVC_STUB_BIN=$PWD/.venv/bin/svc-stub, or SVC_STUB_URL to a running stub`;

test("a file that must start its own stub, and cannot, fails its tests with what to do, once", async () => {
  // no SVC_STUB_URL and no global setup in child/jest.config.js: the per-file start of svc-stub/jest
  const run = await runJest("passes.fixture.js", { SVC_STUB_URL: undefined, SVC_STUB_BIN: NO_BIN });

  expect(run.status).not.toBe(0);
  expect(run.tests.map((t) => [t.title, t.status])).toEqual([["passes, given a stub", "failed"]]);
  expect(run.tests[0].failureMessages.join("\n")).toContain(ADVICE);
  // said as the test's failure, and nowhere else ("Test suite failed to run")
  expect(run.report.split(ADVICE).length - 1).toBe(1);
  expect(run.report).not.toContain("Test suite failed to run");
}, CHILD_TEST_TIMEOUT_MS); // the child Jest run, waited for to its exit
