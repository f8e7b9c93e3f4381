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
//!   words (checked against its OpenAPI document by this crate's tests); a fault is armed for
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

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod client;
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
pub use error::{Error, Result};
pub use faults::{fault_headers, ArmedFault, Fault, FaultGuard, Step};
pub use journal::{Dropped, Event, FaultRecord, NamespaceInfo, Recorded, RecordedAnswer, RecordedBody, Request};
pub use run::run_url;
pub use stub::{start, try_start, SvcStub, SvcStubBuilder};
pub use vocabulary::{
    Mode, Route, Selector, UnknownWord, HEADER_DELAY_MS, HEADER_FAULT, HEADER_NAMESPACE, HEADER_RETRY_AFTER,
    HEADER_STATUS,
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
