//! svc-stub for Rust tests: each test gets a namespace of its own on one stub for the whole
//! `cargo test`, with typed faults, fixtures, and the journal waited for and asserted.
//!
//! ```no_run
//! use std::time::Duration;
//! use svc_stub::{Fault, Mode, Route, Selector};
//!
//! #[test]
//! fn checkout_falls_back_while_evaluate_fails() {
//!     let ns = svc_stub::namespace("checkout_falls_back"); // give the client under test ns.url()
//!     {
//!         let _outage = ns.arm(Fault::new(Mode::Http500).on(Selector::Evaluate));
//!         // ... the client's evaluate fails here ...
//!     } // disarmed with the guard
//!     ns.assert_no_request(Route::Capture);
//!     let _ = ns.wait_for_requests(1, Route::Evaluate, Duration::from_secs(2));
//! } // the namespace is deleted; if the test failed, its journal is written first
//! ```
//!
//! - **A stub for the run**: started on first use (`svc-stub --port 0` from `SVC_STUB_BIN` or
//!   `PATH`), shared by every test thread and by every test binary of one `cargo test`, and
//!   stopped by the stub itself once `cargo test` (or the binary run alone) has ended.
//!   `SVC_STUB_URL` uses a stub that is already running instead.
//! - **A namespace per test**: [`namespace`] (or [`Namespace::builder`] for fixtures and
//!   keys), deleted on drop; tests on cargo's parallel threads never see each other's.
//! - **Faults and fixtures, typed**: [`Mode`], [`Selector`] and [`Route`] are the stub's own
//!   words (checked against its OpenAPI document by this crate's tests); a fault is armed for
//!   a scope by the [`FaultGuard`] that [`Namespace::arm`] returns.
//! - **What was sent, waited for and asserted**: waits use the stub's long-poll; assertions
//!   panic at the test's line with what was recorded instead and the path of the journal
//!   snapshot (the inspector page, one HTML file), which a test that panics otherwise also
//!   leaves, named on stderr.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod client;
mod error;
mod faults;
mod http;
mod journal;
mod namespace;
#[cfg(feature = "async")]
mod nonblocking;
mod process;
mod run;
mod share;
mod vocabulary;

pub use client::{Client, DEFAULT_WAIT};
pub use error::{Error, Result};
pub use faults::{fault_headers, ArmedFault, Fault, FaultGuard, Step};
pub use journal::{
    Dropped, Event, FaultRecord, NamespaceInfo, Recorded, RecordedAnswer, RecordedBody, Request, RequestInFull,
};
pub use namespace::{namespace, try_namespace, Namespace, NamespaceBuilder};
pub use process::{StartOptions, StubProcess, READY_PREFIX};
pub use run::{check_stub, run_url};
pub use vocabulary::{
    Mode, Route, Selector, UnknownWord, HEADER_DELAY_MS, HEADER_FAULT, HEADER_NAMESPACE, HEADER_RETRY_AFTER,
    HEADER_STATUS,
};

/// svc-stub's version: the stub's and this crate's. A stub older than it is refused.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Names a stub already running, used instead of starting one.
pub const URL_VARIABLE: &str = "SVC_STUB_URL";
/// That stub's `--control-token`, if it has one.
pub const TOKEN_VARIABLE: &str = "SVC_STUB_CONTROL_TOKEN";
/// The `svc-stub` to run when it is not on `PATH`.
pub const BIN_VARIABLE: &str = "SVC_STUB_BIN";
/// Where failed tests' journals go (default `svc-stub-journal/` in cargo's target directory).
pub const JOURNAL_VARIABLE: &str = "SVC_STUB_JOURNAL_DIR";
