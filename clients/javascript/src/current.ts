/**
 * The control client of whichever test is running, as one value a test file can hold before any
 * test runs (the hooks swap what it stands for).
 */
import type { SvcStub } from "./control.js";

export interface Current {
  client: SvcStub | undefined;
  /** Where it can be used, for the error outside a test. */
  where: string;
}

export function currentOf(current: Current, extra: Record<string, unknown> = {}): SvcStub {
  return new Proxy({} as SvcStub, {
    get(_, name) {
      if (Object.hasOwn(extra, name)) return extra[name as string];
      const client = current.client;
      if (client === undefined && (typeof name === "symbol" || name === "then")) return undefined; // inspected, or awaited
      if (client === undefined) {
        throw new Error(`svcStub.${String(name)}: there is no test running; use it inside ${current.where}`);
      }
      const value = Reflect.get(client, name, client);
      return typeof value === "function" ? value.bind(client) : value;
    },
  });
}
