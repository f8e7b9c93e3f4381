//! The async waits (feature `async`) leave the executor free: on one thread, the client under
//! test runs while the wait is pending, and the wait then resolves with what it sent.

mod common;

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::Duration;

use serde_json::json;
use svc_stub::Route;

/// Wakes the thread that polls.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// A one-thread executor: polls `future` until it is ready, parking in between.
fn block_on<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        std::thread::park();
    }
}

#[test]
fn a_pending_wait_does_not_block_the_thread_that_awaits_it() {
    let stub = svc_stub::start();
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut wait = pin!(stub.wait_for_svc_events_async(1, Duration::from_secs(60)));

    // pending, not blocked: a blocking poll would have run out first and panicked
    assert!(wait.as_mut().poll(&mut Context::from_waker(&waker)).is_pending());
    // the same thread, as a current-thread executor's, runs the client meanwhile
    common::capture(stub.url(), json!([{"type": "signal", "name": "checkout"}]));
    let events = block_on(wait);
    assert_eq!(events[0]["name"], "checkout");

    let requests = block_on(stub.wait_for_requests_async(1, Route::Capture, Duration::from_secs(60)));
    assert_eq!(requests.len(), 1);
    assert!(block_on(stub.wait_for_targets_async(0, Duration::from_millis(10))).is_empty());
    assert!(block_on(stub.wait_for_events_async(0, Duration::from_millis(10))).is_empty());
}

#[test]
fn an_async_wait_that_runs_out_panics_with_what_arrived() {
    let stub = svc_stub::start();
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        block_on(stub.wait_for_svc_events_async(1, Duration::from_millis(200)));
    }))
    .unwrap_err();
    let message = common::panic_message(payload);
    assert!(
        message.starts_with("waited 200ms for 1 svcEvents, got 0:\n(none)\nsvc-stub journal of this test: "),
        "{message}"
    );
}

const CHILD: &str = "RS_TEST_ASYNC_WAITS_CHILD";

/// Run by `a_timed_out_async_wait_panics_at_the_tests_line`, in a process of its own (where its
/// failure is what is looked at); passes at once otherwise.
#[test]
fn child_waits_in_vain() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let stub = svc_stub::start();
    eprintln!("the wait is on line {}", line!() + 1);
    block_on(stub.wait_for_svc_events_async(1, Duration::from_millis(100)));
}

/// The guide's promise: a wait that runs out fails at the test's line, an async one too (not
/// at a line of the crate's own, where the future it made was polled).
#[test]
fn a_timed_out_async_wait_panics_at_the_tests_line() {
    let journals = std::env::temp_dir().join(format!("svc-stub-async-waits-{}", std::process::id()));
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_waits_in_vain", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("SVC_STUB_JOURNAL_DIR", &journals) // not among this run's journals
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&journals);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the child's wait did not fail:\n{stderr}");
    let line = stderr.split_once("the wait is on line ").and_then(|(_, rest)| rest.lines().next());
    let line = line.unwrap_or_else(|| panic!("{stderr}"));
    let at = format!("thread 'child_waits_in_vain' panicked at tests/async_waits.rs:{line}:");
    let (_, after) = stderr.split_once(&at).unwrap_or_else(|| panic!("not at the test's line ({at}):\n{stderr}"));
    assert!(
        after.contains("\nwaited 100ms for 1 svcEvents, got 0:\n(none)\nsvc-stub journal of this test: "),
        "{stderr}"
    );
    assert!(!stderr.contains("src/stub.rs"), "{stderr}");
}
