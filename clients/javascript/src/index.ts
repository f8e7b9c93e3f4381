/**
 * svc-stub for JavaScript and TypeScript tests: the core every runner's adapter shares (a stub
 * for the run, a namespace per test, typed faults and fixtures, the journal waited for and
 * checked). The adapters: `svc-stub/vitest`, `svc-stub/jest`, `svc-stub/node-test`,
 * `svc-stub/playwright`.
 */
export { SvcStub, type ClientOptions, type FixtureSource, type NamespaceInfo, type ServedFixtures, type WaitOptions } from "./control.js";
export {
  assertCovers,
  assertReportCovers,
  coverage,
  COVERAGE_FILE,
  COVERAGE_VARIABLE,
  percentMet,
  reportRunCoverage,
  type CoverageCell,
  type CoverageFlags,
  type CoverageGap,
  type CoverageOptions,
  type CoverageProfile,
  type CoverageReport,
  type CoverageScope,
  type CoversOptions,
} from "./coverage.js";
export { StubAnswerError, StubArgumentError, StubError, StubStartError, StubUnreachable, SvcStubError, WaitTimeout } from "./errors.js";
export {
  faultHeaders,
  type ArmOptions,
  type ArmedFault,
  type FaultParameters,
  type SequenceOptions,
  type SequenceStep,
} from "./faults.js";
export { exposuresIn, gapsMs, type FaultRecord, type JsonObject, type Recorded, type RecordedBody, type RecordedRequest } from "./journal.js";
export { closeNamespace, JOURNAL_VARIABLE, journalFolder, openNamespace, type KeptJournal, type NamespaceOptions } from "./namespace.js";
export { BIN_VARIABLE, checkStub, READY_PREFIX, runStub, TOKEN_VARIABLE, URL_VARIABLE, type RunStub, type StartOptions } from "./run.js";
export { startRunStub, stopRunStub } from "./global-setup.js";
export { isRecentEnough, VERSION } from "./version.js";
export {
  FAULT_HEADERS,
  FAULT_MODES,
  NAMESPACE_HEADER,
  ROUTE_NAMES,
  SELECTORS,
  type FaultMode,
  type RouteFilter,
  type RouteName,
  type Selector,
} from "./vocabulary.js";
