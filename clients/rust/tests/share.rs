//! One stub for a `cargo test` run, as `svc-stub shared` decides: the test binaries of a run
//! share it, and it ends with the run, a killed `cargo` included. A failed test's journal goes to
//! cargo's target directory, pruned to the last run. Each case is a `cargo test` of its own, of
//! share_a (and share_b), in a target directory of its own (this run's cargo holds its own).

#![cfg(unix)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long to wait for what a case waits for: a guard against a hang, not a speed budget.
const HANG_GUARD: Duration = Duration::from_secs(60);

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

fn target() -> PathBuf {
    Path::new(MANIFEST).join("target/share-run")
}

/// `cargo test --test ...` of this crate, into `target/share-run`, with these variables.
fn cargo_test(tests: &[&str], variables: &[(&str, &OsStr)]) -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
    command.args(["test", "--locked"]).current_dir(MANIFEST).env("CARGO_TARGET_DIR", target());
    for test in tests {
        command.args(["--test", test]);
    }
    command.env_remove("SVC_STUB_URL").env_remove("SVC_STUB_JOURNAL_DIR").envs(variables.iter().copied());
    command
}

/// A directory of this case's own, for the test binaries to write in.
fn case_directory(case: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("svc-stub-rs-{case}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    directory
}

fn said(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// The stub URL and process id a test binary recorded as `name` in `directory`.
fn recorded(directory: &Path, name: &str) -> Option<(String, String)> {
    let text = std::fs::read_to_string(directory.join(name)).ok()?;
    let (url, pid) = text.split_once(' ')?;
    Some((url.to_owned(), pid.to_owned()))
}

/// Waits until the stub at `url` no longer answers.
fn wait_until_gone(url: &str, after: &str) {
    let client = svc_stub::Client::new(url).unwrap();
    let started = Instant::now();
    while client.health().is_ok() {
        assert!(started.elapsed() < HANG_GUARD, "the run's stub at {url} still answers {HANG_GUARD:?} after {after}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_test_binaries_of_one_cargo_test_share_one_stub_which_ends_with_it() {
    let shared = case_directory("share");
    let output = cargo_test(&["share_a", "share_b"], &[("RS_TEST_SHARE_DIR", shared.as_os_str())]).output().unwrap();
    let said = said(&output);
    assert!(output.status.success(), "cargo test --test share_a --test share_b:\n{said}");

    let (a, b) = (recorded(&shared, "a"), recorded(&shared, "b"));
    let _ = std::fs::remove_dir_all(&shared);
    let ((url_a, pid_a), (url_b, pid_b)) = (a.expect(&said), b.expect(&said));
    assert_ne!(pid_a, pid_b, "the two binaries ran as one process");
    assert_eq!(url_a, url_b, "share_a had the stub at {url_a}, share_b the one at {url_b}: want one for the run");
    assert_ne!(svc_stub::run_url().unwrap(), url_a, "the child run had this run's stub, not one of its own");
    wait_until_gone(&url_a, "its cargo test ended");
}

#[test]
fn the_runs_stub_ends_when_cargo_is_killed() {
    let shared = case_directory("killed");
    let hold = [("RS_TEST_SHARE_DIR", shared.as_os_str()), ("RS_TEST_HOLD", "1".as_ref())];
    // its output is no part of this test's
    let mut cargo: Child = cargo_test(&["share_a"], &hold).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let started = Instant::now();
    let (url, _) = loop {
        if let Some(found) = recorded(&shared, "a") {
            break found;
        }
        assert!(started.elapsed() < HANG_GUARD, "share_a recorded no stub in {HANG_GUARD:?}");
        assert!(cargo.try_wait().unwrap().is_none(), "cargo test --test share_a ended before share_a held");
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = std::fs::remove_dir_all(&shared);
    svc_stub::Client::new(&url).unwrap().health().expect("the run's stub answers while its cargo runs");
    cargo.kill().unwrap(); // SIGKILL: no handler of cargo's runs
    cargo.wait().unwrap();
    wait_until_gone(&url, "its cargo was killed");
}

/// The journal path a failed test's output names.
fn journal_named_in(said: &str) -> PathBuf {
    let line = said.lines().find_map(|line| line.strip_prefix("svc-stub journal of this test: "));
    let path = line.and_then(|rest| rest.strip_suffix(" (open it in a browser)"));
    PathBuf::from(path.unwrap_or_else(|| panic!("no journal named in:\n{said}")))
}

#[test]
fn a_failed_tests_journal_is_in_the_target_directory_pruned_to_the_last_run() {
    let journals = target().join("svc-stub-journal");
    let run = || {
        let output = cargo_test(&["share_a"], &[("RS_TEST_FAIL", "1".as_ref())]).output().unwrap();
        let said = said(&output);
        assert!(!output.status.success(), "fails_when_asked passed:\n{said}");
        assert!(said.contains("test fails_when_asked ... FAILED"), "{said}");
        assert!(said.contains("test a_panic_as_expected - should panic ... ok"), "{said}");
        journal_named_in(&said)
    };
    let first = run();
    assert_eq!(first.parent(), Some(journals.as_path()), "not in the target directory: {}", first.display());
    let name = first.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("share_a-fails_when_asked-") && name.ends_with(".html"), "{name}");
    assert!(std::fs::read_to_string(&first).unwrap().contains("/v1/whoami"));

    let second = run();
    assert_ne!(second, first);
    assert!(second.is_file(), "{}", second.display());
    assert!(!first.exists(), "the earlier run's journal is still there: {}", first.display());
    // and the tests that panicked as they expected left none
    let left: Vec<String> = std::fs::read_dir(&journals)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".html"))
        .collect();
    assert_eq!(left, [second.file_name().unwrap().to_string_lossy()], "journals left in {}", journals.display());
}
