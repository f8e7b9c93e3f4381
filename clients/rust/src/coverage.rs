//! What a run's tests exercised (`GET /_test/coverage`): each route a client called against
//! each outcome it was served, each profile of what a kind of client is expected to meet, its
//! gaps in the stub's words, the fixture flags never read, and the stub's summary of it all.

use std::collections::BTreeMap;

use serde_json::Value;

/// Whose coverage the stub counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The namespace's count (kept across a reset): one test's.
    Namespace,
    /// Every namespace's count of the run, deleted ones' too.
    Run,
}

impl Scope {
    /// The stub's word for it: `namespace` or `run`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Namespace => "namespace",
            Scope::Run => "run",
        }
    }
}

/// One cell met: a route, an outcome, and how many requests met it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CoverageCell {
    /// `evaluate`, `projects.create`, `unknown path`, ...
    pub route: String,
    /// `ok`, a refusal's status (`401`), `fault 500`, `rate limited` or `no answer`.
    pub outcome: String,
    /// How many requests met it.
    pub count: u64,
}

/// A cell of a profile never met.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CoverageGap {
    /// Its route.
    pub route: String,
    /// The outcomes any of which meets it.
    pub expected: Vec<String>,
    /// The stub's words for it: "evaluate never met a 429 with Retry-After".
    pub says: String,
}

/// One profile held against the coverage: `met` of `of` cells, and the gaps.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProfileCoverage {
    /// `runtime`, `vendor`, `management`, or a team's own.
    pub name: String,
    /// What kind of client it is for.
    pub description: String,
    /// Its cells met.
    pub met: u64,
    /// Its cells.
    pub of: u64,
    /// Its cells never met, in the profile's order.
    pub gaps: Vec<CoverageGap>,
}

impl ProfileCoverage {
    /// The share of its cells met, 0 to 100 (100 for a profile of no cells).
    #[must_use]
    pub fn percent(&self) -> f64 {
        if self.of == 0 {
            return 100.0;
        }
        #[allow(clippy::cast_precision_loss)] // counts of a profile's cells: a few dozen
        let share = 100.0 * self.met as f64 / self.of as f64;
        share
    }
}

/// The fixture flags requests were answered, and those never read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CoverageFlags {
    /// The fixture flags requests were answered (evaluate's decisions, `/flags`, the definitions
    /// poll), by name.
    pub read: Vec<String>,
    /// The fixtures' flags no request was answered, by name.
    pub never_read: Vec<String>,
    /// How many flags the fixtures hold.
    pub of: u64,
}

/// The stub's answer to `GET /_test/coverage`, typed; [`Coverage::json`] is the answer as it
/// came (what `svc-stub coverage --report FILE` reads).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Coverage {
    /// Whose count it is.
    pub scope: Scope,
    /// Every cell met, by route then outcome.
    pub cells: Vec<CoverageCell>,
    /// Each profile held against it, by name.
    pub profiles: BTreeMap<String, ProfileCoverage>,
    /// The fixture flags read and never read.
    pub flags: CoverageFlags,
    /// The coverage, short, in the stub's words, a line each, as every svc-stub helper prints it
    /// at a run's end: a line for each profile a cell of which was met, naming its first gaps
    /// (else one line saying none was), and a line naming the fixture flags never read.
    pub summary: Vec<String>,
    json: Value,
}

impl Coverage {
    pub(crate) fn from_json(value: Value) -> Coverage {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let texts = |v: &Value| v.as_array().map(|all| all.iter().map(text).collect()).unwrap_or_default();
        let cells = value["cells"].as_array().map(Vec::as_slice).unwrap_or_default();
        let profiles = value["profiles"].as_object().map(|all| {
            all.iter()
                .map(|(name, p)| {
                    let gaps = p["gaps"].as_array().map(Vec::as_slice).unwrap_or_default();
                    let profile = ProfileCoverage {
                        name: text(&p["name"]),
                        description: text(&p["description"]),
                        met: p["met"].as_u64().unwrap_or(0),
                        of: p["of"].as_u64().unwrap_or(0),
                        gaps: gaps
                            .iter()
                            .map(|g| CoverageGap {
                                route: text(&g["route"]),
                                expected: texts(&g["expected"]),
                                says: text(&g["says"]),
                            })
                            .collect(),
                    };
                    (name.clone(), profile)
                })
                .collect()
        });
        Coverage {
            scope: if value["scope"] == "run" { Scope::Run } else { Scope::Namespace },
            cells: cells
                .iter()
                .map(|c| CoverageCell {
                    route: text(&c["route"]),
                    outcome: text(&c["outcome"]),
                    count: c["count"].as_u64().unwrap_or(0),
                })
                .collect(),
            profiles: profiles.unwrap_or_default(),
            flags: CoverageFlags {
                read: texts(&value["flags"]["read"]),
                never_read: texts(&value["flags"]["neverRead"]),
                of: value["flags"]["of"].as_u64().unwrap_or(0),
            },
            summary: texts(&value["summary"]),
            json: value,
        }
    }

    /// The stub's answer as it came.
    #[must_use]
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// Whether at least `percent` of `profile`'s cells were met (a profile the stub does not
    /// have is not).
    #[must_use]
    pub fn meets(&self, profile: &str, percent: f64) -> bool {
        self.profiles.get(profile).is_some_and(|p| p.percent() >= percent)
    }

    /// Asserts at least `percent` of `profile`'s cells were met: a gate for CI.
    ///
    /// # Panics
    ///
    /// Under it, naming the share met and every gap in the stub's words, one a line.
    #[track_caller]
    pub fn assert_covers(&self, profile: &str, percent: f64) {
        match self.profiles.get(profile) {
            None => panic!(
                "svc-stub: coverage has no profile {profile:?} (it has {:?})",
                self.profiles.keys().collect::<Vec<_>>()
            ),
            Some(p) if p.percent() < percent => panic!(
                "svc-stub coverage: {profile} {} of {} cells met ({:.1} %), under {percent} %; gaps:\n  - {}",
                p.met,
                p.of,
                p.percent(),
                p.gaps.iter().map(|gap| gap.says.as_str()).collect::<Vec<_>>().join("\n  - ")
            ),
            Some(_) => {}
        }
    }
}
