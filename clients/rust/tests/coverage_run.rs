//! Run by `coverage.rs`, in a `cargo test` of its own with zz_coverage: a suite that arms only a
//! 500 on evaluate, and calls evaluate twice.

mod common;

use common::{evaluate, ANSWER_TIMEOUT};
use svc_stub::{Fault, Mode, Selector};

#[test]
fn evaluate_falls_back_on_a_500() {
    if std::env::var_os("RS_TEST_COVERAGE").is_none() {
        return;
    }
    let stub = svc_stub::start();
    let _outage = stub.arm(Fault::new(Mode::Http500).apply_to(Selector::Evaluate));
    for _ in 0..2 {
        let seen = evaluate(stub.url(), &[], ANSWER_TIMEOUT);
        assert_eq!(seen.status, Some(500), "{seen:?}");
    }
}
