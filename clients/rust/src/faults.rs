//! Faults to arm, built with typed modes and selectors; armed for a scope by a guard value.

use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::vocabulary::{Mode, Selector, Word, HEADER_DELAY_MS, HEADER_FAULT, HEADER_RETRY_AFTER, HEADER_STATUS};

/// A fault to arm: one [`Mode`] with its parameters, or a sequence of [`Step`]s.
///
/// ```
/// use std::time::Duration;
/// use svc_stub::{Fault, Mode, Selector, Step};
///
/// let once = Fault::new(Mode::Http500).apply_to(Selector::Evaluate).times(1);
/// let slow = Fault::new(Mode::Delay).delay(Duration::from_millis(300));
/// let outage = Fault::with_status(503).retry_after(2).apply_to(Selector::Projects);
/// let flaky = Fault::sequence([Step::new(Mode::Http500), Step::pass(), Step::new(Mode::Reset)]);
/// # let _ = (once, slow, outage, flaky);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use = "a Fault does nothing until it is armed: stub.arm(fault)"]
pub struct Fault {
    kind: Kind,
    apply_to: Vec<Selector>,
    ttl_requests: Option<u32>,
    parameters: Parameters,
    probability: Option<(f64, i64)>,
}

/// One mode, or a sequence of steps: never both, never neither.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Mode(Mode),
    Sequence(Vec<Step>),
}

/// A step of a sequence: a mode with its own parameters, or [`Step::pass`].
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct Step {
    mode: Option<Mode>,
    parameters: Parameters,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct Parameters {
    delay: Option<Duration>,
    status: Option<u16>,
    body: Option<Value>,
    retry_after: Option<u32>,
}

impl Parameters {
    fn write(&self, into: &mut Map<String, Value>) {
        if let Some(delay) = self.delay {
            into.insert("delayMs".into(), json!(u64::try_from(delay.as_millis()).unwrap_or(u64::MAX)));
        }
        if let Some(status) = self.status {
            into.insert("status".into(), json!(status));
        }
        if let Some(body) = &self.body {
            into.insert("body".into(), body.clone());
        }
        if let Some(retry_after) = self.retry_after {
            into.insert("retryAfter".into(), json!(retry_after));
        }
    }
}

macro_rules! parameter_setters {
    () => {
        /// How late the answer comes (`Delay`), or how long its body takes (`SlowBody`); the
        /// stub's default is 10 s.
        pub fn delay(mut self, delay: Duration) -> Self {
            self.parameters.delay = Some(delay);
            self
        }

        /// The answer's status: required for [`Mode::Status`] (which [`Fault::with_status`] and
        /// [`Step::with_status`] take).
        pub fn status(mut self, status: u16) -> Self {
            self.parameters.status = Some(status);
            self
        }

        /// The answer's body instead of the mode's: a string is sent as it is, anything else as
        /// JSON (`InvalidJson` takes only a string).
        pub fn body(mut self, body: impl Into<Value>) -> Self {
            self.parameters.body = Some(body.into());
            self
        }

        /// Seconds in `Retry-After`, for `Http429` and `Status` 429 or 503 (the stub's default 1).
        pub fn retry_after(mut self, seconds: u32) -> Self {
            self.parameters.retry_after = Some(seconds);
            self
        }
    };
}

impl Fault {
    /// A fault of one mode, on every route until it is disarmed.
    pub fn new(mode: Mode) -> Fault {
        Fault {
            kind: Kind::Mode(mode),
            apply_to: Vec::new(),
            ttl_requests: None,
            parameters: Parameters::default(),
            probability: None,
        }
    }

    /// A fault of [`Mode::Status`], with the status it answers (a 503, a 418): a
    /// [`Mode::Status`] fault with no status is refused before it is sent.
    pub fn with_status(status: u16) -> Fault {
        Fault::new(Mode::Status).status(status)
    }

    /// One step per matching request, then disarmed (no [`Fault::times`] with it).
    pub fn sequence(steps: impl IntoIterator<Item = Step>) -> Fault {
        Fault {
            kind: Kind::Sequence(steps.into_iter().collect()),
            apply_to: Vec::new(),
            ttl_requests: None,
            parameters: Parameters::default(),
            probability: None,
        }
    }

    /// Applies it to this route, resource or group too (default: [`Selector::All`]): the
    /// arming document's `applyTo`.
    pub fn apply_to(mut self, selector: Selector) -> Self {
        if !self.apply_to.contains(&selector) {
            self.apply_to.push(selector);
        }
        self
    }

    /// Faults only the next `requests` matching requests, then disarms itself.
    pub fn times(mut self, requests: u32) -> Self {
        self.ttl_requests = Some(requests);
        self
    }

    /// Fires on this share (0, 1] of matching requests, drawn from a generator seeded with `seed`
    /// so a run is repeatable.
    pub fn probability(mut self, share: f64, seed: i64) -> Self {
        self.probability = Some((share, seed));
        self
    }

    parameter_setters!();

    /// The mode, unless it is a sequence.
    #[must_use]
    pub fn mode(&self) -> Option<Mode> {
        match self.kind {
            Kind::Mode(mode) => Some(mode),
            Kind::Sequence(_) => None,
        }
    }

    /// What the stub would refuse, found before it is sent: a [`Mode::Status`] (or a step of
    /// one) with no status.
    pub(crate) fn check(&self) -> Result<()> {
        let missing = match &self.kind {
            Kind::Mode(mode) => *mode == Mode::Status && self.parameters.status.is_none(),
            Kind::Sequence(steps) => {
                steps.iter().any(|step| step.mode == Some(Mode::Status) && step.parameters.status.is_none())
            }
        };
        if missing {
            return Err(Error::invalid(
                "svc-stub: a Mode::Status fault needs its status: Fault::with_status(503) (or Step::with_status in a sequence)",
            ));
        }
        Ok(())
    }

    /// The `POST /_test/fault` document this fault is armed with: what the stub is sent.
    pub fn arming_document(&self) -> Value {
        let mut document = Map::new();
        match &self.kind {
            Kind::Mode(mode) => document.insert("mode".into(), json!(mode.as_str())),
            Kind::Sequence(steps) => {
                document.insert("sequence".into(), Value::Array(steps.iter().map(Step::wire).collect()))
            }
        };
        if !self.apply_to.is_empty() {
            document.insert("applyTo".into(), self.apply_to.iter().map(|s| s.as_str()).collect());
        }
        if let Some(ttl) = self.ttl_requests {
            document.insert("ttlRequests".into(), json!(ttl));
        }
        if let Some((share, seed)) = self.probability {
            document.insert("probability".into(), json!(share));
            document.insert("seed".into(), json!(seed));
        }
        self.parameters.write(&mut document);
        Value::Object(document)
    }

    /// The headers that fault one request this way, whatever is armed: add them to the
    /// client's request. Its mode, delay, status and Retry-After are sent.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`], naming what headers cannot carry, for a fault that is more than one
    /// request's mode and those parameters: a sequence, a body, [`Fault::times`],
    /// [`Fault::apply_to`] or [`Fault::probability`] (arm such a fault instead), or a
    /// [`Mode::Status`] with no status. Nothing is dropped in silence.
    pub fn headers(&self) -> Result<Vec<(&'static str, String)>> {
        let Kind::Mode(mode) = self.kind else {
            return Err(Error::invalid("svc-stub: a sequence cannot be sent as headers: arm it (stub.arm(fault))"));
        };
        self.check()?;
        let unsent: Vec<&str> = [
            ("a body", self.parameters.body.is_some()),
            ("times", self.ttl_requests.is_some()),
            ("apply_to", !self.apply_to.is_empty()),
            ("probability", self.probability.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect();
        if !unsent.is_empty() {
            return Err(Error::invalid(format!(
                "svc-stub: fault headers carry a mode, delay, status and Retry-After, not {}: arm the fault instead \
                 (stub.arm(fault))",
                unsent.join(", ")
            )));
        }
        let mut headers = vec![(HEADER_FAULT, mode.as_str().to_owned())];
        if let Some(delay) = self.parameters.delay {
            headers.push((HEADER_DELAY_MS, delay.as_millis().to_string()));
        }
        if let Some(status) = self.parameters.status {
            headers.push((HEADER_STATUS, status.to_string()));
        }
        if let Some(retry_after) = self.parameters.retry_after {
            headers.push((HEADER_RETRY_AFTER, retry_after.to_string()));
        }
        Ok(headers)
    }
}

/// The headers that fault one request as `fault` says (see [`Fault::headers`]).
///
/// # Errors
///
/// [`Error::Invalid`] for what headers cannot carry (see [`Fault::headers`]).
pub fn fault_headers(fault: &Fault) -> Result<Vec<(&'static str, String)>> {
    fault.headers()
}

impl Step {
    /// A step of this mode.
    pub fn new(mode: Mode) -> Step {
        Step { mode: Some(mode), parameters: Parameters::default() }
    }

    /// A step of [`Mode::Status`], with the status it answers.
    pub fn with_status(status: u16) -> Step {
        Step::new(Mode::Status).status(status)
    }

    /// A step that lets one request through (the stub's `none`).
    pub fn pass() -> Step {
        Step { mode: None, parameters: Parameters::default() }
    }

    parameter_setters!();

    fn wire(&self) -> Value {
        let mut step = Map::new();
        step.insert("mode".into(), json!(self.mode.map_or("none", Mode::as_str)));
        self.parameters.write(&mut step);
        Value::Object(step)
    }
}

/// A fault as the stub armed it.
///
/// Of its parameters (`delay`, `status`, `body`, `retry_after`) the stub lists only those its
/// mode uses: any other is `None`, as all four are for a sequence.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ArmedFault {
    /// Its id in the namespace (for `DELETE /_test/fault/{id}`).
    pub id: u64,
    /// What it applies to, groups expanded, sorted (a [`Word::Other`] for a selector newer
    /// than this crate).
    pub apply_to: Vec<Word<Selector>>,
    /// Its mode; `None` for a sequence.
    pub mode: Option<Mode>,
    /// How many requests it still faults; `None`: until disarmed.
    pub ttl_requests: Option<u64>,
    /// How many times it fired.
    pub fired: u64,
    /// How late its answer comes, for [`Mode::Delay`] and [`Mode::SlowBody`].
    pub delay: Option<Duration>,
    /// The status it answers with, for the modes that make their own answer; `None` too where it
    /// is the mode's own.
    pub status: Option<u16>,
    /// The body it answers with instead of the mode's; `None` where it is the mode's own, and for
    /// the modes that make no answer of their own.
    pub body: Option<Value>,
    /// Seconds in its `Retry-After`, for [`Mode::Http429`], and [`Mode::Status`] with 429 or 503.
    pub retry_after: Option<u64>,
    /// The fault as the stub lists it.
    pub json: Value,
}

impl ArmedFault {
    pub(crate) fn from_json(value: &Value) -> ArmedFault {
        ArmedFault {
            id: value["id"].as_u64().unwrap_or(0),
            apply_to: value["applyTo"]
                .as_array()
                .map(|all| all.iter().filter_map(Value::as_str).map(Word::read).collect())
                .unwrap_or_default(),
            mode: value["mode"].as_str().and_then(|mode| mode.parse().ok()),
            ttl_requests: value["ttlRequests"].as_u64(),
            fired: value["fired"].as_u64().unwrap_or(0),
            // absent (a parameter the mode does not use) and null (the mode's own) read None alike
            delay: value["delayMs"].as_u64().map(Duration::from_millis),
            status: value["status"].as_u64().and_then(|status| u16::try_from(status).ok()),
            body: value.get("body").filter(|body| !body.is_null()).cloned(),
            retry_after: value["retryAfter"].as_u64(),
            json: value.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPENAPI: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../stub/openapi.json");

    /// Each record of an armed fault the stub's document shows reads as listed: a parameter it has
    /// is read, one it leaves out (its mode does not use it) is `None`.
    #[test]
    fn an_armed_fault_reads_the_parameters_a_record_lists_and_no_other() {
        let text = std::fs::read_to_string(OPENAPI).unwrap_or_else(|e| panic!("{OPENAPI}: {e}"));
        let document: Value = serde_json::from_str(&text).unwrap();
        let schemas = &document["components"]["schemas"];
        let mut parameters: Vec<&str> =
            schemas["FaultStep"]["properties"].as_object().unwrap().keys().map(String::as_str).collect();
        parameters.retain(|member| *member != "mode");
        parameters.sort_unstable();
        assert_eq!(parameters, ["body", "delayMs", "retryAfter", "status"], "a parameter ArmedFault does not read");
        let examples = schemas["ArmedFault"]["examples"].as_array().expect("the document shows armed faults");
        assert!(examples.len() >= 3, "the document shows too few armed faults");
        for listed in examples {
            let armed = ArmedFault::from_json(listed);
            let read = [
                ("delayMs", armed.delay.map(|delay| json!(u64::try_from(delay.as_millis()).unwrap()))),
                ("status", armed.status.map(|status| json!(status))),
                ("body", armed.body.clone()),
                ("retryAfter", armed.retry_after.map(|seconds| json!(seconds))),
            ];
            for (member, value) in read {
                let want = listed.get(member).filter(|value| !value.is_null());
                assert_eq!(value.as_ref(), want, "{member} of {listed}");
            }
        }
    }
}
