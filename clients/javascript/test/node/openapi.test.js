// The helper's words are the stub's: every fault mode, selector, route name, query parameter
// and path it uses, checked against the stub's own description of its control plane
// (stub/openapi.json), so the helper cannot drift from the stub; and the words every helper
// shares (clients/vocabulary.json) are spelled here as that vocabulary spells them for JavaScript.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";

import { FAULT_HEADERS, FAULT_MODES, NAMESPACE_HEADER, ROUTE_NAMES, SELECTORS, SvcStub, VERSION } from "svc-stub";

const ROOT = new URL("../../../../", import.meta.url);
const document = JSON.parse(readFileSync(new URL("stub/openapi.json", ROOT), "utf8"));
const schemas = document.components.schemas;
const SOURCES = new URL("../../src/", import.meta.url);
const DIST = new URL("../../dist/", import.meta.url);
const vocabulary = JSON.parse(readFileSync(new URL("../../../vocabulary.json", import.meta.url), "utf8"));

function parametersOf(path, method = "get") {
  const operation = document.paths[path][method];
  return (operation.parameters ?? []).map((p) => (p.$ref ? document.components.parameters[p.$ref.split("/").pop()] : p));
}

describe("the stub's OpenAPI document", () => {
  test("fault modes", () => {
    assert.deepEqual([...FAULT_MODES], schemas.FaultMode.enum);
  });

  test("selectors", () => {
    assert.deepEqual([...SELECTORS], schemas.Selector.enum);
  });

  test("route names", () => {
    assert.deepEqual([...ROUTE_NAMES], schemas.RouteName.enum);
  });

  test("the arming document's members are the options arm() takes", () => {
    const source = readFileSync(new URL("faults.ts", SOURCES), "utf8");
    const options = JSON.parse(source.match(/const ARM_OPTIONS = new Set\((\[.*?\])\)/s)[1]);
    assert.deepEqual(options.sort(), Object.keys(schemas.ArmingDocument.properties).filter((m) => m !== "mode").sort());
  });

  test("an armed fault's parameters are the optional members ArmedFault reads", () => {
    const source = readFileSync(new URL("faults.ts", SOURCES), "utf8");
    const declared = source.match(/export interface ArmedParameters \{(.*?)\n\}/s)[1];
    const optional = [...declared.matchAll(/^\s+(\w+)\?:/gm)].map((m) => m[1]);
    const members = [...declared.matchAll(/^\s+(\w+)\??:/gm)].map((m) => m[1]);
    const parameters = Object.keys(schemas.FaultStep.properties).filter((m) => m !== "mode");
    // optional: the stub lists only the parameters a fault's mode uses
    assert.deepEqual(optional.sort(), parameters.sort());
    assert.deepEqual(members.sort(), parameters.sort());
    assert.ok(schemas.ArmedFault.examples.some((e) => e.mode === "500" && !("delayMs" in e) && !("retryAfter" in e)));
  });

  test("the per-request fault headers", () => {
    const described = JSON.stringify(document.info.description);
    for (const header of [...Object.values(FAULT_HEADERS), NAMESPACE_HEADER]) {
      assert.ok(described.includes(header), `${header} is not in the stub's description`);
    }
  });

  test("the long-poll's query parameters", () => {
    const events = parametersOf("/_test/events").map((p) => p.name);
    for (const name of ["minEvents", "minSvcEvents", "minTargets", "waitMs"]) assert.ok(events.includes(name), name);
    const requests = parametersOf("/_test/requests").map((p) => p.name);
    for (const name of ["route", "min", "waitMs", "bodies"]) assert.ok(requests.includes(name), name);
  });

  test("the coverage report's fields are CoverageReport's and CoverageFlags'", () => {
    const source = readFileSync(new URL("coverage-report.ts", SOURCES), "utf8");
    const members = (name) => [...source.match(new RegExp(`export interface ${name} \\{(.*?)\\n\\}`, "s"))[1].matchAll(/^\s+(\w+)\??:/gm)].map((m) => m[1]);
    const response = schemas.CoverageResponse.properties;
    assert.deepEqual(members("CoverageReport").sort(), Object.keys(response).sort());
    assert.deepEqual(members("CoverageFlags").sort(), Object.keys(response.flags.properties).sort());
  });

  test("every control path the client calls", () => {
    const source = readFileSync(new URL("control.ts", SOURCES), "utf8");
    const called = [...source.matchAll(/path: `?"?(\/[^"`?]*)/g)].map((m) => m[1].replace(/\$\{[^}]+\}/g, "{x}"));
    assert.ok(called.length >= 12, `found ${called}`);
    const paths = Object.keys(document.paths).map((p) => p.replace(/\{[^}]+\}/g, "{x}"));
    for (const path of called) assert.ok(paths.includes(path), `${path} is not a path of the stub`);
  });
});

/** Where each idea of the vocabulary lives in the package: a declaration file, and the class or interface holding it. */
const WHERE = {
  perTestObject: ["control.d.ts", undefined],
  routeSelector: ["faults.d.ts", "ArmOptions"],
  bodyAsText: ["journal.d.ts", "RecordedRequest"],
  bodyAsJson: ["journal.d.ts", "RecordedRequest"],
  offlineUrl: ["control.d.ts", "SvcStub"],
};

/** The body of `container`'s declaration in `file` (dist/), or the whole file. */
function declarations(file, container) {
  const text = readFileSync(new URL(file, DIST), "utf8");
  if (container === undefined) return text;
  const start = text.search(new RegExp(`^export (?:declare )?(?:class|interface) ${container}\\b`, "m"));
  assert.notEqual(start, -1, `${file} declares no ${container}`);
  return text.slice(start, text.indexOf("\n}", start));
}

describe("the shared vocabulary (clients/vocabulary.json)", () => {
  for (const [idea, word] of Object.entries(vocabulary.words)) {
    test(`${idea}: spelled '${word.javascript}' in the package`, () => {
      assert.ok(idea in WHERE, `${idea} is new to the vocabulary: say in WHERE where the package has it`);
      const [file, container] = WHERE[idea];
      const member = container === undefined ? `export declare (?:class|interface|function|const) ${word.javascript}\\b` : `^\\s+(?:readonly )?${word.javascript}\\??[(<:]`;
      assert.match(declarations(file, container), new RegExp(member, "m"), `${word.javascript} (${word.idea}) is not in ${container ?? file}`);
    });
    if (word.controlPlane === undefined) continue;
    test(`${idea}: the control plane's '${word.controlPlane}' is the stub's`, () => {
      if (word.controlPlane.startsWith("/")) assert.ok(word.controlPlane in document.paths, `${word.controlPlane} is not a path of the stub`);
      else assert.ok(word.controlPlane in schemas.ArmingDocument.properties, `${word.controlPlane} is not a member of ArmingDocument`);
    });
  }

  test("the route selector, applyTo, is a member of the stub's fault-arming document", () => {
    assert.equal(vocabulary.words.routeSelector.javascript, "applyTo");
    assert.ok("applyTo" in schemas.ArmingDocument.properties);
  });

  test("the per-test object is SvcStub, the class each adapter hands a test", () => {
    assert.equal(typeof SvcStub.prototype.offlineUrl, "function");
    for (const adapter of ["vitest", "jest", "playwright", "node-test"]) {
      assert.match(readFileSync(new URL(`${adapter}.d.ts`, DIST), "utf8"), /svcStub: SvcStub|SvcStub & \{/, adapter);
    }
  });
});

describe("one version number", () => {
  test("the helper's, its package's, the stub's and its OpenAPI document's", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    const pyproject = readFileSync(new URL("pyproject.toml", ROOT), "utf8").match(/^version = "(.*)"$/m)[1];
    assert.deepEqual([VERSION, pkg.version, pyproject], [document.info.version, document.info.version, document.info.version]);
  });
});
