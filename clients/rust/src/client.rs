//! The stub's control plane (`/_test/*`), call by call, returning errors: what a
//! [`SvcStub`](crate::SvcStub) calls, and what a harness of its own can use.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::coverage::{Coverage, Scope};
use crate::error::{Cause, Error, Result};
use crate::faults::{ArmedFault, Fault};
use crate::http::{self, Outgoing, Target};
use crate::journal::{Event, NamespaceInfo, Recorded, Request};
use crate::vocabulary::{Route, Word};

/// How long a wait on the journal waits when not told.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(5);

/// The longest the stub long-polls.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// How long a control call may take, on top of its long-poll.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// A client of svc-stub's control plane, in one namespace when it has one. Its methods return
/// errors; a [`SvcStub`](crate::SvcStub) calls them and panics instead. Cloning is cheap.
///
/// # Errors
///
/// Every method that calls the stub returns [`Error::Unreachable`] when nothing (or something
/// other than svc-stub) answers, its `source` the `io::Error` or JSON error underneath, and
/// [`Error::Stub`] when the stub refuses the call (its status, code and message); a wait also
/// [`Error::WaitTimeout`] with what did arrive; a URL, file or fault found wrong before
/// anything is sent, [`Error::Invalid`]. (Said once here rather than on each method.)
#[derive(Debug, Clone)]
pub struct Client {
    base_url: String,
    namespace: Option<String>,
    url: String,
    control_token: Option<String>,
    target: Target,
}

/// The stub's verdict on a check of the journal (`GET /_test/checks/{check}`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Check {
    /// Whether it held.
    pub passed: bool,
    /// What a failed assertion shows, as is; when it passed, what held.
    pub message: String,
}

/// One recorded list to wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum List {
    Events,
    SvcEvents,
    Targets,
}

impl List {
    fn name(self) -> &'static str {
        match self {
            List::Events => "events",
            List::SvcEvents => "svcEvents",
            List::Targets => "targets",
        }
    }

    fn minimum(self) -> &'static str {
        match self {
            List::Events => "minEvents",
            List::SvcEvents => "minSvcEvents",
            List::Targets => "minTargets",
        }
    }

    fn of(self, recorded: Recorded) -> Vec<Event> {
        match self {
            List::Events => recorded.events,
            List::SvcEvents => recorded.svc_events,
            List::Targets => recorded.targets,
        }
    }
}

#[allow(clippy::missing_errors_doc)] // the errors of every method: the type's `# Errors`
impl Client {
    /// A client of the stub at `url`, in its default namespace; `SVC_STUB_CONTROL_TOKEN` is its
    /// control token. The error says what is wrong with the URL.
    pub fn new(url: &str) -> Result<Client> {
        let base_url = url.trim_end_matches('/').to_owned();
        let target = Target::parse(&base_url).map_err(|problem| Error::invalid(format!("svc-stub: {problem}")))?;
        let control_token = std::env::var(crate::TOKEN_VARIABLE).ok().filter(|token| !token.is_empty());
        Ok(Client { url: base_url.clone(), base_url, namespace: None, control_token, target })
    }

    /// The same stub, in namespace `name` (created by its first request there).
    pub fn in_namespace(&self, name: &str) -> Result<Client> {
        let url = format!("{}/ns/{}", self.base_url, http::encode(name));
        let target = Target::parse(&url).map_err(Error::invalid)?;
        Ok(Client { url, namespace: Some(name.to_owned()), target, ..self.clone() })
    }

    /// The base URL to give a client library: the stub's, or `{stub}/ns/{namespace}`.
    #[must_use]
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The stub itself.
    #[must_use]
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The namespace every call is in; `None`: the default one.
    #[must_use]
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The stub's control token, which every call presents.
    #[must_use]
    pub fn with_control_token(mut self, token: impl Into<String>) -> Client {
        self.control_token = Some(token.into());
        self
    }

    /// Whether svc-stub answers at the URL (`GET /health` says ok).
    pub fn health(&self) -> Result<()> {
        let body = self.call(&Call::get("/health").unscoped())?;
        if body["ok"] == true {
            Ok(())
        } else {
            Err(Error::Unreachable {
                url: self.base_url.clone(),
                reason: "its /health does not say ok".into(),
                source: None,
            })
        }
    }

    /// The stub's version (its `OpenAPI` document's `info.version`).
    pub fn version(&self) -> Result<String> {
        let document = self.call(&Call::get("/_test/openapi.json").unscoped())?;
        Ok(document["info"]["version"].as_str().unwrap_or_default().to_owned())
    }

    /// Clears everything recorded and armed in the namespace, and serves its start-up fixtures again.
    pub fn reset(&self) -> Result<()> {
        self.call(&Call::post("/_test/reset", &json!({}))).map(drop)
    }

    /// Arms a fault until it is disarmed (or for its [`Fault::times`]).
    pub fn arm(&self, fault: &Fault) -> Result<ArmedFault> {
        fault.check()?;
        let answer = self.call(&Call::post("/_test/fault", &fault.arming_document()))?;
        Ok(ArmedFault::from_json(&answer["fault"]))
    }

    /// The faults armed in the namespace.
    pub fn armed(&self) -> Result<Vec<ArmedFault>> {
        let answer = self.call(&Call::get("/_test/fault"))?;
        Ok(answer["armed"].as_array().map(|all| all.iter().map(ArmedFault::from_json).collect()).unwrap_or_default())
    }

    /// Disarms one fault; a 404 [`Error::Stub`] if it is not armed (it may have run out).
    pub fn disarm(&self, id: u64) -> Result<()> {
        self.call(&Call::delete(&format!("/_test/fault/{id}"))).map(drop)
    }

    /// Disarms every fault of the namespace.
    pub fn clear_faults(&self) -> Result<()> {
        self.call(&Call::delete("/_test/fault")).map(drop)
    }

    /// Everything clients sent to be kept.
    pub fn recorded(&self) -> Result<Recorded> {
        Ok(Recorded::from_json(&self.call(&Call::get("/_test/events"))?))
    }

    /// The journal in the order requests arrived (by `seq`), each with its body, its answer and
    /// a curl line: the requests to `route` ([`Route::Any`]: every one; a resource such as
    /// [`Route::Projects`]: each of its actions). A request still in flight (a `Delay` or `Hang`
    /// fault) is listed once it has ended.
    pub fn requests(&self, route: Route) -> Result<Vec<Request>> {
        Ok(Request::list(&self.call(&Call::get("/_test/requests").query("bodies", "true").route(route))?))
    }

    /// One request of the journal.
    pub fn request(&self, seq: u64) -> Result<Request> {
        Ok(Request::from_json(&self.call(&Call::get(&format!("/_test/requests/{seq}")))?))
    }

    /// The stub's verdict on `check` (`retry-after`, `no-request`, `exposure`, `no-warnings`)
    /// over the namespace's journal, with these parameters: whether it held, and in what words.
    pub fn check(&self, check: &str, parameters: &[(&'static str, &str)]) -> Result<Check> {
        let mut call = Call::get(&format!("/_test/checks/{check}"));
        for (name, value) in parameters {
            call = call.query(name, value);
        }
        let answer = self.call(&call)?;
        Ok(Check { passed: answer["passed"] == true, message: answer["message"].as_str().unwrap_or_default().into() })
    }

    /// What requests met (`GET /_test/coverage`): the namespace's count ([`Scope::Namespace`])
    /// or the whole run's ([`Scope::Run`]), each profile held against it (`profile`: one alone).
    pub fn coverage(&self, scope: Scope, profile: Option<&str>) -> Result<Coverage> {
        let mut call = Call::get("/_test/coverage").query("scope", scope.as_str());
        if let Some(profile) = profile {
            call = call.query("profile", profile);
        }
        Ok(Coverage::from_json(self.call(&call)?))
    }

    /// An address where nothing listens, for a test of a client's offline behaviour: a port the
    /// stub holds bound for its whole life and never listens on, so every connection is refused.
    pub fn offline_url(&self) -> Result<String> {
        let answer = self.call(&Call::get("/_test/offline").unscoped())?;
        Ok(answer["url"].as_str().unwrap_or_default().to_owned())
    }

    /// The namespace's inspector page, as one HTML file: the journal a failed test leaves.
    pub fn snapshot(&self) -> Result<String> {
        let answer = self.exchange(&Call::get("/_test/ui/snapshot"))?;
        Ok(String::from_utf8_lossy(&answer.body).into_owned())
    }

    /// Long-polls the stub until `list` holds `n`, or `timeout` passes (at most 60 s); then
    /// [`Error::WaitTimeout`] shows what did arrive.
    pub(crate) fn wait_for_recorded(&self, list: List, n: usize, timeout: Duration) -> Result<Vec<Event>> {
        let wait_ms = wait_ms(timeout);
        let call = Call::get("/_test/events")
            .query(list.minimum(), &n.to_string())
            .query("waitMs", &wait_ms.to_string())
            .waiting(wait_ms);
        let got = list.of(Recorded::from_json(&self.call(&call)?));
        if got.len() < n {
            return Err(Error::WaitTimeout(format!(
                "waited {} for {n} {}, got {}:\n{}",
                seconds(wait_ms),
                list.name(),
                got.len(),
                crate::journal::shown(&got)
            )));
        }
        Ok(got)
    }

    /// Long-polls the stub until `n` vendor `/batch` events are recorded.
    pub fn wait_for_events(&self, n: usize, timeout: Duration) -> Result<Vec<Event>> {
        self.wait_for_recorded(List::Events, n, timeout)
    }

    /// Long-polls the stub until `n` `/v1/capture` events are recorded.
    pub fn wait_for_svc_events(&self, n: usize, timeout: Duration) -> Result<Vec<Event>> {
        self.wait_for_recorded(List::SvcEvents, n, timeout)
    }

    /// Long-polls the stub until `n` `/v1/targets/register` bodies are recorded.
    pub fn wait_for_targets(&self, n: usize, timeout: Duration) -> Result<Vec<Event>> {
        self.wait_for_recorded(List::Targets, n, timeout)
    }

    /// Long-polls the stub until `n` requests to `route` ([`Route::Any`]: any) are in the
    /// journal; a browser's preflight counts only when it is the route asked for.
    pub fn wait_for_requests(&self, n: usize, route: Route, timeout: Duration) -> Result<Vec<Request>> {
        let wait_ms = wait_ms(timeout);
        let call = Call::get("/_test/requests")
            .query("bodies", "true")
            .query("min", &n.to_string())
            .query("waitMs", &wait_ms.to_string())
            .waiting(wait_ms)
            .route(route);
        let requests = Request::list(&self.call(&call)?);
        let counted = requests
            .iter()
            .filter(|r| route != Route::Any || r.route.as_ref().and_then(Word::known) != Some(Route::Preflight))
            .count();
        if counted < n {
            return Err(Error::WaitTimeout(format!(
                "waited {} for {n} requests to {}, got {counted}:\n{}",
                seconds(wait_ms),
                route.described(),
                crate::journal::listed(&requests)
            )));
        }
        Ok(requests)
    }

    /// Serves these fixtures in the namespace (`merge`: over the served ones, key by key); the
    /// flag keys served.
    pub fn set_fixtures(&self, fixtures: &Value, merge: bool) -> Result<Vec<String>> {
        let answer = self.call(&Call::post("/_test/fixtures", fixtures).merging(merge))?;
        Ok(strings(&answer["flags"]))
    }

    /// Serves the fixtures of a YAML or JSON file (read here: the stub opens no path it is sent).
    pub fn set_fixtures_file(&self, path: impl AsRef<Path>, merge: bool) -> Result<Vec<String>> {
        let call = Call::file("/_test/fixtures", path.as_ref())?.merging(merge);
        Ok(strings(&self.call(&call)?["flags"]))
    }

    /// Seeds the management plane (a fixture file's `management:` section); the plane as it is now.
    pub fn seed_management(&self, seed: &Value, merge: bool) -> Result<Value> {
        self.call(&Call::post("/_test/management", seed).merging(merge))
    }

    /// Seeds the management plane from a YAML or JSON file holding a `management:` section.
    pub fn seed_management_file(&self, path: impl AsRef<Path>, merge: bool) -> Result<Value> {
        self.call(&Call::file("/_test/management", path.as_ref())?.merging(merge))
    }

    /// The management plane as it is now: every organisation, no key or token.
    pub fn management(&self) -> Result<Value> {
        self.call(&Call::get("/_test/management"))
    }

    /// Serves this `/flags` body verbatim on the vendor routes.
    pub fn set_vendor_flags(&self, body: &Value) -> Result<()> {
        self.call(&Call::post("/_test/flags", body)).map(drop)
    }

    /// Limits every key to `per_second` requests a second (`None`: no limit), and some keys to their own.
    pub fn set_rate_limit(&self, per_second: Option<f64>, per_key: &[(&str, f64)]) -> Result<()> {
        let per_key: serde_json::Map<String, Value> =
            per_key.iter().map(|(key, rate)| ((*key).to_owned(), json!(rate))).collect();
        self.call(&Call::post("/_test/rate-limit", &json!({"perSecond": per_second, "perKey": per_key}))).map(drop)
    }

    /// Creates a namespace for the test `test` identifies (any id: the stub makes a valid,
    /// distinct, readable name of it), with these keys bound to it; a client in it.
    pub fn create_namespace(&self, test: &str, keys: &[String]) -> Result<Client> {
        let created = self.call(&Call::post("/_test/namespaces", &json!({"test": test, "keys": keys})).unscoped())?;
        self.in_namespace(created["name"].as_str().unwrap_or_default())
    }

    /// Every namespace and what it holds.
    pub fn namespaces(&self) -> Result<Vec<NamespaceInfo>> {
        let answer = self.call(&Call::get("/_test/namespaces").unscoped())?;
        Ok(answer["namespaces"]
            .as_array()
            .map(|all| all.iter().map(NamespaceInfo::from_json).collect())
            .unwrap_or_default())
    }

    /// Deletes a namespace and everything in it.
    pub fn delete_namespace(&self, name: &str) -> Result<()> {
        self.call(&Call::delete(&format!("/_test/namespaces/{}", http::encode(name))).unscoped()).map(drop)
    }

    // -- over HTTP ----------------------------------------------------------------------------

    fn call(&self, call: &Call) -> Result<Value> {
        let answer = self.exchange(call)?;
        if answer.body.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_slice(&answer.body).map_err(|error| Error::Unreachable {
            url: self.base_url.clone(),
            reason: format!("{} answers something other than svc-stub's JSON", call.path),
            source: Some(Cause::new(error)),
        })
    }

    fn exchange(&self, call: &Call) -> Result<http::Answer> {
        let mut path = call.path.clone();
        for (i, (name, value)) in call.query.iter().enumerate() {
            path.push(if i == 0 { '?' } else { '&' });
            let _ = write!(path, "{name}={}", http::encode(value));
        }
        let authorization = self.control_token.as_ref().map(|token| format!("Bearer {token}"));
        let mut headers = Vec::new();
        if let Some(content_type) = call.content_type {
            headers.push(("Content-Type", content_type));
        }
        if let Some(authorization) = &authorization {
            headers.push(("Authorization", authorization.as_str()));
        }
        let target =
            if call.unscoped { Target::parse(&self.base_url).map_err(Error::invalid)? } else { self.target.clone() };
        let outgoing = Outgoing {
            method: call.method,
            path: &path,
            headers: &headers,
            body: call.body.as_deref(),
            timeout: CALL_TIMEOUT + Duration::from_millis(call.wait_ms),
        };
        let answer = http::send(&target, &outgoing).map_err(|error| Error::Unreachable {
            url: self.base_url.clone(),
            reason: http::reason(&error),
            source: Some(Cause::new(error)),
        })?;
        if answer.status >= 300 {
            return Err(stub_error(answer.status, &answer.body));
        }
        Ok(answer)
    }
}

/// One control call.
struct Call {
    method: &'static str,
    path: String,
    query: Vec<(&'static str, String)>,
    body: Option<Vec<u8>>,
    content_type: Option<&'static str>,
    /// To the stub itself rather than into the namespace (the namespace registry).
    unscoped: bool,
    wait_ms: u64,
}

impl Call {
    fn new(method: &'static str, path: &str) -> Call {
        Call {
            method,
            path: path.to_owned(),
            query: Vec::new(),
            body: None,
            content_type: None,
            unscoped: false,
            wait_ms: 0,
        }
    }

    fn get(path: &str) -> Call {
        Call::new("GET", path)
    }

    fn delete(path: &str) -> Call {
        Call::new("DELETE", path)
    }

    fn post(path: &str, body: &Value) -> Call {
        Call {
            body: Some(body.to_string().into_bytes()),
            content_type: Some("application/json"),
            ..Call::new("POST", path)
        }
    }

    /// A POST of a YAML or JSON file's text (JSON is YAML too).
    fn file(path: &str, file: &Path) -> Result<Call> {
        let text = std::fs::read(file).map_err(|error| Error::Invalid {
            message: format!("svc-stub: fixtures: {}: {error}", file.display()),
            source: Some(Cause::new(error)),
        })?;
        Ok(Call { body: Some(text), content_type: Some("application/yaml"), ..Call::new("POST", path) })
    }

    fn query(mut self, name: &'static str, value: &str) -> Call {
        self.query.push((name, value.to_owned()));
        self
    }

    /// Keeps the requests to `route` ([`Route::Any`]: no filter).
    fn route(self, route: Route) -> Call {
        if route == Route::Any {
            self
        } else {
            self.query("route", route.as_str())
        }
    }

    fn merging(self, merge: bool) -> Call {
        if merge {
            self.query("merge", "true")
        } else {
            self
        }
    }

    fn unscoped(mut self) -> Call {
        self.unscoped = true;
        self
    }

    fn waiting(mut self, wait_ms: u64) -> Call {
        self.wait_ms = wait_ms;
        self
    }
}

fn stub_error(status: u16, body: &[u8]) -> Error {
    if let Ok(document) = serde_json::from_slice::<Value>(body) {
        if let Some(code) = document["error"].as_str() {
            let message = document["message"].as_str().unwrap_or_default().to_owned();
            return Error::Stub { status, code: code.to_owned(), message };
        }
    }
    let text = String::from_utf8_lossy(body);
    let text: String = text.trim().chars().take(200).collect();
    Error::Stub { status, code: "ERROR".into(), message: text }
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().map(|all| all.iter().filter_map(Value::as_str).map(str::to_owned).collect()).unwrap_or_default()
}

fn wait_ms(timeout: Duration) -> u64 {
    u64::try_from(timeout.min(MAX_WAIT).as_millis()).unwrap_or(u64::MAX)
}

/// A wait as a test reads it: `5s`, `1.5s`, `300ms`.
fn seconds(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        #[allow(clippy::cast_precision_loss)] // a wait's ms: at most 60 000
        let seconds = ms as f64 / 1000.0;
        format!("{seconds}s")
    }
}
