//! What clients sent, as the stub's journal records it; the failure messages of the
//! assertions on it; and the journal snapshot a failed test leaves behind.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::vocabulary::Route;

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
    pub fn exposures(&self) -> Vec<Event> {
        self.svc_events.iter().filter(|event| event["type"] == "exposure").cloned().collect()
    }
}

/// The fault that fired on a request, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FaultRecord {
    /// The mode as the stub spells it (`"none"`: a sequence step that let the request through).
    pub mode: String,
    /// `header`, `query`, `armed` or `rate-limit`.
    pub source: String,
    /// The armed fault's id, for `source: armed`.
    pub armed_id: Option<u64>,
    /// The step of an armed sequence.
    pub step: Option<u64>,
}

/// One request as the journal lists it (`GET /_test/requests`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Request {
    /// Its place in the namespace's journal, from 1.
    pub seq: u64,
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path, without the namespace's `/ns/{name}`.
    pub path: String,
    /// The query, as the stub parsed it.
    pub query: Map<String, Value>,
    /// The route's name (see [`Route`]); `None` for a path the stub does not serve.
    pub route: Option<String>,
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
}

impl Request {
    pub(crate) fn from_json(value: &Value) -> Request {
        let fault = value["fault"].as_object().map(|fault| FaultRecord {
            mode: text(&fault.get("mode").cloned().unwrap_or_default()),
            source: text(&fault.get("source").cloned().unwrap_or_default()),
            armed_id: fault.get("armedId").and_then(Value::as_u64),
            step: fault.get("step").and_then(Value::as_u64),
        });
        Request {
            seq: value["seq"].as_u64().unwrap_or(0),
            method: text(&value["method"]),
            path: text(&value["path"]),
            query: value["query"].as_object().cloned().unwrap_or_default(),
            route: value["route"].as_str().map(str::to_owned),
            status: value["status"].as_u64().and_then(|s| u16::try_from(s).ok()),
            client_gone: value["clientGone"].as_bool().unwrap_or(false),
            fault,
            arrived_ms: value["arrivedMs"].as_f64().unwrap_or(0.0),
            duration_ms: value["durationMs"].as_f64().unwrap_or(0.0),
            warning: value["warning"].as_str().map(str::to_owned),
            retry_after: value["retryAfter"].as_u64(),
            headers: value["headers"]
                .as_object()
                .map(|headers| headers.iter().map(|(k, v)| (k.clone(), text(v))).collect())
                .unwrap_or_default(),
        }
    }

    pub(crate) fn list(value: &Value) -> Vec<Request> {
        value["requests"].as_array().map(|all| all.iter().map(Request::from_json).collect()).unwrap_or_default()
    }

    /// Whether it is the route (a resource covers its actions; [`Route::Any`] covers all).
    pub fn is(&self, route: Route) -> bool {
        let Some(name) = self.route.as_deref() else { return route == Route::Any };
        route == Route::Any
            || name == route.as_str()
            || name.strip_prefix(route.as_str()).is_some_and(|action| action.starts_with('.'))
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

/// One request in full: the body it sent, the answer it got and a curl line.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RequestInFull {
    /// As the journal lists it.
    pub request: Request,
    /// The body it sent.
    pub body: Option<RecordedBody>,
    /// What it was answered; `None` when nothing was.
    pub answer: Option<RecordedAnswer>,
    /// A bash command line that sends it again to this namespace.
    pub curl: String,
}

impl RequestInFull {
    pub(crate) fn from_json(value: &Value) -> RequestInFull {
        let answer = value["answer"].as_object().map(|answer| RecordedAnswer {
            status: answer.get("status").and_then(Value::as_u64).and_then(|s| u16::try_from(s).ok()).unwrap_or(0),
            headers: answer
                .get("headers")
                .and_then(Value::as_object)
                .map(|headers| headers.iter().map(|(k, v)| (k.clone(), text(v))).collect())
                .unwrap_or_default(),
            body: answer.get("body").and_then(RecordedBody::from_json),
        });
        RequestInFull {
            request: Request::from_json(value),
            body: RecordedBody::from_json(&value["body"]),
            answer,
            curl: text(&value["curl"]),
        }
    }
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

// -- the assertions' failure messages: None when the assertion holds ------------------------

pub(crate) fn exposure_missing(
    exposures: &[Event],
    flag_key: &str,
    targeting_key: &str,
    variant: Option<&str>,
) -> Option<String> {
    let found = exposures.iter().any(|e| {
        e["flagKey"] == flag_key && e["targetingKey"] == targeting_key && variant.map_or(true, |v| e["variant"] == v)
    });
    if found {
        return None;
    }
    let mut wanted = format!("exposure of {flag_key} for {targeting_key}");
    if let Some(variant) = variant {
        wanted.push_str(&format!(" (variant {variant})"));
    }
    Some(format!("no {wanted}; exposures recorded:\n{}", shown(exposures)))
}

pub(crate) fn unexpected_requests(requests: &[Request], route: Route) -> Option<String> {
    if requests.is_empty() {
        return None;
    }
    Some(format!("expected no request to {}, got {}:\n{}", route.described(), requests.len(), listed(requests)))
}

pub(crate) fn warned_requests(requests: &[Request]) -> Option<String> {
    let lines: Vec<String> = requests
        .iter()
        .filter_map(|r| r.warning.as_ref().map(|warning| format!("  #{} {} {}: {warning}", r.seq, r.method, r.path)))
        .collect();
    match lines.len() {
        0 => None,
        1 => Some(format!("1 request used a key where the service refuses it:\n{}", lines[0])),
        n => Some(format!("{n} requests used a key where the service refuses it:\n{}", lines.join("\n"))),
    }
}

/// What a timer may fire early by before a wait counts as short.
const RETRY_AFTER_SLACK_MS: f64 = 5.0;

pub(crate) fn early_retries(requests: &[Request], route: Route) -> Option<String> {
    let lines: Vec<String> = requests
        .windows(2)
        .filter_map(|pair| {
            let (before, after) = (&pair[0], &pair[1]);
            let retry_after = before.retry_after?;
            let waited = after.arrived_ms - (before.arrived_ms + before.duration_ms);
            (waited + RETRY_AFTER_SLACK_MS < retry_after as f64 * 1000.0).then(|| {
                format!(
                    "  #{} came {:.0} ms after #{} was answered {} with Retry-After: {retry_after}",
                    after.seq,
                    waited,
                    before.seq,
                    before.status.map_or_else(|| "nothing".to_owned(), |s| s.to_string()),
                )
            })
        })
        .collect();
    if lines.is_empty() {
        return None;
    }
    Some(format!("retried {} before Retry-After allowed:\n{}", route.described(), lines.join("\n")))
}

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
pub(crate) fn write_snapshot(namespace: &str, page: &str) -> std::io::Result<PathBuf> {
    let directory = journal_directory();
    fs::create_dir_all(&directory)?;
    let path = directory.join(format!("{namespace}.html"));
    let mut file = OpenOptions::new().write(true).create(true).truncate(true).open(&path)?;
    file.write_all(page.as_bytes())?;
    Ok(path)
}

/// `SVC_STUB_JOURNAL_DIR`; else `svc-stub-journal` in cargo's target directory (the one that
/// holds this test binary), where `cargo clean` removes it and CI's cache of `target/` keeps it.
pub(crate) fn journal_directory() -> PathBuf {
    if let Some(directory) = std::env::var_os(crate::JOURNAL_VARIABLE).filter(|d| !d.is_empty()) {
        let directory = PathBuf::from(directory);
        return std::env::current_dir().map(|here| here.join(&directory)).unwrap_or(directory);
    }
    target_directory()
        .or_else(|| std::env::var_os("CARGO_MANIFEST_DIR").map(|manifest| Path::new(&manifest).join("target")))
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default()
        .join("svc-stub-journal")
}

/// Cargo's target directory: the nearest ancestor of this binary that cargo tagged (`CACHEDIR.TAG`).
fn target_directory() -> Option<PathBuf> {
    let binary = std::env::current_exe().ok()?;
    binary.ancestors().skip(1).find(|directory| directory.join("CACHEDIR.TAG").is_file()).map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(seq: u64, route: &str, arrived: f64, retry_after: Option<u64>) -> Request {
        Request::from_json(&json!({
            "seq": seq, "method": "POST", "path": "/v1/flags/evaluate", "route": route, "status": 429,
            "arrivedMs": arrived, "durationMs": 1.0, "retryAfter": retry_after, "headers": {}, "query": {},
        }))
    }

    #[test]
    fn a_resource_covers_its_actions() {
        let created = request(1, "projects.create", 0.0, None);
        assert!(created.is(Route::Projects) && created.is(Route::ProjectsCreate) && created.is(Route::Any));
        assert!(!created.is(Route::Environments) && !created.is(Route::ProjectsGet));
    }

    #[test]
    fn an_early_retry_is_named() {
        let requests = [request(1, "evaluate", 0.0, Some(1)), request(2, "evaluate", 200.0, None)];
        let failure = early_retries(&requests, Route::Evaluate).unwrap();
        assert_eq!(
            failure,
            "retried evaluate before Retry-After allowed:\n  #2 came 199 ms after #1 was answered 429 with Retry-After: 1"
        );
        let late = [request(1, "evaluate", 0.0, Some(1)), request(2, "evaluate", 1001.0, None)];
        assert_eq!(early_retries(&late, Route::Evaluate), None);
        assert_eq!(gaps_ms(&late), vec![1001.0]);
    }
}
