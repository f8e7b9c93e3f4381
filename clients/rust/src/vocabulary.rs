//! The words of svc-stub's control plane as Rust types. Each list is the stub's own
//! (`stub/openapi.json`); the crate's tests check them against it, so a helper cannot drift
//! from the stub, and a typo is a compile error rather than a fault that never fires.

use std::fmt;
use std::str::FromStr;

/// A word that is not one of the stub's: its kind and what the stub does know, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownWord {
    kind: &'static str,
    word: String,
    known: Vec<&'static str>,
}

impl fmt::Display for UnknownWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "svc-stub: unknown {} {:?}; the {}s are {}", self.kind, self.word, self.kind, self.known.join(", "))
    }
}

impl std::error::Error for UnknownWord {}

/// A word the stub recorded or listed, read into one of this crate's enums, or kept as it
/// came when a newer stub says a word this crate does not know yet: reading never fails on it.
///
/// It compares with the enum's own variants: `request.route == Some(Route::Evaluate.into())`,
/// or `fault.mode == Mode::Http500` on a `Word<Mode>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Word<T> {
    /// One of this crate's words.
    Known(T),
    /// A word this crate does not know, as the stub spelled it.
    Other(String),
}

impl<T: Copy> Word<T> {
    /// The word as this crate's enum, unless it is one it does not know.
    #[must_use]
    pub fn known(&self) -> Option<T> {
        match self {
            Word::Known(word) => Some(*word),
            Word::Other(_) => None,
        }
    }
}

impl<T: FromStr> Word<T> {
    /// Reads a word the stub wrote.
    pub(crate) fn read(word: &str) -> Word<T> {
        word.parse().map_or_else(|_| Word::Other(word.to_owned()), Word::Known)
    }
}

impl<T> From<T> for Word<T> {
    fn from(word: T) -> Word<T> {
        Word::Known(word)
    }
}

impl<T: fmt::Display> fmt::Display for Word<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Word::Known(word) => word.fmt(f),
            Word::Other(word) => f.write_str(word),
        }
    }
}

/// One enum per word list: its variants with their wire spelling, `ALL` in the stub's order,
/// `as_str`, `Display` and `FromStr` (whose error lists the words).
macro_rules! words {
    (
        $(#[$meta:meta])*
        $name:ident, $kind:literal,
        listed { $($(#[$vmeta:meta])* $variant:ident = $wire:literal,)+ }
        $(more { $($(#[$xmeta:meta])* $xvariant:ident = $xwire:literal,)+ })?
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
            $($($(#[$xmeta])* $xvariant,)+)?
        }

        impl $name {
            #[doc = concat!("Every ", $kind, " of the stub's OpenAPI document, in its order.")]
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The word as the stub spells it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)+
                    $($($name::$xvariant => $xwire,)+)?
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Word<$name> {
            /// The word as the stub spelled it.
            #[must_use]
            pub fn as_str(&self) -> &str {
                match self {
                    Word::Known(word) => word.as_str(),
                    Word::Other(word) => word,
                }
            }
        }

        impl PartialEq<$name> for Word<$name> {
            fn eq(&self, other: &$name) -> bool {
                *self == Word::Known(*other)
            }
        }

        impl FromStr for $name {
            type Err = UnknownWord;

            fn from_str(word: &str) -> Result<Self, UnknownWord> {
                match word {
                    $($wire => Ok($name::$variant),)+
                    $($($xwire => Ok($name::$xvariant),)+)?
                    _ => Err(UnknownWord {
                        kind: $kind,
                        word: word.to_owned(),
                        known: $name::ALL.iter().map(|w| w.as_str()).collect(),
                    }),
                }
            }
        }
    };
}

words! {
    /// A fault mode (`FaultMode` in the stub's OpenAPI document): what a faulted request gets.
    Mode, "fault mode",
    listed {
        /// The answer, late: `Fault::delay` (the stub's default 10 s).
        Delay = "delay",
        /// 401 Unauthorized.
        Http401 = "401",
        /// 429 Too Many Requests with `Retry-After` (`Fault::retry_after`, default 1 s).
        Http429 = "429",
        /// 500 Internal Server Error.
        Http500 = "500",
        /// 200 with a body that is not JSON.
        InvalidJson = "invalid_json",
        /// A body cut short of its `Content-Length`.
        Truncated = "truncated",
        /// 200 with the route's quota-limited answer.
        QuotaLimited = "quota_limited",
        /// Any status (`Fault::status`, required), with `Retry-After` for 429 and 503.
        Status = "status",
        /// The connection reset, no answer.
        Reset = "reset",
        /// The connection closed, no answer.
        EmptyResponse = "empty_response",
        /// The answer's body sent slowly over `Fault::delay`.
        SlowBody = "slow_body",
        /// No answer at all, until the client gives up.
        Hang = "hang",
    }
}

words! {
    /// What a fault applies to (`Selector` in the stub's OpenAPI document): a route, a
    /// management resource (every one of its routes), or a group.
    Selector, "selector",
    listed {
        /// Every route (the default).
        All = "all",
        /// The runtime plane: evaluate, capture, register.
        Runtime = "runtime",
        /// The vendor routes: flags, definitions, batch.
        Vendor = "vendor",
        /// The management plane: whoami, projects, environments, control points.
        Management = "management",
        /// `POST /v1/flags/evaluate`.
        Evaluate = "evaluate",
        /// `POST /v1/capture`.
        Capture = "capture",
        /// `POST /v1/targets/register`.
        Register = "register",
        /// The vendor `/flags`.
        Flags = "flags",
        /// The vendor `/flags/definitions` (and `local_evaluation`).
        Definitions = "definitions",
        /// The vendor `/batch`.
        Batch = "batch",
        /// `GET /v1/whoami`.
        Whoami = "whoami",
        /// Every `projects.*` route.
        Projects = "projects",
        /// Every `environments.*` route.
        Environments = "environments",
        /// Every `control-points.*` route.
        ControlPoints = "control-points",
    }
}

words! {
    /// The name a request is recorded under in the journal (`RouteName` in the stub's OpenAPI
    /// document), and, to read the journal, a management resource or any route at all.
    Route, "route",
    listed {
        /// `POST /v1/flags/evaluate`.
        Evaluate = "evaluate",
        /// `POST /v1/capture`.
        Capture = "capture",
        /// `POST /v1/targets/register`.
        Register = "register",
        /// The vendor `/flags`.
        Flags = "flags",
        /// The vendor `/flags/definitions` (and `local_evaluation`).
        Definitions = "definitions",
        /// The vendor `/batch`.
        Batch = "batch",
        /// `GET /v1/whoami`.
        Whoami = "whoami",
        /// `GET /v1/projects`.
        ProjectsList = "projects.list",
        /// `POST /v1/projects`.
        ProjectsCreate = "projects.create",
        /// `GET /v1/projects/{id}`.
        ProjectsGet = "projects.get",
        /// `PATCH /v1/projects/{id}`.
        ProjectsUpdate = "projects.update",
        /// `DELETE /v1/projects/{id}`.
        ProjectsDelete = "projects.delete",
        /// `GET .../environments`.
        EnvironmentsList = "environments.list",
        /// `POST .../environments`.
        EnvironmentsCreate = "environments.create",
        /// `GET .../environments/{id}`.
        EnvironmentsGet = "environments.get",
        /// `PATCH .../environments/{id}`.
        EnvironmentsUpdate = "environments.update",
        /// `DELETE .../environments/{id}`.
        EnvironmentsDelete = "environments.delete",
        /// `GET .../control-points`.
        ControlPointsList = "control-points.list",
        /// `GET .../control-points/graph`.
        ControlPointsGraph = "control-points.graph",
    }
    more {
        /// Every `projects.*` route (to read the journal).
        Projects = "projects",
        /// Every `environments.*` route (to read the journal).
        Environments = "environments",
        /// Every `control-points.*` route (to read the journal).
        ControlPoints = "control-points",
        /// A browser's preflight: listed in the journal, but no client's request.
        Preflight = "preflight",
        /// Every request, whatever its route (sent as no route at all).
        Any = "",
    }
}

words! {
    /// Where the fault that fired on a request came from (a [`FaultRecord`](crate::FaultRecord)'s
    /// `source`).
    FaultSource, "fault source",
    listed {
        /// The request's own `X-Svc-Test-*` headers ([`fault_headers`](crate::fault_headers)).
        Header = "header",
        /// The request's own `svc_test_fault` query parameters.
        Query = "query",
        /// A fault armed in the namespace.
        Armed = "armed",
        /// No fault: the key's rate limit (always mode `429`).
        RateLimit = "rate-limit",
    }
}

impl Route {
    /// How a message names the route: its word, or "any route".
    pub(crate) fn described(self) -> &'static str {
        match self {
            Route::Any => "any route",
            route => route.as_str(),
        }
    }
}

/// The header that faults one request with a mode, whatever is armed.
pub const HEADER_FAULT: &str = "X-Svc-Test-Fault";
/// The delay, in ms, of a faulted request (`delay`, `slow_body`).
pub const HEADER_DELAY_MS: &str = "X-Svc-Test-Delay-Ms";
/// The status of a faulted request (`status`).
pub const HEADER_STATUS: &str = "X-Svc-Test-Status";
/// The `Retry-After` of a faulted request (`429`, `status` 429 or 503).
pub const HEADER_RETRY_AFTER: &str = "X-Svc-Test-Retry-After";
/// The header that names a request's namespace, for a client that keeps no base path.
pub const HEADER_NAMESPACE: &str = "X-Svc-Test-Namespace";
