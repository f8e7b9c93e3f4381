/** Jest's `globalTeardown`: stops the stub `svc-stub/global-setup` started. */
import { stopRunStub } from "./global-setup.js";

export default function svcStubGlobalTeardown(): Promise<void> {
  return stopRunStub();
}
