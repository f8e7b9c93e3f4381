// Compiled, never run: a typo in a fault mode, selector or route does not compile
// (`tsc -p test`, part of `npm test`). Each @ts-expect-error fails the build if the line compiles.
import { assertCovers, coverage, faultHeaders, type CoverageReport, type SvcStub } from "svc-stub";
import { inject } from "vitest";
import { test as vitestTest } from "svc-stub/vitest";
import { test as playwrightTest } from "svc-stub/playwright";
import { test as jestTest, withSvcStub } from "svc-stub/jest";
import { useSvcStub } from "svc-stub/node-test";

export async function typed(svcStub: SvcStub): Promise<void> {
  await svcStub.arm("500", { applyTo: "evaluate", ttlRequests: 1 });
  await svcStub.arm("status", { status: 503, retryAfter: 2, applyTo: ["capture", "register"] });
  await svcStub.arm({ sequence: ["429", "none", { mode: "delay", delayMs: 50 }], applyTo: "runtime" });
  await svcStub.withFault("reset", { applyTo: "flags" }, async (armed) => armed.id);
  await svcStub.requests("projects.create");
  faultHeaders("slow_body", { delayMs: 10 });
  faultHeaders("none"); // lets one request through whatever is armed
  const [sent] = await svcStub.requests("capture");
  const body: { events: unknown[] } | undefined = sent?.json<{ events: unknown[] }>();
  const text: string | undefined = sent?.text();
  const offline: string = await svcStub.offlineUrl();
  const named: SvcStub = await svcStub.createNamespace({ test: "checkout > falls back" }, { keys: ["phc_k"] });
  await svcStub.assertNoRetryBeforeRetryAfter();
  await svcStub.assertExposure("checkout-v2", "user-1", { variant: "b", timeoutMs: 1000 });
  void [body, text, offline, named];

  // @ts-expect-error: no such mode
  await svcStub.arm("500s");
  // @ts-expect-error: no such selector
  await svcStub.arm("500", { applyTo: "evaluation" });
  // @ts-expect-error: no such option
  await svcStub.arm("500", { ttl: 1 });
  // @ts-expect-error: a sequence takes no ttlRequests
  await svcStub.arm({ sequence: ["500"], ttlRequests: 1 });
  // @ts-expect-error: no such route
  await svcStub.requests("evaluation");
  // @ts-expect-error: no such step
  await svcStub.arm({ sequence: ["boom"] });
  // @ts-expect-error: no request to which route?
  await svcStub.assertNoRequest();
  // @ts-expect-error: a test's name, or a name
  await svcStub.createNamespace({ name: "x" });
  // @ts-expect-error: a body is armed, never sent as a header
  faultHeaders("500", { body: "x" });
}

vitestTest("vitest", async ({ svcStub, svcStubUrl, svcStubOptions }) => {
  const url: string = svcStub.url;
  const stub: string = svcStubUrl;
  // @ts-expect-error: the fixtures keep their types (no `any`): a string is no number
  const wrong: number = svcStub.url;
  void [url, stub, wrong, svcStubOptions.keys, inject("svcStubUrl").toUpperCase()];
});
vitestTest.override({ svcStubOptions: { keys: ["phc_mine"] } });
// @ts-expect-error: svcStubOptions has no such option
vitestTest.override({ svcStubOptions: { key: "phc_mine" } });
playwrightTest("playwright", async ({ svcStub, page }) => {
  await page.goto(svcStub.url);
});
jestTest("jest", async ({ svcStub }) => {
  await svcStub.clearFaults();
});
jestTest.each([
  ["500", 500],
  ["429", 429],
] as const)("jest each %s", async (mode, status, { svcStub }) => {
  await svcStub.arm(mode);
  const code: number = status;
  void code;
});
jestTest.each([
  ["a", 1],
  ["b", 2],
])("jest each %s", async (name, n, { svcStub }) => {
  const text: string = name;
  const count: number = n;
  void [text, count, svcStub.url];
});
jestTest.each([{ mode: "500" as const }])("jest each $mode", async ({ mode }, { svcStub }) => {
  await svcStub.arm(mode);
});
const modes: string[][] = [["dark-mode"], ["max-items"]];
jestTest.each(modes)("jest each %s, rows typed as plain arrays", async (flagKey, { svcStub }) => {
  await svcStub.requests("evaluate");
  void flagKey;
});
jestTest.each`
  mode     | status
  ${"500"} | ${500}
`("jest each $mode, a tagged template", async ({ mode, status }, { svcStub }) => {
  await svcStub.clearFaults();
  void [mode, status];
});
jestTest.concurrent.each(["dark-mode"])("jest each %s", async (flagKey, { svcStub }) => {
  const key: string = flagKey;
  await svcStub.requests("evaluate");
  void key;
});
jestTest.concurrent.skip("jest concurrent skip", async ({ svcStub }) => svcStub.clearFaults());
jestTest.concurrent.only.each([[1]])("jest concurrent only each %i", async (n, { svcStub }) => {
  const count: number = n;
  void [count, svcStub.url];
});
// @ts-expect-error: a row's values come first, then the context
jestTest.each([["500"]])("jest each %s", async ({ svcStub }) => svcStub.clearFaults());
withSvcStub({ fixtures: "flags.yaml", keys: ["phc_mine"] });
const nodeStub = useSvcStub({ fixtures: { flags: {} } });
void nodeStub.of;

/** The run's coverage, typed; the gate's options checked. */
export async function coverageTyped(svcStub: SvcStub): Promise<void> {
  const report: CoverageReport = await coverage({ stub: svcStub, profile: "runtime" });
  const says: string[] | undefined = report.profiles.runtime?.gaps.map((gap) => gap.says);
  const counts: number[] = report.cells.map((cell) => cell.count);
  const mine: "namespace" | "run" = (await svcStub.coverage({ scope: "namespace" })).scope;
  const neverRead: string[] = report.flags.neverRead;
  const flagsOf: number = report.flags.of;
  const lines: readonly string[] = report.summary;
  // @ts-expect-error: the flags read are names, not a count
  const readCount: number = report.flags.read;
  await assertCovers("runtime", { atLeast: 80, stub: svcStub.baseUrl });
  // @ts-expect-error: a scope the stub does not have
  await svcStub.coverage({ scope: "everything" });
  // @ts-expect-error: atLeast is a number (a percentage)
  await assertCovers("runtime", { atLeast: "80%" });
  void [says, counts, mine, neverRead, flagsOf, lines, readCount];
}
