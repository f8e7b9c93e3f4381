//! svc-stub for Rust tests: each test gets a [`SvcStub`] of its own (a namespace on the one stub
//! of the whole `cargo test`) with typed faults, fixtures, and the journal waited for and asserted.
//!
//! ```no_run
//! use std::time::Duration;
//! use svc_stub::{Fault, Mode, Route, Selector};
//!
//! #[test]
//! fn checkout_falls_back_while_evaluate_fails() {
//!     let stub = svc_stub::start(); // give the client under test stub.url()
//!     {
//!         let _outage = stub.arm(Fault::new(Mode::Http500).apply_to(Selector::Evaluate));
//!         // ... the client's evaluate fails here ...
//!     } // disarmed with the guard
//!     stub.assert_no_request(Route::Capture);
//!     let sent = stub.wait_for_requests(1, Route::Evaluate, Duration::from_secs(2));
//!     let body: serde_json::Value = sent[0].json();
//! } // the namespace is deleted; if the test failed, its journal is written first
//! ```
//!
//! - **A stub for the run**: the first test that asks runs `svc-stub shared --owner-named cargo`
//!   (from `SVC_STUB_BIN` or `PATH`), which starts the stub of this `cargo test`, or attaches
//!   to it: every test thread and every test binary of the run share one, and it stops by
//!   itself when `cargo test` ends, however it ends. `SVC_STUB_URL` uses a stub already running.
//! - **A stub per test**: [`start`] (or [`SvcStub::builder`] for fixtures and keys) gives the
//!   test a namespace named after it, deleted on drop; tests on cargo's parallel threads never
//!   see each other's.
//! - **Faults and fixtures, typed**: [`Mode`], [`Selector`] and [`Route`] are the stub's own
//!   words (checked against its `OpenAPI` document by this crate's tests); a fault is armed for
//!   a scope by the [`FaultGuard`] that [`SvcStub::arm`] returns.
//! - **What was sent, waited for and asserted**: waits use the stub's long-poll; each recorded
//!   [`Request`] carries its body ([`Request::text`], [`Request::json`]); assertions panic at the
//!   test's line with the stub's verdict and the path of the journal snapshot (the inspector
//!   page, one HTML file, under `<target dir>/svc-stub-journal/`), which a test that panics
//!   otherwise also leaves, named on stderr.
//!
//! The rules every svc-stub helper shares live in the stub, once, not in this crate: how a run
//! gets its one stub (`svc-stub shared`: the lock, the owner process, the version check), how a
//! test's identity becomes a namespace name (`POST /_test/namespaces {"test": ...}`), and what
//! the assertions decide (`GET /_test/checks/{check}`, whose message a failure shows as is).
//! A change to one of them is one change in the stub, for every language.
//!
//! # Design notes
//!
//! Choices a reader may question, with their reasons.
//!
//! - **A hand-written HTTP/1.1 client (`http.rs`), not `ureq`.** `ureq` 3 with its default
//!   features off (no TLS, no gzip, no JSON) is what this crate would use, and what its own tests
//!   use as "a client under test". As a dependency of the crate it would cost a user more: its
//!   releases a `ureq = "3"` requirement resolves to today (3.5) need Rust 1.85 (`ureq` and
//!   `ureq-proto` declare `rust-version = "1.85"`) where this crate needs 1.71, so a user on a
//!   toolchain between the two could not build their tests; and it
//!   brings eight crates (`ureq-proto`, `http`, `bytes`, `httparse`, `base64`, `log`,
//!   `percent-encoding`, `utf8-zero`) into every user's dev-dependency graph for what is one
//!   plain request per connection to a stub on loopback. The crate's only dependency stays
//!   `serde_json`. What `http.rs` must get right (a body by `Content-Length`, by chunks or to the
//!   end, deadlines, the reason a connection failed) is exercised by the crate's tests against
//!   the real stub.
//! - **No process of the crate's own.** Since issue #46 the run's stub is `svc-stub shared`'s:
//!   the crate runs that command and reads its one line, and the stub (owned by `cargo`) stops
//!   when `cargo test` ends. No public type holds a process, so none can leave one running.
//! - **Destructors do not panic** (C-DTOR-FAIL): a [`FaultGuard`] that cannot disarm, or a
//!   [`SvcStub`] that cannot delete its namespace, says so on stderr.
//!   [`FaultGuard::try_disarm`] returns the error to a test that wants it.
//! - **An async wait that runs out fails at the test's line.** `#[track_caller]` reaches the
//!   function that makes the future, not its poll (the executor's): the `*_async` waits take
//!   [`Location::caller`](std::panic::Location::caller) when called and, if the wait runs out,
//!   report the panic at it, as the default panic hook words it, before unwinding with the same
//!   message (`#[should_panic(expected)]` and `catch_unwind` see it as `panic!`'s). A panic hook
//!   of the test's own is not called for that one panic.
//! - **`Mode::Status` stays a unit variant.** [`Mode`] is the stub's list of words (checked
//!   against its OpenAPI document, read back from the journal), so its variants carry no
//!   parameters. The status comes with the constructor that takes it,
//!   [`Fault::with_status`] (and [`Step::with_status`]); a `Fault::new(Mode::Status)` left
//!   without one is refused before anything is sent, at the test's line.
//! - **The read side reads into the write side's enums, in a [`Word`]**, whose
//!   [`Word::Other`] keeps a word a newer stub says (a route, a mode, a selector) rather than
//!   failing to read the journal.
//! - **`fault_headers` refuses what headers cannot carry** (a sequence, a body, `times`,
//!   `apply_to`, `probability`): the stub reads a mode, delay, status and Retry-After from a
//!   request's headers and nothing else, so the rest is refused by name, never dropped.
//! - **Lints**: `clippy::pedantic` is on. Allowed where it does not fit, each said where it is:
//!   `missing_errors_doc` on [`Client`], whose methods share one `# Errors` section on the type;
//!   `needless_pass_by_value` where a test writes `stub.set_fixtures(json!({...}))` or
//!   `stub.arm(Fault::new(...))` with no `&`; `must_use_candidate` on [`FaultGuard::keep`],
//!   called alone to leave a fault armed, and on [`print_coverage`], called alone to print.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::pedantic)]

mod client;
mod coverage;
mod error;
mod faults;
mod http;
mod journal;
#[cfg(feature = "async")]
mod nonblocking;
mod run;
mod stub;
mod vocabulary;

pub use client::{Check, Client, DEFAULT_WAIT};
pub use coverage::{Coverage, CoverageCell, CoverageFlags, CoverageGap, ProfileCoverage, Scope};
pub use error::{Cause, Error, Result};
pub use faults::{fault_headers, ArmedFault, Fault, Step};
pub use journal::{Dropped, Event, FaultRecord, NamespaceInfo, Recorded, RecordedAnswer, RecordedBody, Request};
pub use run::{assert_covers, coverage, print_coverage, run_url, try_coverage};
pub use stub::{start, try_start, FaultGuard, SvcStub, SvcStubBuilder};
pub use vocabulary::{
    FaultSource, Mode, Route, Selector, UnknownWord, Word, HEADER_DELAY_MS, HEADER_FAULT, HEADER_NAMESPACE,
    HEADER_RETRY_AFTER, HEADER_STATUS,
};

/// svc-stub's version: the stub's and this crate's. A stub older than it is refused.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Names a stub already running, used instead of the run's.
pub const URL_VARIABLE: &str = "SVC_STUB_URL";
/// That stub's `--control-token`, if it has one.
pub const TOKEN_VARIABLE: &str = "SVC_STUB_CONTROL_TOKEN";
/// The `svc-stub` to run when it is not on `PATH`.
pub const BIN_VARIABLE: &str = "SVC_STUB_BIN";
/// Where failed tests' journals go (default `svc-stub-journal/` in cargo's target directory).
pub const JOURNAL_VARIABLE: &str = "SVC_STUB_JOURNAL_DIR";
