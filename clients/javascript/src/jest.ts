/**
 * svc-stub for Jest: `test` whose function gets `{ svcStub }`, a namespace of the test's own.
 *
 *     import { test } from "svc-stub/jest";
 *     test("falls back", async ({ svcStub }) => { ... });
 *     test.each([["500"], ["429"]])("falls back on a %s", async (mode, { svcStub }) => { ... });
 *
 * One stub for the run: with `globalSetup: "svc-stub/global-setup"` and `globalTeardown:
 * "svc-stub/global-teardown"` it is started once and stopped at the end; without them, the first
 * test file to need it has `svc-stub shared` start it and the others attach to it, and it stops
 * when Jest exits. A failed test's failure names its journal (the error it threw is left as it was).
 */
import { test as jestTest } from "@jest/globals";

import type { SvcStub } from "./control.js";
import { closeNamespace, openNamespace, type NamespaceOptions } from "./namespace.js";
import { runStub } from "./run.js";

export interface SvcStubContext {
  /** The control client in this test's namespace; `svcStub.url` is the base URL to give a client. */
  svcStub: SvcStub;
}

export type SvcStubTestFn = (context: SvcStubContext) => Promise<unknown> | void;

/**
 * A `test.each` function: a row's values, then `{ svcStub }`. Rows typed as plain arrays
 * (`string[][]`) have no length to place the context by, so their functions are typed loosely,
 * as Jest's own are.
 */
export type SvcStubEachFn<Values extends readonly unknown[]> = number extends Values["length"]
  ? (...args: any[]) => Promise<unknown> | void
  : (...args: [...Values, SvcStubContext]) => Promise<unknown> | void;

/** One test a row of `table`, each in a namespace of its own; Jest formats the names. */
export interface SvcStubEach {
  /** A tagged-template table: each row an object of its columns, then `{ svcStub }`. */
  <Row extends Record<string, unknown> = Record<string, unknown>>(
    strings: TemplateStringsArray,
    ...values: unknown[]
  ): (name: string, fn: SvcStubEachFn<[Row]>, timeout?: number) => void;
  /** Rows that are arrays: their values spread, then `{ svcStub }`. */
  <Row extends readonly unknown[] | [unknown]>(table: readonly Row[]): (name: string, fn: SvcStubEachFn<Row>, timeout?: number) => void;
  /** Any other rows (values, objects): the row, then `{ svcStub }`. */
  <Row>(table: readonly Row[]): (name: string, fn: SvcStubEachFn<[Row]>, timeout?: number) => void;
}

type Register = (name: string, fn: () => Promise<void>, timeout?: number) => void;
type EachRegister = (
  table: readonly unknown[],
  ...values: unknown[]
) => (name: string, fn: (...row: unknown[]) => Promise<void>, timeout?: number) => void;
type AnyEachFn = (...args: unknown[]) => Promise<unknown> | void;

/** One of `test`'s forms, with its `each`. */
export interface SvcStubTestForm {
  (name: string, fn: SvcStubTestFn, timeout?: number): void;
  each: SvcStubEach;
}

export interface SvcStubTest extends SvcStubTestForm {
  only: SvcStubTestForm;
  skip: SvcStubTestForm;
  /** Runs at once with the file's other concurrent tests: each still has its own namespace. */
  concurrent: SvcStubTestForm & { only: SvcStubTestForm; skip: SvcStubTestForm };
  failing: SvcStubTestForm;
  todo: (name: string) => void;
}

let stubUrl: Promise<string> | undefined;

/** A `test` whose tests get namespaces with these fixtures and keys. */
export function withSvcStub(options: NamespaceOptions = {}): SvcStubTest {
  const wrap = (register: Register & { each: unknown }, failing = false): SvcStubTestForm => {
    const single = (name: string, fn: SvcStubTestFn, timeout?: number): void =>
      register(name, () => inNamespace(name, fn, options, failing), timeout);
    // Jest reads the table (a tagged template's values too), formats each row's name and
    // passes the row; the wrapper takes any arity, so Jest never takes the context for a done
    // callback. A row's namespace is named after its formatted name, which Jest knows by then.
    const each =
      (table: readonly unknown[], ...values: unknown[]) =>
      (name: string, fn: AnyEachFn, timeout?: number) =>
        (register.each as EachRegister)(table, ...values)(
          name,
          (...row) => inNamespace(testId() ?? name, rowFirst(fn, row), options, failing),
          timeout,
        );
    return Object.assign(single, { each: each as SvcStubEach });
  };
  return Object.assign(wrap(jestTest), {
    only: wrap(jestTest.only),
    skip: wrap(jestTest.skip),
    concurrent: Object.assign(wrap(jestTest.concurrent), {
      only: wrap(jestTest.concurrent.only),
      skip: wrap(jestTest.concurrent.skip),
    }),
    failing: wrap(jestTest.failing, true),
    todo: (name: string) => jestTest.todo(name),
  });
}

/** An each function as a test function: the row's values first, then the context. */
function rowFirst(fn: AnyEachFn, row: unknown[]): SvcStubTestFn {
  return (context) => fn(...row, context);
}

/** `test`, its tests in namespaces of their own. */
export const test: SvcStubTest = withSvcStub();
export const it = test;

/** `failing`: a `test.failing`, which passes when it throws (so keeps no journal). */
async function inNamespace(name: string, fn: SvcStubTestFn, options: NamespaceOptions, failing: boolean): Promise<void> {
  stubUrl ??= runStub().then((run) => run.url);
  const id = testId() ?? name;
  const client = await openNamespace(await stubUrl, id, options);
  try {
    await fn({ svcStub: client });
  } catch (error) {
    if (failing) {
      await closeNamespace(client, { id, failed: false });
      throw error;
    }
    const kept = await closeNamespace(client, { id, failed: true });
    throw kept && error instanceof Error ? withLine(error, kept.line) : error;
  }
  await closeNamespace(client, { id, failed: false });
}

/**
 * The failure as Jest shows it, its message then the line that names its journal; the error
 * the test threw is left as it was (its message, its stack, its own fields). What is thrown
 * instead is a view of it: an object whose prototype is that error (so `instanceof`, a matcher's
 * `matcherResult` and any other field read the same) with a message and a stack of its own.
 */
function withLine(error: Error, line: string): Error {
  const stack = error.stack;
  const message = `${error.message}\n\n${line}`;
  const view = Object.create(error) as Error;
  Object.defineProperty(view, "message", { value: message, configurable: true, writable: true });
  Object.defineProperty(view, "stack", {
    value: stack?.includes(error.message) ? stack.replace(error.message, message) : `${stack ?? error.name}\n\n${line}`,
    configurable: true,
    writable: true,
  });
  return view;
}

/**
 * The running test's full name. Jest's `currentTestName` is the test started last, another one
 * when tests run concurrently; `currentConcurrentTestName` (Jest 30) is this one's.
 */
function testId(): string | undefined {
  const state = expectState();
  const concurrent = state?.currentConcurrentTestName;
  const name = (typeof concurrent === "function" ? (concurrent as () => unknown)() : undefined) ?? state?.currentTestName;
  return typeof name === "string" ? name : undefined;
}

function expectState(): Record<string, unknown> | undefined {
  const expect = (globalThis as { expect?: { getState?: () => Record<string, unknown> } }).expect;
  return expect?.getState?.();
}
