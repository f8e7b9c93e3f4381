//! What can go wrong, each as one line that says what to do.

use std::fmt;

/// An error of svc-stub's control: each one's `Display` is one line that says what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// No stub could be had from `svc-stub shared`: no `svc-stub` to run, or the stub's own line
    /// on why it did not start.
    Start(String),
    /// The stub at `SVC_STUB_URL` (or the run's) cannot be used: nothing or something else
    /// answers there, or it is older than this crate.
    Check(String),
    /// Nothing (or something other than svc-stub) answers a control call at `url`.
    Unreachable {
        /// The stub's URL.
        url: String,
        /// Why: "connection refused", "no answer in time", ...
        reason: String,
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
    /// A mistake found before anything was sent (a URL, a fixture file).
    Invalid(String),
    /// A recorded request's body is not what was asked of it (none, or not JSON of that type).
    Body(String),
}

/// The crate's `Result`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Start(line)
            | Error::Check(line)
            | Error::WaitTimeout(line)
            | Error::Invalid(line)
            | Error::Body(line) => f.write_str(line),
            Error::Unreachable { url, reason } => {
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

impl std::error::Error for Error {}

impl Error {
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
