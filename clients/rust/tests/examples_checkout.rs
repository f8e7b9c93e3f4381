// tests/checkout.rs: run with `cargo test`
#[path = "examples/checkout.rs"]
mod checkout; // in your crate: use shop::checkout;

use std::time::Duration;

use serde_json::json;
use svc_stub::{Fault, Mode, Namespace, Route, Selector};

#[test]
fn checkout_reads_the_served_variant() {
    let ns = svc_stub::namespace("checkout_reads_the_served_variant"); // give the code ns.url()

    assert_eq!(checkout::variant(ns.url(), "user-1"), "treatment-b"); // the default fixtures
}

#[test]
fn checkout_falls_back_while_evaluate_fails() {
    let ns = svc_stub::namespace("checkout_falls_back_while_evaluate_fails");

    {
        let _outage = ns.arm(Fault::new(Mode::Http500).on(Selector::Evaluate)); // armed in this block
        assert_eq!(checkout::variant(ns.url(), "user-1"), "control");
    }
    assert_eq!(checkout::variant(ns.url(), "user-1"), "treatment-b");
    ns.assert_no_request(Route::Capture);
}

#[test]
fn checkout_gives_up_on_a_slow_service() {
    let ns = Namespace::builder("checkout_gives_up_on_a_slow_service")
        .fixtures(json!({"flags": {"checkout-v2": {"type": "string", "value": "one-page"}}}))
        .create();
    let _slow = ns.arm(Fault::new(Mode::Delay).delay(Duration::from_secs(5)).times(1));

    assert_eq!(checkout::variant(ns.url(), "user-1"), "control"); // after its 2 s timeout
    assert_eq!(checkout::variant(ns.url(), "user-1"), "one-page");
}

#[test]
fn checkout_reports_the_exposure() {
    let ns = svc_stub::namespace("checkout_reports_the_exposure");

    let variant = checkout::variant(ns.url(), "user-1");
    checkout::report_exposure(ns.url(), "user-1", &variant);

    ns.wait_for_svc_events(1, Duration::from_secs(5)); // the stub's long-poll: no sleep
    ns.assert_exposure("checkout-v2", "user-1", "treatment-b");
}
