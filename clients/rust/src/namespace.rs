//! A namespace per test: what it arms, serves and records stays in it, and it is deleted when
//! the value is dropped. Every method panics on an error, with one line, at the test's own line.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use crate::client::{Client, List};
use crate::error::{Error, Result};
use crate::faults::{ArmedFault, Fault, FaultGuard};
use crate::journal::{self, Event, Recorded, Request, RequestInFull};
use crate::vocabulary::Route;

/// Gives a test a namespace of its own on the run's stub ([`run_url`](crate::run_url)), named
/// after `name` (made safe, with a random suffix so parallel tests and runs never meet), and
/// deleted when the value is dropped. Give the code under test [`Namespace::url`].
///
/// Panics with one line when no stub can be had (see [`try_namespace`] for a `Result`).
#[track_caller]
pub fn namespace(name: &str) -> Namespace {
    Namespace::builder(name).create()
}

/// [`namespace`], with the error instead of a panic.
pub fn try_namespace(name: &str) -> Result<Namespace> {
    Namespace::builder(name).try_create()
}

/// svc-stub for one test: a namespace of its own on the run's stub.
///
/// `Namespace` is `Send` and `Sync`: threads of one test can share it by reference.
#[derive(Debug)]
pub struct Namespace {
    client: Client,
    /// The journal written for a failure, once: an assertion's panic names it, and a drop
    /// while panicking does not write it again.
    journal: OnceLock<String>,
}

/// Sets up a namespace: its fixtures and bound keys ([`Namespace::builder`]).
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until .create()"]
pub struct NamespaceBuilder {
    name: String,
    fixtures: Vec<Fixtures>,
    keys: Vec<String>,
}

#[derive(Debug, Clone)]
enum Fixtures {
    Document(Value),
    File(PathBuf),
}

impl NamespaceBuilder {
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

    /// Binds keys to the namespace: requests that name no namespace but present one of them are
    /// served in it, for a client that keeps no base path and cannot add a header. A key binds
    /// to one namespace at a time: parallel tests need keys of their own.
    pub fn keys<I, S>(mut self, keys: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.keys.extend(keys.into_iter().map(Into::into));
        self
    }

    /// Creates the namespace; panics with one line if it cannot.
    #[track_caller]
    pub fn create(self) -> Namespace {
        match self.try_create() {
            Ok(namespace) => namespace,
            Err(error) => panic!("{}", error.line()),
        }
    }

    /// Creates the namespace, or says why it cannot.
    pub fn try_create(self) -> Result<Namespace> {
        let stub = Client::new(&crate::run_url()?)?;
        let client = stub.create_namespace(&namespace_name(&self.name), &self.keys)?;
        let namespace = Namespace { client, journal: OnceLock::new() };
        for (i, fixtures) in self.fixtures.iter().enumerate() {
            let served = match fixtures {
                Fixtures::Document(document) => namespace.client.set_fixtures(document, i > 0),
                Fixtures::File(path) => namespace.client.set_fixtures_file(path, i > 0),
            };
            served.map_err(|error| match error {
                Error::Stub { status, code, message } => {
                    Error::Stub { status, code, message: format!("fixtures: {message}") }
                }
                other => other,
            })?;
        }
        Ok(namespace)
    }
}

impl Namespace {
    /// A namespace with fixtures or bound keys:
    /// `Namespace::builder("checkout").fixtures(json!({...})).keys(["phc_checkout"]).create()`.
    pub fn builder(name: &str) -> NamespaceBuilder {
        NamespaceBuilder { name: name.to_owned(), fixtures: Vec::new(), keys: Vec::new() }
    }

    /// The base URL to give the client under test: `{stub}/ns/{name}`.
    pub fn url(&self) -> &str {
        self.client.url()
    }

    /// The stub itself.
    pub fn base_url(&self) -> &str {
        self.client.base_url()
    }

    /// The namespace's name: the test's, made safe, and a random suffix.
    pub fn name(&self) -> &str {
        self.client.namespace().unwrap_or_default()
    }

    /// The control client in this namespace, whose methods return errors instead of panicking.
    pub fn client(&self) -> &Client {
        &self.client
    }

    #[track_caller]
    fn must<T>(&self, result: Result<T>) -> T {
        match result {
            Ok(value) => value,
            Err(Error::WaitTimeout(message)) => self.fail(&message),
            Err(error) => panic!("{}", error.line()),
        }
    }

    /// Panics with a failure's message and, after it, where the test's journal was written.
    #[track_caller]
    fn fail(&self, message: &str) -> ! {
        panic!("{message}\n{}", self.keep_journal())
    }

    /// Writes the namespace's journal (its inspector page, one HTML file) and says where, once.
    fn keep_journal(&self) -> &str {
        self.journal.get_or_init(|| {
            let written = self
                .client
                .snapshot()
                .map_err(|error| error.to_string())
                .and_then(|page| journal::write_snapshot(self.name(), &page).map_err(|error| error.to_string()));
            match written {
                Ok(path) => format!("svc-stub journal of this test: {} (open it in a browser)", path.display()),
                Err(problem) => format!("svc-stub journal not written: {problem}"),
            }
        })
    }

    // -- faults -------------------------------------------------------------------------------

    /// Arms a fault until the guard is dropped (or for its [`Fault::times`]); `.keep()` on the
    /// guard leaves it armed for the rest of the test.
    ///
    /// ```no_run
    /// # use svc_stub::{Fault, Mode, Selector};
    /// # let ns = svc_stub::namespace("doc");
    /// {
    ///     let _outage = ns.arm(Fault::new(Mode::Http500).on(Selector::Evaluate));
    ///     // ... evaluate fails here ...
    /// } // disarmed
    /// ```
    #[track_caller]
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
    pub fn set_fixtures(&self, document: Value) -> Vec<String> {
        self.must(self.client.set_fixtures(&document, false))
    }

    /// Serves these fixtures over the served ones, key by key; the flag keys served.
    #[track_caller]
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

    /// The journal, oldest first: the requests to `route` ([`Route::Any`]: every one).
    #[track_caller]
    pub fn requests(&self, route: Route) -> Vec<Request> {
        self.must(self.client.requests(route))
    }

    /// One request in full: its body, the answer it got, a curl line.
    #[track_caller]
    pub fn request(&self, seq: u64) -> RequestInFull {
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

    // -- assertions: on failure, what was recorded instead, and the journal's path ------------

    /// Asserts an exposure of `flag_key` for `targeting_key` was captured, of `variant` when one
    /// is given (`"treatment-b"` or `None`).
    #[track_caller]
    pub fn assert_exposure<'v>(&self, flag_key: &str, targeting_key: &str, variant: impl Into<Option<&'v str>>) {
        let exposures = self.exposures();
        if let Some(failure) = journal::exposure_missing(&exposures, flag_key, targeting_key, variant.into()) {
            self.fail(&failure);
        }
    }

    /// Asserts no request went to `route` ([`Route::Any`]: none at all).
    #[track_caller]
    pub fn assert_no_request(&self, route: Route) {
        if let Some(failure) = journal::unexpected_requests(&self.requests(route), route) {
            self.fail(&failure);
        }
    }

    /// Asserts no request used a key where the service would refuse it.
    #[track_caller]
    pub fn assert_no_warnings(&self) {
        if let Some(failure) = journal::warned_requests(&self.requests(Route::Any)) {
            self.fail(&failure);
        }
    }

    /// Asserts no request to `route` came sooner after an answer than its `Retry-After` asked.
    #[track_caller]
    pub fn assert_no_retry_before_retry_after(&self, route: Route) {
        if let Some(failure) = journal::early_retries(&self.requests(route), route) {
            self.fail(&failure);
        }
    }
}

#[cfg(feature = "async")]
impl Namespace {
    /// [`Namespace::wait_for_events`] for an async test: the long-poll runs on a thread of its
    /// own, so the executor (a current-thread Tokio runtime too) keeps running the client.
    pub async fn wait_for_events_async(&self, n: usize, timeout: Duration) -> Vec<Event> {
        let client = self.client.clone();
        let waited = crate::nonblocking::off_thread(move || client.wait_for_recorded(List::Events, n, timeout)).await;
        self.must(waited)
    }

    /// [`Namespace::wait_for_svc_events`] for an async test.
    pub async fn wait_for_svc_events_async(&self, n: usize, timeout: Duration) -> Vec<Event> {
        let client = self.client.clone();
        let waited =
            crate::nonblocking::off_thread(move || client.wait_for_recorded(List::SvcEvents, n, timeout)).await;
        self.must(waited)
    }

    /// [`Namespace::wait_for_targets`] for an async test.
    pub async fn wait_for_targets_async(&self, n: usize, timeout: Duration) -> Vec<Event> {
        let client = self.client.clone();
        let waited = crate::nonblocking::off_thread(move || client.wait_for_recorded(List::Targets, n, timeout)).await;
        self.must(waited)
    }

    /// [`Namespace::wait_for_requests`] for an async test.
    pub async fn wait_for_requests_async(&self, n: usize, route: Route, timeout: Duration) -> Vec<Request> {
        let client = self.client.clone();
        let waited = crate::nonblocking::off_thread(move || client.wait_for_requests(n, route, timeout)).await;
        self.must(waited)
    }
}

impl Drop for Namespace {
    /// Deletes the namespace; while the test panics, writes its journal first and prints where
    /// (on stderr, which the test's output shows right after the panic's message).
    fn drop(&mut self) {
        let panicking = std::thread::panicking();
        if panicking && self.journal.get().is_none() {
            eprintln!("{}", self.keep_journal());
        }
        let name = self.name().to_owned();
        if let Err(error) = self.client.delete_namespace(&name) {
            if !error.is_not_found() && !panicking {
                panic!("svc-stub: deleting the test's namespace: {error}");
            }
        }
    }
}

/// The test's name made safe (at most 55 of `A-Z a-z 0-9 . _ -`), a dash and 8 random hex
/// digits: readable in `/_test/namespaces`, and unique across parallel tests and runs.
pub(crate) fn namespace_name(test_name: &str) -> String {
    let mut readable = String::with_capacity(test_name.len());
    for c in test_name.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            readable.push(c);
        } else if !readable.ends_with('-') {
            readable.push('-');
        }
    }
    let trim = |s: &str| s.trim_matches(|c| matches!(c, '-' | '.' | '_')).to_owned();
    let mut readable = trim(&readable);
    if readable.len() > 55 {
        readable = trim(&readable[..55]);
    }
    if readable.is_empty() {
        readable = "test".to_owned();
    }
    format!("{readable}-{}", random_suffix())
}

fn random_suffix() -> String {
    static DRAWN: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher(); // randomly keyed by the standard library
    hasher.write_u64(DRAWN.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    if let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(now.as_nanos());
    }
    format!("{:08x}", hasher.finish() as u32)
}

#[cfg(test)]
mod tests {
    use super::namespace_name;

    #[test]
    fn names_are_safe_short_and_unique() {
        let name = namespace_name("checkout::tests::falls back (500)");
        let (readable, suffix) = name.rsplit_once('-').unwrap();
        assert_eq!(readable, "checkout-tests-falls-back-500");
        assert!(suffix.len() == 8 && suffix.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(namespace_name("a"), namespace_name("a"));
        assert!(namespace_name(&"x".repeat(200)).len() <= 64);
        assert!(namespace_name("::").starts_with("test-"));
    }
}
