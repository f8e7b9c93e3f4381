// tests/checkout.rs: run with `cargo test`
#[path = "examples/checkout.rs"]
mod checkout; // in your crate: use shop::checkout;

use std::time::Duration;

use serde_json::{json, Value};
use svc_stub::{Fault, Mode, Route, Selector, SvcStub};

#[test]
fn checkout_reads_the_served_variant() {
    let stub = svc_stub::start(); // this test's own: give the code stub.url()

    assert_eq!(checkout::variant(stub.url(), "user-1"), "treatment-b"); // the default fixtures
}

#[test]
fn checkout_falls_back_while_evaluate_fails() {
    let stub = svc_stub::start();

    {
        let _outage = stub.arm(Fault::new(Mode::Http500).apply_to(Selector::Evaluate)); // armed in this block
        assert_eq!(checkout::variant(stub.url(), "user-1"), "control");
    }
    assert_eq!(checkout::variant(stub.url(), "user-1"), "treatment-b");
    stub.assert_no_request(Route::Capture);
}

#[test]
fn checkout_falls_back_while_the_service_is_unreachable() {
    let stub = svc_stub::start();

    assert_eq!(checkout::variant(&stub.offline_url(), "user-1"), "control"); // refused at once
}

#[test]
fn checkout_gives_up_on_a_slow_service() {
    let stub =
        SvcStub::builder().fixtures(json!({"flags": {"checkout-v2": {"type": "string", "value": "one-page"}}})).start();
    let _slow = stub.arm(Fault::new(Mode::Delay).delay(Duration::from_secs(5)).times(1));

    assert_eq!(checkout::variant(stub.url(), "user-1"), "control"); // after its 2 s timeout
    assert_eq!(checkout::variant(stub.url(), "user-1"), "one-page");
}

#[test]
fn checkout_reports_the_exposure() {
    let stub = svc_stub::start();

    let variant = checkout::variant(stub.url(), "user-1");
    checkout::report_exposure(stub.url(), "user-1", &variant);

    stub.wait_for_svc_events(1, Duration::from_secs(60)); // the stub's long-poll: no sleep
    stub.assert_exposure("checkout-v2", "user-1", "treatment-b");
    let sent: Value = stub.requests(Route::Capture)[0].json(); // the body, parsed
    assert_eq!(sent["events"][0]["variant"], "treatment-b");
}
