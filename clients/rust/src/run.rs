//! The stub of this test run: the one at `SVC_STUB_URL`, or the one `svc-stub shared` starts
//! for the run (or attaches to), found once per process.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::client::Client;
use crate::coverage::{Coverage, Scope};
use crate::error::{Cause, Error, Result};

/// The start of the line `svc-stub shared` prints; the rest is the stub's URL.
const READY_PREFIX: &str = "svc-stub listening on ";

static RUN: OnceLock<Result<String>> = OnceLock::new();

/// The stub of this test run, found on first use and shared by every test of the process: the
/// one at `SVC_STUB_URL`; else the one `svc-stub shared --owner-named cargo` gives, the same for
/// every test binary of one `cargo test` (the stub decides: it starts the run's stub or attaches
/// to it, and stops it when `cargo` ends). The stub reads its options from `SVC_STUB_*`
/// variables (`SVC_STUB_FIXTURES=flags.yaml`).
///
/// The answer is the same for the whole process, an error included: a stub that cannot be had
/// fails every test that asks, each with the same one line.
///
/// # Errors
///
/// [`Error::Start`] when `svc-stub shared` cannot be run or gives no stub (the stub's own
/// line); [`Error::Check`] when the stub at `SVC_STUB_URL` does not answer as svc-stub or is
/// older than this crate.
pub fn run_url() -> Result<String> {
    RUN.get_or_init(find_or_start).clone()
}

/// The run's coverage (`GET /_test/coverage?scope=run`): what every test of the run met so
/// far, in every test binary of this `cargo test` (they share one stub), deleted namespaces too.
///
/// # Errors
///
/// Those of [`run_url`], and of the control call ([`Client`]'s).
pub fn try_coverage() -> Result<Coverage> {
    Client::new(&run_url()?)?.coverage(Scope::Run, None)
}

/// [`try_coverage`], for a test.
///
/// # Panics
///
/// When the run's stub cannot be had or read, with the line that says why.
#[must_use]
#[track_caller]
pub fn coverage() -> Coverage {
    try_coverage().unwrap_or_else(|error| panic!("{}", error.line()))
}

/// Prints the run's coverage, the stub's [`Coverage::summary`] lines as they came (a line for
/// each profile the run met a cell of, naming its first gaps, and one naming the fixture flags
/// never read), and writes the stub's answer as `coverage.json` where failed tests' journals go
/// (`<target dir>/svc-stub-journal/`, or `SVC_STUB_JOURNAL_DIR`), and says where. It writes to
/// stderr past the test harness's capture, so `cargo test` shows it on every run, passed or not.
/// Call it from the test target that runs last (cargo runs test targets by name: `tests/zz_coverage.rs`).
///
/// # Panics
///
/// As [`coverage`] does.
#[allow(clippy::must_use_candidate)] // called alone, for what it prints and writes
#[track_caller]
pub fn print_coverage() -> Coverage {
    use std::io::Write as _;
    let coverage = coverage();
    let directory = crate::journal::journal_directory();
    let file = directory.join("coverage.json");
    let written =
        std::fs::create_dir_all(&directory).and_then(|()| std::fs::write(&file, format!("{:#}\n", coverage.json())));
    let said = match written {
        Ok(()) => format!("svc-stub coverage report: {}", file.display()),
        Err(error) => format!("svc-stub coverage report not written: {}: {error}", file.display()),
    };
    let mut lines = coverage.summary.clone();
    lines.push(said);
    // the harness captures print! and eprint!, not stderr itself
    let _ = writeln!(std::io::stderr().lock(), "{}", lines.join("\n"));
    coverage
}

/// Asserts the run's coverage meets at least `percent` of `profile`'s cells: a gate for CI,
/// from the test target that runs last ([`Coverage::assert_covers`] of [`coverage`]).
///
/// # Panics
///
/// Under it, naming each gap in the stub's words; or as [`coverage`] does.
#[track_caller]
pub fn assert_covers(profile: &str, percent: f64) {
    coverage().assert_covers(profile, percent);
}

fn find_or_start() -> Result<String> {
    let running = std::env::var(crate::URL_VARIABLE).unwrap_or_default();
    let running = running.trim().trim_end_matches('/');
    if running.is_empty() {
        return shared();
    }
    check_stub(running).map(|()| running.to_owned())
}

/// `svc-stub shared --owner-named cargo --require VERSION`: its one line, the ready line or why not.
fn shared() -> Result<String> {
    let bin = command()?;
    let output = Command::new(&bin)
        .args(["shared", "--owner-named", "cargo", "--require", crate::VERSION])
        .stdin(Stdio::null())
        .output()
        .map_err(|error| Error::Start {
            message: format!("svc-stub: could not run {}: {error}", bin.display()),
            source: Some(Cause::new(error)),
        })?;
    let said = String::from_utf8_lossy(&output.stdout);
    match said.lines().find_map(|line| line.strip_prefix(READY_PREFIX)) {
        Some(url) if output.status.success() => Ok(url.trim().to_owned()),
        _ => {
            let complaint = String::from_utf8_lossy(&output.stderr);
            let line = complaint.lines().rev().find(|line| !line.trim().is_empty()).map(str::trim);
            let message = match line {
                Some(line) => line.to_owned(),
                None => format!("svc-stub: {} shared ended ({}) with no ready line", bin.display(), output.status),
            };
            Err(Error::Start { message, source: None })
        }
    }
}

/// `SVC_STUB_BIN`, else `svc-stub` on `PATH`; else an error that says how to have one.
fn command() -> Result<PathBuf> {
    let named = std::env::var_os(crate::BIN_VARIABLE).filter(|bin| !bin.is_empty());
    let (found, why) = if let Some(bin) = &named {
        let bin = PathBuf::from(bin);
        (bin.is_file().then(|| bin.clone()), format!("{}={}: no such file", crate::BIN_VARIABLE, bin.display()))
    } else {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let found = std::env::split_paths(&path).map(|dir| dir.join("svc-stub")).find(|bin| executable(bin));
        (found, format!("{} is not set and none is on PATH", crate::BIN_VARIABLE))
    };
    found.ok_or_else(|| Error::Start {
        message: format!(
            "svc-stub: no svc-stub command ({why}); install it from its clone (python3 -m venv .venv && \
             .venv/bin/pip install {}) and set {}=$PWD/.venv/bin/svc-stub, or {} to a running stub",
            clone(),
            crate::BIN_VARIABLE,
            crate::URL_VARIABLE
        ),
        source: None,
    })
}

#[cfg(unix)]
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn executable(path: &Path) -> bool {
    path.is_file() || path.with_extension("exe").is_file()
}

/// The clone of svc-stub this crate is built from (two folders above it), else a placeholder:
/// svc-stub installs from a clone until it is on a package index.
fn clone() -> String {
    let clone = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let pyproject = std::fs::read_to_string(clone.join("pyproject.toml")).unwrap_or_default();
    if pyproject.lines().any(|line| line.replace(' ', "") == "name=\"svc-stub\"") {
        clone.canonicalize().unwrap_or(clone).display().to_string()
    } else {
        "path/to/svc-stub".to_owned()
    }
}

/// Checks the stub at `SVC_STUB_URL` answers as svc-stub and is not older than this crate, or
/// says in one line what to do.
fn check_stub(url: &str) -> Result<()> {
    let named = format!("{}={url}", crate::URL_VARIABLE);
    let version = Client::new(url).and_then(|client| {
        client.health()?;
        client.version()
    });
    let version = version.map_err(|error| {
        let problem = match &error {
            Error::Unreachable { reason, .. } => reason.clone(),
            Error::Stub { status, message, .. } => format!("{status} from /health: {message}"),
            other => other.to_string(),
        };
        let message = format!(
            "svc-stub: {named} does not answer as svc-stub ({problem}); start one there (svc-stub --port PORT) \
             or unset {} to have one started",
            crate::URL_VARIABLE
        );
        Error::Check { message, source: Some(Box::new(error)) }
    })?;
    if !recent_enough(&version, crate::VERSION) {
        let message = format!(
            "svc-stub: {named} is svc-stub {version}, older than this crate ({}); upgrade it (pip install --upgrade {})",
            crate::VERSION,
            clone()
        );
        return Err(Error::Check { message, source: None });
    }
    Ok(())
}

/// Whether a stub of `version` works with a helper of `needed`, by the rule every helper shares
/// (`clients/compatibility.json`): its release numbers (X.Y.Z) are at least the helper's; at
/// equal numbers a prerelease stub (`0.2.0rc1`, `0.2.0-rc.1`, `0.2.0.dev1`) is older than a
/// final helper, and any prerelease of those numbers goes with any other. Build metadata (`+...`)
/// is ignored, a leading `v` allowed; anything else is not a version, so not compatible.
fn recent_enough(version: &str, needed: &str) -> bool {
    match (release(version), release(needed)) {
        (Some((have, have_pre)), Some((need, need_pre))) => have > need || (have == need && (!have_pre || need_pre)),
        _ => false,
    }
}

/// A version's release numbers and whether it is a prerelease, or `None` if it is not one.
fn release(version: &str) -> Option<([u64; 3], bool)> {
    let version = version.strip_prefix('v').unwrap_or(version);
    let version = version.split_once('+').map_or(version, |(before, _)| before);
    let mut numbers = [0; 3];
    let mut rest = version;
    for (index, number) in numbers.iter_mut().enumerate() {
        if index > 0 {
            rest = rest.strip_prefix('.')?;
        }
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        *number = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
    }
    Some((numbers, prerelease(rest)?))
}

/// Whether what follows X.Y.Z makes a prerelease (`false` for nothing), or `None` if it is no
/// prerelease svc-stub's versions use: semver's `-rc.1`, PEP 440's `rc1`, `a1`, `b1`, `.dev1`.
fn prerelease(rest: &str) -> Option<bool> {
    if rest.is_empty() {
        return Some(false);
    }
    let identifiers =
        |text: &str| !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    if let Some(semver) = rest.strip_prefix('-') {
        return identifiers(semver).then_some(true);
    }
    let pep440 = rest.strip_prefix('.').unwrap_or(rest);
    let named =
        ["dev", "rc", "alpha", "beta", "preview", "pre", "a", "b", "c"].iter().any(|word| pep440.starts_with(word));
    (named && identifiers(pep440)).then_some(true)
}

#[cfg(test)]
mod tests {
    use super::recent_enough;

    #[test]
    fn versions_compare_as_numbers() {
        assert!(recent_enough("0.1.0", "0.1.0"));
        assert!(recent_enough("0.10.0", "0.9.1"));
        assert!(recent_enough("1.0.0rc1", "0.1.0"));
        assert!(!recent_enough("0.0.9", "0.1.0"));
        assert!(!recent_enough("", "0.1.0"));
        assert!(!recent_enough("dev", "0.1.0"));
    }

    /// Every case of the rule all helpers share, `clients/compatibility.json` in the repository.
    #[test]
    fn every_case_of_the_shared_compatibility_rule() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../compatibility.json");
        let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{path}: {error}"));
        let rule: serde_json::Value = serde_json::from_str(&text).expect("compatibility.json: not JSON");
        let cases = rule["cases"].as_array().expect("compatibility.json: no cases");
        assert!(!cases.is_empty(), "compatibility.json: no cases");
        for case in cases {
            let (stub, helper) = (case["stub"].as_str().unwrap(), case["helper"].as_str().unwrap());
            let compatible = case["compatible"].as_bool().unwrap();
            assert_eq!(recent_enough(stub, helper), compatible, "stub {stub:?}, helper {helper:?}");
        }
    }
}
