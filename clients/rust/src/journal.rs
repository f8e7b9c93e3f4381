//! What clients sent, as the stub's journal records it, and the journal snapshot a failed test
//! leaves behind.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_core::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::{Cause, Error, Result};
use crate::vocabulary::{FaultSource, Mode, Route, Word};

/// One JSON object a client sent: an exposure, a signal, a vendor event, a target.
pub type Event = Value;

/// Everything clients sent to be kept (`GET /_test/events`).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Recorded {
    /// Items of vendor `/batch` bodies, in arrival order.
    pub events: Vec<Event>,
    /// Events of `/v1/capture` bodies, in arrival order.
    pub svc_events: Vec<Event>,
    /// `/v1/targets/register` bodies, in arrival order.
    pub targets: Vec<Event>,
    /// How many of each list the stub let go of (`--max-recorded`).
    pub dropped: Dropped,
}

/// How many recorded entries the stub let go of, per list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Dropped {
    /// Of `events`.
    pub events: u64,
    /// Of `svc_events`.
    pub svc_events: u64,
    /// Of `targets`.
    pub targets: u64,
}

impl Recorded {
    pub(crate) fn from_json(value: &Value) -> Recorded {
        let dropped = &value["dropped"];
        Recorded {
            events: array(&value["events"]),
            svc_events: array(&value["svcEvents"]),
            targets: array(&value["targets"]),
            dropped: Dropped {
                events: dropped["events"].as_u64().unwrap_or(0),
                svc_events: dropped["svcEvents"].as_u64().unwrap_or(0),
                targets: dropped["targets"].as_u64().unwrap_or(0),
            },
        }
    }

    /// The exposures among the `/v1/capture` events (`"type": "exposure"`).
    #[must_use]
    pub fn exposures(&self) -> Vec<Event> {
        self.svc_events.iter().filter(|event| event["type"] == "exposure").cloned().collect()
    }
}

/// The fault that fired on a request, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FaultRecord {
    /// Its mode; `None` for the stub's `none`: a request or sequence step let through.
    pub mode: Option<Word<Mode>>,
    /// Where it came from: its headers, its query, an armed fault, or the key's rate limit.
    pub source: Word<FaultSource>,
    /// The armed fault's id, for `source: armed`.
    pub armed_id: Option<u64>,
    /// The step of an armed sequence.
    pub step: Option<u64>,
}

/// One request of the journal (`GET /_test/requests?bodies=true`): what was sent, the answer
/// it got, and its body, one call away as [`Request::text`] or [`Request::json`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Request {
    /// Its place in the namespace's journal, from 1: the order requests arrived in.
    pub seq: u64,
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path, without the namespace's `/ns/{name}`.
    pub path: String,
    /// The query, as the stub parsed it.
    pub query: Map<String, Value>,
    /// Its route (a [`Word::Other`] for a route newer than this crate); `None` for a path the
    /// stub does not serve.
    pub route: Option<Word<Route>>,
    /// The answer's status; `None` when none was given (a reset, a hang, a client that left).
    pub status: Option<u16>,
    /// The client went away before its answer.
    pub client_gone: bool,
    /// The fault that fired on it.
    pub fault: Option<FaultRecord>,
    /// When it arrived, in ms since the stub started.
    pub arrived_ms: f64,
    /// How long its answer took, in ms.
    pub duration_ms: f64,
    /// Why the service would have refused its key (a key on the wrong plane).
    pub warning: Option<String>,
    /// The `Retry-After` it was answered with, in seconds.
    pub retry_after: Option<u64>,
    /// Its headers, names in lower case, secrets redacted.
    pub headers: BTreeMap<String, String>,
    /// The body it sent; `None` when it sent none.
    pub body: Option<RecordedBody>,
    /// What it was answered; `None` when nothing was.
    pub answer: Option<RecordedAnswer>,
    /// A bash command line that sends it again to this namespace.
    pub curl: String,
}

impl Request {
    pub(crate) fn from_json(value: &Value) -> Request {
        let fault = value["fault"].as_object().map(|fault| FaultRecord {
            mode: fault.get("mode").and_then(Value::as_str).filter(|mode| *mode != "none").map(Word::read),
            source: Word::read(fault.get("source").and_then(Value::as_str).unwrap_or_default()),
            armed_id: fault.get("armedId").and_then(Value::as_u64),
            step: fault.get("step").and_then(Value::as_u64),
        });
        let answer = value["answer"].as_object().map(|answer| RecordedAnswer {
            status: answer.get("status").and_then(Value::as_u64).and_then(|s| u16::try_from(s).ok()).unwrap_or(0),
            headers: headers(answer.get("headers").unwrap_or(&Value::Null)),
            body: answer.get("body").and_then(RecordedBody::from_json),
        });
        Request {
            seq: value["seq"].as_u64().unwrap_or(0),
            method: text(&value["method"]),
            path: text(&value["path"]),
            query: value["query"].as_object().cloned().unwrap_or_default(),
            route: value["route"].as_str().map(Word::read),
            status: value["status"].as_u64().and_then(|s| u16::try_from(s).ok()),
            client_gone: value["clientGone"].as_bool().unwrap_or(false),
            fault,
            arrived_ms: value["arrivedMs"].as_f64().unwrap_or(0.0),
            duration_ms: value["durationMs"].as_f64().unwrap_or(0.0),
            warning: value["warning"].as_str().map(str::to_owned),
            retry_after: value["retryAfter"].as_u64(),
            headers: headers(&value["headers"]),
            body: RecordedBody::from_json(&value["body"]),
            answer,
            curl: text(&value["curl"]),
        }
    }

    pub(crate) fn list(value: &Value) -> Vec<Request> {
        value["requests"].as_array().map(|all| all.iter().map(Request::from_json).collect()).unwrap_or_default()
    }

    /// Whether it is the route (a resource covers its actions; [`Route::Any`] covers all).
    pub fn is(&self, route: Route) -> bool {
        let Some(name) = self.route.as_ref().map(Word::<Route>::as_str) else { return route == Route::Any };
        route == Route::Any
            || name == route.as_str()
            || name.strip_prefix(route.as_str()).is_some_and(|action| action.starts_with('.'))
    }

    /// The body it sent, as text; `None` when it sent none, or bytes that are not UTF-8.
    #[must_use]
    pub fn text(&self) -> Option<&str> {
        self.body.as_ref()?.text.as_deref()
    }

    /// The body it sent, parsed as JSON into `T` (a `serde_json::Value`, or a type of yours
    /// that derives `Deserialize`).
    ///
    /// # Panics
    ///
    /// With one line, when it sent none or it does not parse as `T` (see [`Request::try_json`]).
    ///
    /// ```no_run
    /// # use svc_stub::Route;
    /// # let stub = svc_stub::start();
    /// let sent = stub.requests(Route::Evaluate);
    /// let body: serde_json::Value = sent[0].json();
    /// assert_eq!(body["targetingKey"], "user-1");
    /// ```
    #[track_caller]
    #[must_use]
    pub fn json<T: DeserializeOwned>(&self) -> T {
        self.try_json().unwrap_or_else(|error| panic!("{error}"))
    }

    /// [`Request::json`], with the error instead of a panic.
    ///
    /// # Errors
    ///
    /// [`Error::Body`] when it sent no body, or one that does not parse as `T` (its `source`:
    /// the `serde_json::Error`).
    pub fn try_json<T: DeserializeOwned>(&self) -> Result<T> {
        let text = self.text().ok_or_else(|| {
            let bytes = self.body.as_ref().map_or(0, |body| body.bytes);
            let what = if bytes == 0 { "no body".to_owned() } else { format!("{bytes} bytes that are not text") };
            Error::Body {
                message: format!("svc-stub: #{} {} {} sent {what}, not JSON", self.seq, self.method, self.path),
                source: None,
            }
        })?;
        serde_json::from_str(text).map_err(|error| Error::Body {
            message: format!(
                "svc-stub: the body of #{} {} {} does not read as {}: {error}",
                self.seq,
                self.method,
                self.path,
                std::any::type_name::<T>()
            ),
            source: Some(Cause::new(error)),
        })
    }
}

/// A body as it was sent: `text` when it is UTF-8, else `base64`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecordedBody {
    /// The body, when it is UTF-8 (as JSON is).
    pub text: Option<String>,
    /// The body in base64, when it is not UTF-8.
    pub base64: Option<String>,
    /// Its size.
    pub bytes: u64,
}

impl RecordedBody {
    fn from_json(value: &Value) -> Option<RecordedBody> {
        value.as_object().map(|body| RecordedBody {
            text: body.get("text").and_then(Value::as_str).map(str::to_owned),
            base64: body.get("base64").and_then(Value::as_str).map(str::to_owned),
            bytes: body.get("bytes").and_then(Value::as_u64).unwrap_or(0),
        })
    }
}

/// What the stub answered a request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecordedAnswer {
    /// Its status.
    pub status: u16,
    /// Its headers as sent.
    pub headers: BTreeMap<String, String>,
    /// Its body; `None` when it was streamed.
    pub body: Option<RecordedBody>,
}

/// A namespace as the stub lists it (`GET /_test/namespaces`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NamespaceInfo {
    /// Its name.
    pub name: String,
    /// How many keys are bound to it.
    pub bound_keys: u64,
    /// How many flags it serves.
    pub flags: u64,
    /// How many faults are armed in it.
    pub armed_faults: u64,
    /// How many of each recorded list it holds (`requests`, `events`, `svcEvents`, `targets`).
    pub recorded: BTreeMap<String, u64>,
}

impl NamespaceInfo {
    pub(crate) fn from_json(value: &Value) -> NamespaceInfo {
        NamespaceInfo {
            name: text(&value["name"]),
            bound_keys: value["boundKeys"].as_u64().unwrap_or(0),
            flags: value["flags"].as_u64().unwrap_or(0),
            armed_faults: value["armedFaults"].as_u64().unwrap_or(0),
            recorded: value["recorded"]
                .as_object()
                .map(|counts| counts.iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0))).collect())
                .unwrap_or_default(),
        }
    }
}

fn headers(value: &Value) -> BTreeMap<String, String> {
    value.as_object().map(|headers| headers.iter().map(|(k, v)| (k.clone(), text(v))).collect()).unwrap_or_default()
}

fn array(value: &Value) -> Vec<Value> {
    value.as_array().cloned().unwrap_or_default()
}

fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

// -- what a failed wait shows ------------------------------------------------------------

pub(crate) fn gaps_ms(requests: &[Request]) -> Vec<f64> {
    requests.windows(2).map(|pair| ((pair[1].arrived_ms - pair[0].arrived_ms) * 1000.0).round() / 1000.0).collect()
}

pub(crate) fn listed(requests: &[Request]) -> String {
    if requests.is_empty() {
        return "  (none)".to_owned();
    }
    let lines: Vec<String> = requests
        .iter()
        .map(|r| {
            let status = r.status.map_or_else(|| "no answer".to_owned(), |s| s.to_string());
            format!("  #{} {} {} -> {status}", r.seq, r.method, r.path)
        })
        .collect();
    lines.join("\n")
}

pub(crate) fn shown(events: &[Event]) -> String {
    if events.is_empty() {
        return "(none)".to_owned();
    }
    serde_json::to_string_pretty(events).unwrap_or_default()
}

// -- the journal a failed test leaves --------------------------------------------------------

/// Writes a namespace's inspector page as `{namespace}.html` in the journal directory; its path.
/// The first journal a run writes there removes those of earlier runs: a run is this process's
/// parent (the `cargo test` running it) and the stub it used (`stub_url`), as `.run` records.
pub(crate) fn write_snapshot(namespace: &str, page: &str, stub_url: &str) -> std::io::Result<PathBuf> {
    static PRUNED: OnceLock<()> = OnceLock::new();
    let directory = journal_directory();
    fs::create_dir_all(&directory)?;
    PRUNED.get_or_init(|| {
        #[cfg(unix)]
        let run = format!("{} {stub_url}", std::os::unix::process::parent_id());
        #[cfg(not(unix))]
        let run = stub_url.to_owned();
        let marker = directory.join(".run");
        if fs::read_to_string(&marker).ok().as_deref() != Some(run.as_str()) {
            let earlier = fs::read_dir(&directory).into_iter().flatten().flatten().map(|entry| entry.path());
            earlier.filter(|path| path.extension().is_some_and(|e| e == "html")).for_each(|path| {
                let _ = fs::remove_file(path);
            });
            let _ = fs::write(&marker, run);
        }
    });
    let path = directory.join(format!("{namespace}.html"));
    fs::write(&path, page)?;
    Ok(path)
}

/// `SVC_STUB_JOURNAL_DIR`; else `svc-stub-journal` in cargo's target directory: the nearest
/// folder above this test binary (`target/debug/deps/...`) that cargo tagged `CACHEDIR.TAG`.
pub(crate) fn journal_directory() -> PathBuf {
    if let Some(directory) = std::env::var_os(crate::JOURNAL_VARIABLE).filter(|d| !d.is_empty()) {
        let directory = PathBuf::from(directory);
        return std::env::current_dir().map(|here| here.join(&directory)).unwrap_or(directory);
    }
    let binary = std::env::current_exe().unwrap_or_default();
    let target = binary.ancestors().skip(1).find(|directory| directory.join("CACHEDIR.TAG").is_file());
    target.map_or_else(std::env::temp_dir, Path::to_path_buf).join("svc-stub-journal")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[allow(clippy::needless_pass_by_value)]
    fn request(body: Value) -> Request {
        Request::from_json(&json!({
            "seq": 3, "method": "POST", "path": "/v1/capture", "route": "capture", "status": 200,
            "arrivedMs": 1.0, "durationMs": 1.0, "headers": {}, "query": {}, "body": body,
        }))
    }

    /// A word a newer stub says (a route, a mode, a source) is kept as it came, not a failure
    /// to read; the words this crate knows read as its enums.
    #[test]
    fn a_newer_stubs_words_are_kept_as_other() {
        let newer = Request::from_json(&json!({
            "seq": 1, "method": "GET", "path": "/v2/x", "route": "experiments.list",
            "fault": {"mode": "teapot", "source": "schedule"},
        }));
        assert_eq!(newer.route, Some(Word::Other("experiments.list".into())));
        let fault = newer.fault.unwrap();
        assert_eq!((fault.mode, fault.source), (Some(Word::Other("teapot".into())), Word::Other("schedule".into())));
        let known = Request::from_json(&json!({
            "seq": 2, "method": "POST", "path": "/v1/capture", "route": "capture",
            "fault": {"mode": "none", "source": "armed", "armedId": 4, "step": 2},
        }));
        assert_eq!(known.route, Some(Word::Known(Route::Capture)));
        let fault = known.fault.unwrap();
        assert_eq!((fault.mode, fault.source), (None, Word::Known(FaultSource::Armed)));
        let armed =
            crate::ArmedFault::from_json(&json!({"id": 3, "applyTo": ["evaluate", "experiments"], "mode": "500"}));
        assert_eq!(armed.apply_to, [Word::Known(crate::Selector::Evaluate), Word::Other("experiments".into())]);
    }

    #[test]
    fn a_resource_covers_its_actions() {
        let mut created = request(Value::Null);
        created.route = Some(Route::ProjectsCreate.into());
        assert!(created.is(Route::Projects) && created.is(Route::ProjectsCreate) && created.is(Route::Any));
        assert!(!created.is(Route::Environments) && !created.is(Route::ProjectsGet));
    }

    #[test]
    fn a_body_reads_as_text_and_json_or_says_why_not() {
        let sent = request(json!({"text": "{\"events\": [1, 2]}", "bytes": 17}));
        assert_eq!(sent.text(), Some("{\"events\": [1, 2]}"));
        assert_eq!(sent.json::<Value>()["events"][1], 2);
        let events: BTreeMap<String, Vec<u32>> = sent.json();
        assert_eq!(events["events"], [1, 2]);
        let error = sent.try_json::<Vec<u32>>().unwrap_err();
        let source = std::error::Error::source(&error).and_then(|s| s.downcast_ref::<serde_json::Error>());
        assert!(source.is_some_and(serde_json::Error::is_data), "{error:?}");
        let error = error.to_string();
        assert!(error.starts_with("svc-stub: the body of #3 POST /v1/capture does not read as alloc::vec::Vec<u32>: "));
        let none = request(Value::Null);
        assert_eq!(none.text(), None);
        assert_eq!(
            none.try_json::<Value>().unwrap_err().to_string(),
            "svc-stub: #3 POST /v1/capture sent no body, not JSON"
        );
        let binary = request(json!({"base64": "AAE=", "bytes": 2}));
        let error = binary.try_json::<Value>().unwrap_err().to_string();
        assert_eq!(error, "svc-stub: #3 POST /v1/capture sent 2 bytes that are not text, not JSON");
    }
}
