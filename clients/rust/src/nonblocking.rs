//! Waits for async tests, with no runtime of the crate's own: the blocking call runs on a
//! thread of its own, and its future is woken when it is done. Any executor (Tokio's
//! current-thread runtime of `#[tokio::test]` included) keeps running the client under test
//! meanwhile.

use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

/// A blocking call's result, once its thread is done.
#[derive(Debug)]
pub(crate) struct OffThread<T> {
    shared: Arc<Mutex<Shared<T>>>,
}

#[derive(Debug)]
struct Shared<T> {
    result: Option<T>,
    waker: Option<Waker>,
}

/// Runs `call` on a thread of its own; its result, awaited.
pub(crate) fn off_thread<T, F>(call: F) -> OffThread<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let shared = Arc::new(Mutex::new(Shared { result: None, waker: None }));
    let done = Arc::clone(&shared);
    std::thread::Builder::new()
        .name("svc-stub wait".into())
        .spawn(move || {
            let result = call();
            let mut shared = done.lock().unwrap_or_else(PoisonError::into_inner);
            shared.result = Some(result);
            if let Some(waker) = shared.waker.take() {
                waker.wake();
            }
        })
        .expect("svc-stub: a thread for the wait");
    OffThread { shared }
}

impl<T> Future for OffThread<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<T> {
        let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(result) = shared.result.take() {
            Poll::Ready(result)
        } else {
            shared.waker = Some(context.waker().clone());
            Poll::Pending
        }
    }
}

/// Panics with `message` as though at `caller`: the line is reported as the default panic hook
/// reports it (`thread '...' panicked at file:line:column:`, into the test's captured output),
/// and the unwind carries `message`, as `panic!` would (`#[should_panic(expected)]`,
/// `catch_unwind`). A poll has no caller of the test's: `#[track_caller]` cannot reach it.
pub(crate) fn panic_at(caller: &'static Location<'static>, message: String) -> ! {
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("<unnamed>");
    eprintln!("\nthread '{name}' panicked at {caller}:\n{message}");
    std::panic::resume_unwind(Box::new(message))
}
