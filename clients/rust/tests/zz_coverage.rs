//! The run's coverage, at its end: cargo runs test targets by name, so this one runs last. It
//! prints the stub's summary (what the run's tests met of each profile, the first gaps, the
//! fixture flags never read), and keeps the stub's answer as
//! target/svc-stub-journal/coverage.json. In CI, COVERAGE_FAIL_UNDER=80 fails the run when
//! the tests met less than 80 % of the runtime profile (a local run of a few tests is not gated).

#[test]
fn coverage() {
    let coverage = svc_stub::print_coverage();
    if let Ok(percent) = std::env::var("COVERAGE_FAIL_UNDER") {
        coverage.assert_covers("runtime", percent.parse().expect("COVERAGE_FAIL_UNDER: a percent"));
    }
}
