//! Tests on cargo's parallel threads, and threads of one test, each in a namespace of its own:
//! each is served its own value and its journal holds its own requests only.

mod common;

use std::time::Duration;

use serde_json::json;
use svc_stub::{Fault, Mode, Route, Selector};

/// Serves `me` as checkout-v2, faults every third namespace, and checks nothing of another's shows.
fn serves_its_own_value(me: &str) {
    let stub = svc_stub::SvcStub::builder()
        .fixtures(json!({"flags": {"checkout-v2": {"type": "string", "value": me, "variant": me}}}))
        .start();
    let faulted = me.bytes().map(u32::from).sum::<u32>() % 3 == 0;
    let _fault = faulted.then(|| stub.arm(Fault::new(Mode::Http500).apply_to(Selector::Evaluate)));
    for _ in 0..3 {
        let seen = common::evaluate(stub.url(), &[], common::ANSWER_TIMEOUT);
        if faulted {
            assert_eq!(seen.status, Some(500), "{me}: {seen:?}");
        } else {
            assert_eq!(seen.value(), Some(me), "{me}: {seen:?}");
        }
    }
    common::capture(
        stub.url(),
        json!([{"type": "exposure", "flagKey": "checkout-v2", "targetingKey": me, "variant": me}]),
    );
    let requests = stub.wait_for_requests(4, Route::Any, Duration::from_secs(60));
    assert_eq!(requests.len(), 4, "{me}: {requests:?}");
    assert!(requests.iter().all(|r| r.status == Some(if faulted && r.is(Route::Evaluate) { 500 } else { 200 })));
    assert_eq!(stub.exposures().len(), 1);
    stub.assert_exposure("checkout-v2", me, me);
    assert_eq!(stub.armed().len(), usize::from(faulted));
}

macro_rules! parallel {
    ($($test:ident)+) => {
        $(#[test] fn $test() { serves_its_own_value(stringify!($test)) })+
    };
}

parallel! {
    t01 t02 t03 t04 t05 t06 t07 t08 t09 t10 t11 t12 t13 t14 t15 t16
    t17 t18 t19 t20 t21 t22 t23 t24 t25 t26 t27 t28 t29 t30 t31 t32
}

#[test]
fn forty_threads_of_one_test_at_once() {
    std::thread::scope(|scope| {
        for i in 0..40 {
            scope.spawn(move || serves_its_own_value(&format!("thread-{i}")));
        }
    });
}

#[test]
fn one_namespace_shared_by_threads_of_a_test() {
    let stub = svc_stub::start();
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| common::evaluate(stub.url(), &[], common::ANSWER_TIMEOUT));
        }
    });
    assert_eq!(stub.requests(Route::Evaluate).len(), 8);
}
