//! svc-stub for one test: a namespace of its own on the run's stub, named by the stub after the
//! test, deleted when the value is dropped. Every method panics on an error, with one line, at
//! the test's own line.

#[cfg(feature = "async")]
use std::future::Future;
use std::panic::Location;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use crate::client::{Client, List};
use crate::coverage::{Coverage, Scope};
use crate::error::{Error, Result};
use crate::faults::{ArmedFault, Fault};
use crate::journal::{self, Event, Recorded, Request};
use crate::vocabulary::Route;

/// Gives the calling test a [`SvcStub`]: a namespace of its own on the run's stub
/// ([`run_url`](crate::run_url)), named after the test, deleted when the value is dropped.
/// Give the code under test [`SvcStub::url`].
///
/// Panics with one line when no stub can be had (see [`try_start`] for a `Result`).
#[track_caller]
#[must_use]
pub fn start() -> SvcStub {
    SvcStub::builder().start()
}

/// [`start`], with the error instead of a panic.
///
/// # Errors
///
/// As [`SvcStubBuilder::try_start`].
#[track_caller]
pub fn try_start() -> Result<SvcStub> {
    SvcStub::builder().try_start()
}

/// svc-stub for one test: a namespace of its own on the run's stub, with the faults armed in it,
/// the fixtures it serves and the journal of what was sent to it.
///
/// `SvcStub` is `Send` and `Sync`: threads of one test can share it by reference.
#[derive(Debug)]
pub struct SvcStub {
    client: Client,
    /// Where the test asked for it: its source says whether a panic is what the test expects.
    started_at: &'static Location<'static>,
    /// The journal written for a failure, once: an assertion's panic names it, and a drop
    /// while panicking does not write it again.
    journal: OnceLock<String>,
}

/// Sets up a [`SvcStub`]: its fixtures and bound keys ([`SvcStub::builder`]).
#[derive(Debug, Clone, Default)]
#[must_use = "a builder does nothing until .start()"]
pub struct SvcStubBuilder {
    fixtures: Vec<Fixtures>,
    keys: Vec<String>,
}

#[derive(Debug, Clone)]
enum Fixtures {
    Document(Value),
    File(PathBuf),
}

impl SvcStubBuilder {
    /// Serves these fixtures (a fixture document: `{"flags": {...}}`). The first fixtures given
    /// replace the served set; later ones overlay it, key by key.
    pub fn fixtures(mut self, document: Value) -> Self {
        self.fixtures.push(Fixtures::Document(document));
        self
    }

    /// Serves the fixtures of a YAML or JSON file (read here: the stub opens no path it is sent).
    pub fn fixture_file(mut self, path: impl AsRef<Path>) -> Self {
        self.fixtures.push(Fixtures::File(path.as_ref().to_path_buf()));
        self
    }

    /// Binds keys to the test's namespace: requests that name no namespace but present one of
    /// them are served in it, for a client that keeps no base path and cannot add a header. A
    /// key binds to one namespace at a time: parallel tests need keys of their own.
    pub fn keys<I, S>(mut self, keys: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.keys.extend(keys.into_iter().map(Into::into));
        self
    }

    /// Starts the test's stub.
    ///
    /// # Panics
    ///
    /// With one line that says what to do, when no stub can be had (see
    /// [`SvcStubBuilder::try_start`]).
    #[track_caller]
    #[must_use]
    pub fn start(self) -> SvcStub {
        match self.try_start() {
            Ok(stub) => stub,
            Err(error) => panic!("{}", error.line()),
        }
    }

    /// Starts the test's stub, or says why it cannot.
    ///
    /// # Errors
    ///
    /// [`Error::Start`] or [`Error::Check`] when the run has no stub, [`Error::Unreachable`] or
    /// [`Error::Stub`] when a call to it fails, [`Error::Invalid`] for a fixture file not read.
    #[track_caller]
    pub fn try_start(self) -> Result<SvcStub> {
        let started_at = Location::caller();
        let run = Client::new(&crate::run_url()?)?;
        let stub =
            SvcStub { client: run.create_namespace(&test_id(), &self.keys)?, started_at, journal: OnceLock::new() };
        for (i, fixtures) in self.fixtures.iter().enumerate() {
            let served = match fixtures {
                Fixtures::Document(document) => stub.client.set_fixtures(document, i > 0),
                Fixtures::File(path) => stub.client.set_fixtures_file(path, i > 0),
            };
            served.map_err(|error| match error {
                Error::Stub { status, code, message } => {
                    Error::Stub { status, code, message: format!("fixtures: {message}") }
                }
                other => other,
            })?;
        }
        Ok(stub)
    }
}

/// The test's identity, for the stub to name its namespace after: the test binary's name (a
/// file of `tests/`, or the crate for its unit tests) and the test's path, as libtest names the
/// thread it runs the test on (`checkout::tests::falls_back`).
fn test_id() -> String {
    let binary = std::env::current_exe().ok().and_then(|exe| Some(exe.file_stem()?.to_string_lossy().into_owned()));
    let binary = binary.unwrap_or_default();
    // cargo's build hash: `checkout-1a2b3c4d5e6f7a8b`
    let binary = match binary.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => name,
        _ => &binary,
    };
    match std::thread::current().name() {
        Some(test) if test != "main" => format!("{binary}::{test}"),
        _ => binary.to_owned(),
    }
}

impl SvcStub {
    /// A stub with fixtures or bound keys:
    /// `SvcStub::builder().fixtures(json!({...})).keys(["phc_checkout"]).start()`.
    pub fn builder() -> SvcStubBuilder {
        SvcStubBuilder::default()
    }

    /// The base URL to give the client under test: `{stub}/ns/{name}`.
    pub fn url(&self) -> &str {
        self.client.url()
    }

    /// The stub itself, shared by the run.
    pub fn base_url(&self) -> &str {
        self.client.base_url()
    }

    /// The test's namespace: the name the stub made of the test's identity.
    pub fn name(&self) -> &str {
        self.client.namespace().unwrap_or_default()
    }

    /// The control client in the test's namespace, whose methods return errors instead of
    /// panicking.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// An address where nothing listens (every connection refused at once), for a test of a
    /// client's offline behaviour: the stub holds its port for its whole life.
    #[track_caller]
    pub fn offline_url(&self) -> String {
        self.must(self.client.offline_url())
    }

    #[track_caller]
    fn must<T>(&self, result: Result<T>) -> T {
        match self.checked(result) {
            Ok(value) => value,
            Err(message) => panic!("{message}"),
        }
    }

    /// The value, or the line a test fails with: a wait that ran out names the journal too
    /// (unless the test expects a panic).
    fn checked<T>(&self, result: Result<T>) -> std::result::Result<T, String> {
        match result {
            Ok(value) => Ok(value),
            Err(Error::WaitTimeout(message)) => Err(self.failure(&message)),
            Err(error) => Err(error.line()),
        }
    }

    /// Panics with a failure's message and, after it, where the test's journal was written.
    #[track_caller]
    fn fail(&self, message: &str) -> ! {
        panic!("{}", self.failure(message))
    }

    /// A failure's message and, after it, where the test's journal was written.
    fn failure(&self, message: &str) -> String {
        if self.panic_expected() {
            return message.to_owned();
        }
        format!("{message}\n{}", self.keep_journal())
    }

    /// Writes the namespace's journal (its inspector page, one HTML file) and says where, once.
    fn keep_journal(&self) -> &str {
        self.journal.get_or_init(|| {
            let written = self.client.snapshot().map_err(|error| error.to_string()).and_then(|page| {
                journal::write_snapshot(self.name(), &page, self.base_url()).map_err(|error| error.to_string())
            });
            match written {
                Ok(path) => format!("svc-stub journal of this test: {} (open it in a browser)", path.display()),
                Err(problem) => format!("svc-stub journal not written: {problem}"),
            }
        })
    }

    /// Whether the test is marked `#[should_panic]`, as its source says (libtest tells a test
    /// nothing of it): then a panic is what it expects, and leaves no journal. Read from the
    /// attributes of the function `start()` was called in; `false` when that cannot be read.
    fn panic_expected(&self) -> bool {
        let file = Path::new(self.started_at.file());
        let here = std::env::current_dir().unwrap_or_default();
        let Some(source) = here.ancestors().find_map(|dir| std::fs::read_to_string(dir.join(file)).ok()) else {
            return false;
        };
        let above: Vec<&str> = source.lines().take(self.started_at.line() as usize).map(str::trim).collect();
        let Some(header) = above.iter().rposition(|line| line.starts_with("fn ") || line.contains(" fn ")) else {
            return false;
        };
        let attributes = above[..=header].iter().rev().take_while(|line| !line.ends_with('}') && !line.ends_with(';'));
        attributes.take(20).any(|line| line.contains("#[should_panic"))
    }

    // -- faults -------------------------------------------------------------------------------

    /// Arms a fault until the guard is dropped (or for its [`Fault::times`]); `.keep()` on the
    /// guard leaves it armed for the rest of the test.
    ///
    /// ```no_run
    /// # use svc_stub::{Fault, Mode, Selector};
    /// # let stub = svc_stub::start();
    /// {
    ///     let _outage = stub.arm(Fault::new(Mode::Http500).apply_to(Selector::Evaluate));
    ///     // ... evaluate fails here ...
    /// } // disarmed
    /// ```
    #[track_caller]
    #[allow(clippy::needless_pass_by_value)] // `stub.arm(Fault::new(...))`, as a builder's value is given
    pub fn arm(&self, fault: Fault) -> FaultGuard<'_> {
        let armed = self.must(self.client.arm(&fault));
        FaultGuard::new(self, armed)
    }

    /// Runs `block` with a fault armed, then disarms that fault alone; `block`'s value.
    #[track_caller]
    pub fn with_fault<R>(&self, fault: Fault, block: impl FnOnce() -> R) -> R {
        let _armed = self.arm(fault);
        block()
    }

    /// The faults armed in the namespace.
    #[track_caller]
    pub fn armed(&self) -> Vec<ArmedFault> {
        self.must(self.client.armed())
    }

    /// Disarms every fault of the namespace.
    #[track_caller]
    pub fn clear_faults(&self) {
        self.must(self.client.clear_faults());
    }

    // -- what it serves -----------------------------------------------------------------------

    /// Serves these fixtures instead; the flag keys served.
    #[track_caller]
    #[allow(clippy::needless_pass_by_value)] // taken as `json!({...})` is written, with no `&`
    pub fn set_fixtures(&self, document: Value) -> Vec<String> {
        self.must(self.client.set_fixtures(&document, false))
    }

    /// Serves these fixtures over the served ones, key by key; the flag keys served.
    #[track_caller]
    #[allow(clippy::needless_pass_by_value)] // taken as `json!({...})` is written, with no `&`
    pub fn merge_fixtures(&self, document: Value) -> Vec<String> {
        self.must(self.client.set_fixtures(&document, true))
    }

    /// Serves the fixtures of a YAML or JSON file instead; the flag keys served.
    #[track_caller]
    pub fn set_fixtures_file(&self, path: impl AsRef<Path>) -> Vec<String> {
        self.must(self.client.set_fixtures_file(path, false))
    }

    /// Serves the fixtures of a YAML or JSON file over the served ones; the flag keys served.
    #[track_caller]
    pub fn merge_fixtures_file(&self, path: impl AsRef<Path>) -> Vec<String> {
        self.must(self.client.set_fixtures_file(path, true))
    }

    /// Seeds the management plane (organisations, keys, sessions, projects: a fixture file's
    /// `management:` section); the plane as it is now.
    #[track_caller]
    #[allow(clippy::needless_pass_by_value)] // taken as `json!({...})` is written, with no `&`
    pub fn seed_management(&self, seed: Value) -> Value {
        self.must(self.client.seed_management(&seed, false))
    }

    /// Seeds the management plane from a YAML or JSON file; the plane as it is now.
    #[track_caller]
    pub fn seed_management_file(&self, path: impl AsRef<Path>) -> Value {
        self.must(self.client.seed_management_file(path, false))
    }

    /// The management plane as it is now: every organisation, no key or token.
    #[track_caller]
    pub fn management(&self) -> Value {
        self.must(self.client.management())
    }

    /// Limits every key to `per_second` requests a second (`None`: no limit), and some keys to their own.
    #[track_caller]
    pub fn set_rate_limit(&self, per_second: Option<f64>, per_key: &[(&str, f64)]) {
        self.must(self.client.set_rate_limit(per_second, per_key));
    }

    /// Serves this `/flags` body verbatim on the vendor routes.
    #[track_caller]
    #[allow(clippy::needless_pass_by_value)] // taken as `json!({...})` is written, with no `&`
    pub fn set_vendor_flags(&self, body: Value) {
        self.must(self.client.set_vendor_flags(&body));
    }

    /// Clears what the namespace recorded and armed, and serves the start-up fixtures again.
    #[track_caller]
    pub fn reset(&self) {
        self.must(self.client.reset());
    }

    // -- what was sent ------------------------------------------------------------------------

    /// Everything clients sent to be kept.
    #[track_caller]
    pub fn recorded(&self) -> Recorded {
        self.must(self.client.recorded())
    }

    /// The exposures among the `/v1/capture` events.
    #[track_caller]
    pub fn exposures(&self) -> Vec<Event> {
        self.recorded().exposures()
    }

    /// The journal, in the order requests arrived: the requests to `route` ([`Route::Any`]:
    /// every one), each with its body ([`Request::text`], [`Request::json`]) and answer.
    #[track_caller]
    pub fn requests(&self, route: Route) -> Vec<Request> {
        self.must(self.client.requests(route))
    }

    /// One request of the journal, by its `seq`.
    #[track_caller]
    pub fn request(&self, seq: u64) -> Request {
        self.must(self.client.request(seq))
    }

    /// The time in ms between each request to `route` and the next.
    #[track_caller]
    pub fn gaps_ms(&self, route: Route) -> Vec<f64> {
        journal::gaps_ms(&self.requests(route))
    }

    // -- waits: the stub's long-poll, never a sleep -------------------------------------------

    /// Waits until `n` vendor `/batch` events are recorded, for at most `timeout` (up to 60 s);
    /// then panics with what did arrive and the journal's path.
    #[track_caller]
    pub fn wait_for_events(&self, n: usize, timeout: Duration) -> Vec<Event> {
        self.must(self.client.wait_for_recorded(List::Events, n, timeout))
    }

    /// Waits until `n` `/v1/capture` events are recorded.
    #[track_caller]
    pub fn wait_for_svc_events(&self, n: usize, timeout: Duration) -> Vec<Event> {
        self.must(self.client.wait_for_recorded(List::SvcEvents, n, timeout))
    }

    /// Waits until `n` `/v1/targets/register` bodies are recorded.
    #[track_caller]
    pub fn wait_for_targets(&self, n: usize, timeout: Duration) -> Vec<Event> {
        self.must(self.client.wait_for_recorded(List::Targets, n, timeout))
    }

    /// Waits until `n` requests to `route` ([`Route::Any`]: any) are in the journal.
    #[track_caller]
    pub fn wait_for_requests(&self, n: usize, route: Route, timeout: Duration) -> Vec<Request> {
        self.must(self.client.wait_for_requests(n, route, timeout))
    }

    // -- assertions: the stub's verdict, and on failure the journal's path --------------------

    /// What this test's requests met (its namespace's coverage), each profile held against it.
    #[track_caller]
    pub fn coverage(&self) -> Coverage {
        self.must(self.client.coverage(Scope::Namespace, None))
    }

    /// Panics with the stub's words, and the journal's path, unless its `check` holds.
    #[track_caller]
    fn assert_check(&self, check: &str, parameters: &[(&'static str, &str)]) {
        let verdict = self.must(self.client.check(check, parameters));
        if !verdict.passed {
            self.fail(&verdict.message);
        }
    }

    /// Asserts an exposure of `flag_key` for `targeting_key` was captured, of `variant` when one
    /// is given (`"treatment-b"` or `None`).
    #[track_caller]
    pub fn assert_exposure<'v>(&self, flag_key: &str, targeting_key: &str, variant: impl Into<Option<&'v str>>) {
        let mut parameters = vec![("flagKey", flag_key), ("targetingKey", targeting_key)];
        parameters.extend(variant.into().map(|variant| ("variant", variant)));
        self.assert_check("exposure", &parameters);
    }

    /// Asserts no request went to `route` (a resource such as [`Route::Projects`]: to any of
    /// its routes).
    #[track_caller]
    pub fn assert_no_request(&self, route: Route) {
        self.assert_check("no-request", &route_parameter(route));
    }

    /// Asserts no request used a key where the service would refuse it.
    #[track_caller]
    pub fn assert_no_warnings(&self) {
        self.assert_check("no-warnings", &[]);
    }

    /// Asserts no request to `route` ([`Route::Any`]: to any route, each on its own) came
    /// sooner after an answer than its `Retry-After` asked.
    #[track_caller]
    pub fn assert_no_retry_before_retry_after(&self, route: Route) {
        self.assert_check("retry-after", &route_parameter(route));
    }
}

fn route_parameter(route: Route) -> Vec<(&'static str, &'static str)> {
    (route != Route::Any).then(|| ("route", route.as_str())).into_iter().collect()
}

#[cfg(feature = "async")]
impl SvcStub {
    /// [`SvcStub::wait_for_events`] for an async test: the long-poll runs on a thread of its
    /// own, so the executor (a current-thread Tokio runtime too) keeps running the client. A
    /// wait that runs out panics at the line that called this, as the blocking wait does.
    #[track_caller]
    pub fn wait_for_events_async(&self, n: usize, timeout: Duration) -> impl Future<Output = Vec<Event>> + Send + '_ {
        let client = self.client.clone();
        self.off_thread(Location::caller(), move || client.wait_for_recorded(List::Events, n, timeout))
    }

    /// [`SvcStub::wait_for_svc_events`] for an async test.
    #[track_caller]
    pub fn wait_for_svc_events_async(
        &self,
        n: usize,
        timeout: Duration,
    ) -> impl Future<Output = Vec<Event>> + Send + '_ {
        let client = self.client.clone();
        self.off_thread(Location::caller(), move || client.wait_for_recorded(List::SvcEvents, n, timeout))
    }

    /// [`SvcStub::wait_for_targets`] for an async test.
    #[track_caller]
    pub fn wait_for_targets_async(&self, n: usize, timeout: Duration) -> impl Future<Output = Vec<Event>> + Send + '_ {
        let client = self.client.clone();
        self.off_thread(Location::caller(), move || client.wait_for_recorded(List::Targets, n, timeout))
    }

    /// [`SvcStub::wait_for_requests`] for an async test.
    #[track_caller]
    pub fn wait_for_requests_async(
        &self,
        n: usize,
        route: Route,
        timeout: Duration,
    ) -> impl Future<Output = Vec<Request>> + Send + '_ {
        let client = self.client.clone();
        self.off_thread(Location::caller(), move || client.wait_for_requests(n, route, timeout))
    }

    /// Runs `wait` on a thread of its own; a failure panics as though at `caller`, the test's
    /// line (`#[track_caller]` reaches no further than the function that made the future).
    fn off_thread<T: Send + 'static>(
        &self,
        caller: &'static Location<'static>,
        wait: impl FnOnce() -> Result<T> + Send + 'static,
    ) -> impl Future<Output = T> + Send + '_ {
        let waited = crate::nonblocking::off_thread(wait);
        async move {
            match self.checked(waited.await) {
                Ok(value) => value,
                Err(message) => crate::nonblocking::panic_at(caller, message),
            }
        }
    }
}

/// A fault armed for a scope: it is disarmed when the guard is dropped (a fault that ran out by
/// itself is fine). [`FaultGuard::keep`] leaves it armed for the rest of the test instead.
///
/// Bind it to a name: `let _ = stub.arm(...)` drops it, and so disarms it, at once.
#[derive(Debug)]
#[must_use = "the fault is disarmed when this guard is dropped: bind it (let _fault = stub.arm(...)) or call .keep()"]
pub struct FaultGuard<'s> {
    stub: &'s SvcStub,
    armed: Option<ArmedFault>,
}

impl<'s> FaultGuard<'s> {
    pub(crate) fn new(stub: &'s SvcStub, armed: ArmedFault) -> Self {
        FaultGuard { stub, armed: Some(armed) }
    }

    /// The fault as the stub armed it.
    #[must_use]
    #[allow(clippy::missing_panics_doc)] // a guard holds its fault until it is consumed
    pub fn armed(&self) -> &ArmedFault {
        self.armed.as_ref().expect("a guard holds its fault until dropped")
    }

    /// Leaves the fault armed for the rest of the test (the test's namespace goes with it).
    #[allow(clippy::must_use_candidate)] // `stub.arm(...).keep();` alone is how a test leaves it armed
    #[allow(clippy::missing_panics_doc)] // a guard holds its fault until it is consumed
    pub fn keep(mut self) -> ArmedFault {
        self.armed.take().expect("a guard holds its fault until dropped")
    }

    /// Disarms it now (as dropping the guard does).
    ///
    /// # Panics
    ///
    /// At the caller's line, with one line, if the stub refuses or does not answer.
    #[track_caller]
    pub fn disarm(mut self) {
        if let Err(error) = self.disarm_now() {
            panic!("{}", error.line());
        }
    }

    /// Disarms it now, with the error instead of a panic (a fault that ran out is no error).
    ///
    /// # Errors
    ///
    /// The stub's refusal, or [`Error::Unreachable`] when it does not answer.
    pub fn try_disarm(mut self) -> Result<()> {
        self.disarm_now()
    }

    fn disarm_now(&mut self) -> Result<()> {
        let Some(armed) = self.armed.take() else { return Ok(()) };
        match self.stub.client().disarm(armed.id) {
            Err(error) if !error.is_not_found() => Err(error),
            _ => Ok(()),
        }
    }
}

impl Drop for FaultGuard<'_> {
    /// Disarms the fault; a fault that already ran out is fine. A disarm that fails is said on
    /// stderr, never panicked with: a destructor that panics aborts a test that is already
    /// panicking, and hides its failure (C-DTOR-FAIL). [`FaultGuard::try_disarm`] returns it.
    fn drop(&mut self) {
        if let Err(error) = self.disarm_now() {
            eprintln!("{}", error.line());
        }
    }
}

impl Drop for SvcStub {
    /// Deletes the namespace; while the test panics (and expects no panic), writes its journal
    /// first and prints where (on stderr, which the test's output shows right after the panic).
    fn drop(&mut self) {
        let panicking = std::thread::panicking();
        if panicking && self.journal.get().is_none() && !self.panic_expected() {
            eprintln!("{}", self.keep_journal());
        }
        // said, never panicked with: a destructor that panics aborts a test already panicking
        // and hides its failure (C-DTOR-FAIL)
        if let Err(error) = self.client.delete_namespace(self.name()) {
            if !error.is_not_found() {
                eprintln!("svc-stub: deleting the test's namespace {}: {error}", self.name());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stub whose control plane is gone (nothing listens at its URL any more).
    fn stub_whose_stub_is_gone() -> SvcStub {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        drop(listener); // connections to it are refused from now on
        let client = Client::new(&url).unwrap().in_namespace("gone").unwrap();
        SvcStub { client, started_at: Location::caller(), journal: OnceLock::new() }
    }

    /// No destructor panics (C-DTOR-FAIL): a guard that cannot disarm, and a stub that cannot
    /// delete its namespace, say so and return; `try_disarm` gives the error to who wants it.
    #[test]
    fn destructors_that_fail_report_and_do_not_panic() {
        let stub = stub_whose_stub_is_gone();
        let armed = ArmedFault::from_json(&serde_json::json!({"id": 7, "mode": "500"}));
        drop(FaultGuard::new(&stub, armed.clone()));
        let error = FaultGuard::new(&stub, armed.clone()).try_disarm().unwrap_err();
        assert!(matches!(error, Error::Unreachable { .. }), "{error:?}");
        let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| FaultGuard::new(&stub, armed).disarm()));
        let message = refused.unwrap_err().downcast::<String>().unwrap();
        assert!(
            message.starts_with("svc-stub at http://127.0.0.1:") && message.contains("does not answer"),
            "{message}"
        );
        drop(stub);
    }

    /// An error says what to do in one line and carries what is underneath as its `source`.
    #[test]
    fn errors_carry_their_source() {
        use std::error::Error as _;
        let error = stub_whose_stub_is_gone().client().armed().unwrap_err();
        let io = error.source().and_then(|source| source.downcast_ref::<std::io::Error>());
        assert_eq!(io.map(std::io::Error::kind), Some(std::io::ErrorKind::ConnectionRefused), "{error:?}");
        assert_eq!(error.clone(), error);
        let file = Client::new("http://127.0.0.1:1").unwrap().set_fixtures_file("/nonexistent/flags.yaml", false);
        let file = file.unwrap_err();
        assert!(file.source().and_then(|s| s.downcast_ref::<std::io::Error>()).is_some(), "{file:?}");
    }
}
