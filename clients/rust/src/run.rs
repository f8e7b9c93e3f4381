//! The stub of this test run: found or started on first use, once per process.

use std::sync::OnceLock;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::process::{StartOptions, StubProcess};
use crate::share;

static RUN: OnceLock<Result<String>> = OnceLock::new();

/// The stub of this test run, started on first use and shared by every test of the process:
/// the one at `SVC_STUB_URL`; else the one the test binaries of this `cargo test` share (each
/// binary is a process of its own: the first to need a stub starts it, and it stops when
/// `cargo test` ends); else one of this process's own, which stops when it exits. The stub
/// reads its options from `SVC_STUB_*` variables too (`SVC_STUB_FIXTURES=flags.yaml`).
///
/// The answer is the same for the whole process, an error included: a stub that cannot be had
/// fails every test that asks, each with the same one line.
pub fn run_url() -> Result<String> {
    RUN.get_or_init(find_or_start).clone()
}

fn find_or_start() -> Result<String> {
    let running = std::env::var(crate::URL_VARIABLE).unwrap_or_default();
    let running = running.trim().trim_end_matches('/');
    if !running.is_empty() {
        let named = format!("{}={running}", crate::URL_VARIABLE);
        return check_stub(running, &named).map(|()| running.to_owned());
    }
    if let Some(runner) = share::runner_pid() {
        let url = share::shared_stub(runner)?;
        return check_stub(&url, &url).map(|()| url);
    }
    let process = StubProcess::start(StartOptions::default())?;
    let url = process.url().to_owned();
    drop(process); // the handle goes, the stub stays: it stops once this process has ended (--stop-with)
    check_stub(&url, &url).map(|()| url)
}

/// Checks the stub at `url` answers as svc-stub and is not older than this crate, or says in
/// one line what to do; `named` is how the line names it.
pub fn check_stub(url: &str, named: &str) -> Result<()> {
    let advice = if named.starts_with(crate::URL_VARIABLE) {
        format!("start one there (svc-stub --port PORT) or unset {} to have one started", crate::URL_VARIABLE)
    } else {
        "its log says why".to_owned()
    };
    let version = Client::new(url).and_then(|client| {
        client.health()?;
        client.version()
    });
    let version = version.map_err(|error| {
        Error::Check(format!("svc-stub: {named} does not answer as svc-stub ({}); {advice}", problem(&error)))
    })?;
    if !recent_enough(&version, crate::VERSION) {
        return Err(Error::Check(format!(
            "svc-stub: {named} is svc-stub {version}, older than this crate ({}); upgrade it (pip install -U svc-stub)",
            crate::VERSION
        )));
    }
    Ok(())
}

fn problem(error: &Error) -> String {
    match error {
        Error::Unreachable { reason, .. } => reason.clone(),
        Error::Stub { status, message, .. } => format!("{status} from /health: {message}"),
        other => other.to_string(),
    }
}

/// Whether `version` is at least `needed`, numerically (`0.10.0` is newer than `0.9.1`).
pub(crate) fn recent_enough(version: &str, needed: &str) -> bool {
    fn parts(version: &str) -> Option<Vec<u64>> {
        version
            .splitn(3, '.')
            .map(|part| {
                let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
                digits.parse().ok()
            })
            .collect()
    }
    let (Some(have), Some(need)) = (parts(version), parts(needed)) else { return false };
    for i in 0..3 {
        let (a, b) = (have.get(i).copied().unwrap_or(0), need.get(i).copied().unwrap_or(0));
        if a != b {
            return a > b;
        }
    }
    true
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
}
