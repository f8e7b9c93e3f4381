// withSvcStub({ fixtures, keys }): every test of a `test` made with it gets a namespace serving
// those fixtures, with those keys bound to it.
import { describe, expect } from "@jest/globals";
import { fileURLToPath } from "node:url";
import { SvcStub } from "svc-stub";
import { withSvcStub } from "svc-stub/jest";

import { valueOf } from "../support.js";

const BETA = fileURLToPath(new URL("../fixtures/beta.yaml", import.meta.url));
const PRICING = fileURLToPath(new URL("../fixtures/pricing.json", import.meta.url));
// a key no other file or run binds: a key is bound to one namespace at a time
const KEY = `phc_jest_bound_${process.pid}`;

/** A vendor `/flags` request that names no namespace, only a project key in its body. */
async function vendorFlags(baseUrl, apiKey, marker) {
  const answer = await fetch(`${baseUrl}/flags?v=2`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Test": marker },
    body: JSON.stringify({ api_key: apiKey, distinct_id: "u" }),
  });
  return { status: answer.status, body: await answer.json() };
}

describe("a fixture file and a bound key", () => {
  const test = withSvcStub({ fixtures: BETA, keys: [KEY] });

  test("the file's flags are served in the test's namespace, and only they", async ({ svcStub }) => {
    expect(await valueOf(svcStub.url, "beta-banner")).toBe(true);
    expect((await svcStub.servedFixtures()).flags).toEqual(["beta-banner"]);
  });

  test("a request with no namespace prefix but the bound key lands in the test's namespace", async ({ svcStub }) => {
    const marker = `bound-key-${process.pid}`;
    const answer = await vendorFlags(svcStub.baseUrl, KEY, marker);
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body.flags)).toEqual(["beta-banner"]); // served from this test's fixtures

    const journal = await svcStub.requests("flags");
    expect(journal.map((r) => [r.path, r.query, r.headers["x-test"]])).toEqual([["/flags", { v: "2" }, marker]]);
    const everyone = await new SvcStub(svcStub.baseUrl).requests("flags"); // the default namespace
    expect(everyone.filter((r) => r.headers["x-test"] === marker)).toEqual([]);
  });

  // This test binds KEY again: the namespace of the test before, and its binding, are gone.
  test("the key is bound to this test's namespace alone, while it runs", async ({ svcStub }) => {
    const mine = (await svcStub.namespaces()).find((ns) => ns.name === svcStub.namespace);
    expect(mine).toMatchObject({ boundKeys: 1, flags: 1 });
  });
});

describe("fixtures as an object, or a list of sources", () => {
  const inline = withSvcStub({ fixtures: { flags: { "inline-flag": { type: "string", value: "from-an-object" } } } });
  const overlay = { flags: { "pricing-layout": { type: "string", value: "list" } } };
  const layered = withSvcStub({ fixtures: [BETA, PRICING, overlay] });

  inline("an object is served as it is", async ({ svcStub }) => {
    expect(await valueOf(svcStub.url, "inline-flag")).toBe("from-an-object");
    expect((await svcStub.servedFixtures()).flags).toEqual(["inline-flag"]);
  });

  layered("later sources overlay earlier ones key by key", async ({ svcStub }) => {
    expect((await svcStub.servedFixtures()).flags.sort()).toEqual(["beta-banner", "pricing-layout"]);
    expect(await valueOf(svcStub.url, "beta-banner")).toBe(true);
    expect(await valueOf(svcStub.url, "pricing-layout")).toBe("list");
  });
});
