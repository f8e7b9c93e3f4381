/**
 * The control client of whichever test is running, as one value a test file can hold before any
 * test runs (the hooks swap what it stands for).
 */
import type { SvcStub } from "./control.js";
import { SvcStubError } from "./errors.js";

export interface Current {
  client: SvcStub | undefined;
  /** Where it can be used, for the error outside a test. */
  where: string;
  /** Why it cannot be used now, if it cannot (its tests run at once): the error's message for `svcStub.NAME`. */
  refused?: (name: string) => string | undefined;
}

export function currentOf(current: Current, extra: Record<string, unknown> = {}): SvcStub {
  return new Proxy({} as SvcStub, {
    get(_, name) {
      if (Object.hasOwn(extra, name)) return extra[name as string];
      if (typeof name !== "symbol" && name !== "then") {
        const refused = current.refused?.(name);
        if (refused !== undefined) throw new SvcStubError(refused);
      }
      const client = current.client;
      if (client === undefined && (typeof name === "symbol" || name === "then")) return undefined; // inspected, or awaited
      if (client === undefined) {
        throw new SvcStubError(`svcStub.${String(name)}: there is no test running; use it inside ${current.where}`);
      }
      const value = Reflect.get(client, name, client);
      return typeof value === "function" ? value.bind(client) : value;
    },
  });
}
