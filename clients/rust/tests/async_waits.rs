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
