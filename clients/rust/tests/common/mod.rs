//! What the crate's own tests share: a client's request to a namespace, as a client library
//! sends it, and what that client sees of the answer.

#![allow(dead_code)] // each test binary uses its own part

use std::time::{Duration, Instant};

use serde_json::Value;

/// What a client sees of one evaluate: an answer, or the error that took its place.
#[derive(Debug)]
pub struct Seen {
    pub status: Option<u16>,
    pub retry_after: Option<String>,
    /// The body, when it is JSON.
    pub decoded: Option<Value>,
    pub error: Option<String>,
    pub took: Duration,
}

impl Seen {
    /// The first decision's value, as a client reads it.
    pub fn value(&self) -> Option<&str> {
        self.decoded.as_ref()?["decisions"][0]["value"].as_str()
    }
}

/// Sends one evaluate of checkout-v2 for user-1 to `url` (a namespace's), waiting at most
/// `timeout`, with `headers` added.
/// How long a test's client waits for an answer: a guard against a hang, not a speed budget (an
/// answer on a busy 2-core machine can take well over a second).
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

pub fn evaluate(url: &str, headers: &[(&str, String)], timeout: Duration) -> Seen {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .max_idle_connections(0)
        .build()
        .into();
    let mut request = agent
        .post(&format!("{url}/v1/flags/evaluate"))
        .header("Authorization", "Bearer project-api-key_rust")
        .content_type("application/json");
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let started = Instant::now();
    let answer = request.send(r#"{"targetingKey": "user-1", "flagKeys": ["checkout-v2"]}"#);
    let mut seen = Seen { status: None, retry_after: None, decoded: None, error: None, took: Duration::ZERO };
    match answer {
        Err(error) => seen.error = Some(error.to_string()),
        Ok(mut answer) => {
            seen.status = Some(answer.status().as_u16());
            seen.retry_after = answer.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(str::to_owned);
            match answer.body_mut().read_to_string() {
                Ok(text) => seen.decoded = serde_json::from_str(&text).ok(),
                Err(error) => seen.error = Some(error.to_string()),
            }
        }
    }
    seen.took = started.elapsed();
    seen
}

/// Sends one `/v1/capture` of these events to `url`.
pub fn capture(url: &str, events: Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(ANSWER_TIMEOUT)).build().into();
    agent
        .post(&format!("{url}/v1/capture"))
        .header("Authorization", "Bearer project-api-key_rust")
        .content_type("application/json")
        .send(serde_json::json!({ "events": events }).to_string())
        .expect("capture");
}

/// The message of a panic caught by `catch_unwind`.
pub fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload.downcast_ref::<&str>().map(|s| (*s).to_owned()).unwrap_or_default(),
    }
}

/// Sends one `/v1/capture`; its status.
pub fn try_capture(url: &str, events: Value) -> Option<u16> {
    let agent: ureq::Agent =
        ureq::Agent::config_builder().timeout_global(Some(ANSWER_TIMEOUT)).http_status_as_error(false).build().into();
    let answer = agent
        .post(&format!("{url}/v1/capture"))
        .header("Authorization", "Bearer project-api-key_rust")
        .content_type("application/json")
        .send(serde_json::json!({ "events": events }).to_string());
    answer.ok().map(|answer| answer.status().as_u16())
}
