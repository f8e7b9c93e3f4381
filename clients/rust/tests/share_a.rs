//! Run by `share.rs`, in `cargo test` runs of its own (with share_b): each test binary of a run
//! records the stub it was given; a test that fails leaves its journal; one that panics as it
//! expects leaves none.

use std::path::Path;
use std::time::{Duration, Instant};

use svc_stub::Route;

/// Writes the base URL of this binary's stub as `RS_TEST_SHARE_DIR/a`; with `RS_TEST_HOLD`,
/// then waits for its `cargo test` to be killed (this process is then some other's child).
#[test]
fn records_the_runs_stub() {
    let Some(directory) = std::env::var_os("RS_TEST_SHARE_DIR") else { return };
    let stub = svc_stub::start();
    let written = Path::new(&directory).join("a.tmp");
    std::fs::write(&written, format!("{} {}", stub.base_url(), std::process::id())).unwrap();
    std::fs::rename(&written, Path::new(&directory).join("a")).unwrap();
    #[cfg(unix)]
    if std::env::var_os("RS_TEST_HOLD").is_some() {
        let (cargo, started) = (std::os::unix::process::parent_id(), Instant::now());
        while std::os::unix::process::parent_id() == cargo && started.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Fails, with `RS_TEST_FAIL`: its journal is written, and named in its output.
#[test]
fn fails_when_asked() {
    if std::env::var_os("RS_TEST_FAIL").is_none() {
        return;
    }
    let stub = svc_stub::start();
    ureq::get(&format!("{}/v1/whoami", stub.url())).call().unwrap_err(); // no key: a 401
    panic!("failed on purpose");
}

/// Fails an assertion, as it expects: no journal.
#[test]
#[should_panic(expected = "expected no request to route 'whoami'")]
fn an_assertion_that_fails_as_expected() {
    let stub = svc_stub::start();
    ureq::get(&format!("{}/v1/whoami", stub.url())).call().unwrap_err();
    stub.assert_no_request(Route::Whoami);
}

/// Panics, as it expects: no journal either.
#[test]
#[should_panic(expected = "as expected")]
fn a_panic_as_expected() {
    let _stub = svc_stub::start();
    panic!("as expected");
}
