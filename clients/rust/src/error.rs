//! What can go wrong, each as one line that says what to do, with the error underneath it (an
//! `io::Error`, a JSON error, the stub's own refusal) as its [`source`](std::error::Error::source).

use std::fmt;
use std::sync::Arc;

/// An error of svc-stub's control: each one's `Display` is one line that says what to do; its
/// [`source`](std::error::Error::source) is the error underneath, where there is one (an
/// `io::Error` to downcast to, a `serde_json::Error`, or the [`Error`] a check of the stub met).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// No stub could be had from `svc-stub shared`: no `svc-stub` to run, or the stub's own line
    /// on why it did not start.
    Start {
        /// The line to show.
        message: String,
        /// Why `svc-stub shared` could not be run, when it could not.
        source: Option<Cause>,
    },
    /// The stub at `SVC_STUB_URL` (or the run's) cannot be used: nothing or something else
    /// answers there, or it is older than this crate.
    Check {
        /// The line to show.
        message: String,
        /// What the check of the stub met, when a call failed.
        source: Option<Box<Error>>,
    },
    /// Nothing (or something other than svc-stub) answers a control call at `url`.
    Unreachable {
        /// The stub's URL.
        url: String,
        /// Why: "connection refused", "no answer in time", ...
        reason: String,
        /// The `io::Error` (or the JSON error of an answer that is not svc-stub's) underneath.
        source: Option<Cause>,
    },
    /// The stub refused a control call: its status, error code and message.
    Stub {
        /// The HTTP status.
        status: u16,
        /// The stub's error code (`BAD_REQUEST`, `NOT_FOUND`, ...).
        code: String,
        /// The stub's message, which names the member at fault.
        message: String,
    },
    /// A wait on the journal ran out; the message shows what did arrive.
    WaitTimeout(String),
    /// A mistake found before anything was sent (a URL, a fixture file, a fault the stub would
    /// refuse).
    Invalid {
        /// The line to show.
        message: String,
        /// The `io::Error` of a file that could not be read.
        source: Option<Cause>,
    },
    /// A recorded request's body is not what was asked of it (none, or not JSON of that type).
    Body {
        /// The line to show.
        message: String,
        /// The `serde_json::Error` of a body that does not parse as the type asked for.
        source: Option<Cause>,
    },
}

/// The error underneath an [`Error`]: shared, so that an `Error` stays `Clone` (the run's stub
/// is found once and its error given to every test). Two are equal when they read the same.
#[derive(Clone)]
pub struct Cause(Arc<dyn std::error::Error + Send + Sync + 'static>);

impl Cause {
    pub(crate) fn new(error: impl std::error::Error + Send + Sync + 'static) -> Cause {
        Cause(Arc::new(error))
    }

    /// The error itself, to downcast (`cause.get().downcast_ref::<std::io::Error>()`).
    #[must_use]
    pub fn get(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }
}

impl fmt::Debug for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl PartialEq for Cause {
    fn eq(&self, other: &Cause) -> bool {
        self.0.to_string() == other.0.to_string()
    }
}

impl Eq for Cause {}

/// The crate's `Result`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Start { message, .. }
            | Error::Check { message, .. }
            | Error::WaitTimeout(message)
            | Error::Invalid { message, .. }
            | Error::Body { message, .. } => f.write_str(message),
            Error::Unreachable { url, reason, .. } => {
                let port = url
                    .rsplit_once(':')
                    .map(|(_, tail)| tail.split('/').next().unwrap_or(""))
                    .filter(|port| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()))
                    .unwrap_or("PORT");
                write!(
                    f,
                    "svc-stub at {url} does not answer ({reason}); start one there (svc-stub --port {port}) or correct the URL"
                )
            }
            Error::Stub { status, code, message } => write!(f, "{status} {code}: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Start { source, .. }
            | Error::Unreachable { source, .. }
            | Error::Invalid { source, .. }
            | Error::Body { source, .. } => {
                source.as_ref().map(|cause| &*cause.0 as &(dyn std::error::Error + 'static))
            }
            Error::Check { source, .. } => source.as_deref().map(|error| error as &(dyn std::error::Error + 'static)),
            Error::Stub { .. } | Error::WaitTimeout(_) => None,
        }
    }
}

impl Error {
    /// A mistake found before anything was sent, with no error underneath.
    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::Invalid { message: message.into(), source: None }
    }

    /// The line a test panics with: the error's, marked as svc-stub's when it does not say so.
    pub(crate) fn line(&self) -> String {
        let line = self.to_string();
        if line.starts_with("svc-stub") {
            line
        } else {
            format!("svc-stub: {line}")
        }
    }

    /// Whether the stub answered 404 (a fault that already ran out, a namespace deleted).
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self, Error::Stub { status: 404, .. })
    }
}
