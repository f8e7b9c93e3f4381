//! What a run's tests exercised: a test's own coverage names its gaps and the fixture flags never
//! read, in the stub's words; a gate fails under its percent; and at the end of a `cargo test`
//! (zz_coverage, run last) the stub's summary of the run's coverage is printed and the report kept
//! where the journals go.

mod common;

use std::path::Path;
use std::process::Command;

use common::{evaluate, panic_message, ANSWER_TIMEOUT};
use svc_stub::{CoverageCell, Fault, Mode, Scope, Selector};

const NEVER_429: &str = "evaluate never met a 429 with Retry-After";

/// The stub's summary of a suite that armed only a 500 on evaluate, as a user reads it.
const RUNTIME_LINE: &str = "svc-stub coverage: runtime 1 of 15 cells met; gaps: evaluate was never answered \
     successfully; evaluate never met a 401; evaluate never met a 429 with Retry-After; evaluate never met a timeout \
     (a delay or a hang); evaluate never met a malformed answer (invalid_json); and 9 more";
const FLAGS_LINE: &str = "svc-stub coverage: fixture flags read 0 of 9; never read: checkout-v2, dark-mode, \
     discount-rate, enterprise-dashboard, legacy-banner, and 4 more";

#[test]
fn a_tests_coverage_names_its_gaps_and_a_gate_fails_under_its_percent() {
    let stub = svc_stub::start();
    let _outage = stub.arm(Fault::new(Mode::Http500).apply_to(Selector::Evaluate));
    for _ in 0..2 {
        assert_eq!(evaluate(stub.url(), &[], ANSWER_TIMEOUT).status, Some(500));
    }
    let coverage = stub.coverage();
    assert_eq!(coverage.scope, Scope::Namespace);
    let cells: Vec<(&str, &str, u64)> =
        coverage.cells.iter().map(|c: &CoverageCell| (c.route.as_str(), c.outcome.as_str(), c.count)).collect();
    assert_eq!(cells, [("evaluate", "fault 500", 2)]);
    let runtime = &coverage.profiles["runtime"];
    assert_eq!(runtime.met, 1, "{runtime:?}");
    assert!(runtime.gaps.iter().any(|gap| gap.says == NEVER_429 && gap.route == "evaluate"), "{runtime:?}");

    assert_eq!(coverage.summary, [RUNTIME_LINE, FLAGS_LINE], "the stub's summary");
    assert!(coverage.flags.never_read.iter().any(|flag| flag == "checkout-v2"), "{:?}", coverage.flags);
    assert!(coverage.flags.read.is_empty() && coverage.flags.of == 9, "{:?}", coverage.flags);
    assert_eq!(coverage.json()["scope"], "namespace");

    assert!(coverage.meets("runtime", runtime.percent()) && !coverage.meets("runtime", 80.0));
    assert!(!coverage.meets("no-such-profile", 0.0));
    coverage.assert_covers("runtime", runtime.percent());
    let gate = std::panic::catch_unwind(|| coverage.assert_covers("runtime", 80.0));
    let message = panic_message(gate.unwrap_err());
    let want = "svc-stub coverage: runtime 1 of 15 cells met (6.7 %), under 80 %; gaps:\n  - evaluate was never answered successfully\n";
    assert!(message.starts_with(want), "{message}");
    assert!(message.contains(NEVER_429), "{message}");
}

/// `cargo test --test coverage_run --test zz_coverage`, into target/share-run, its journals in
/// `journals`, with COVERAGE_FAIL_UNDER `gate` (none: ""); its output, and whether it passed.
fn cargo_test(journals: &Path, gate: &str) -> (String, bool) {
    let manifest = env!("CARGO_MANIFEST_DIR");
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
    command
        .args(["test", "--locked", "--test", "coverage_run", "--test", "zz_coverage"])
        .current_dir(manifest)
        .env("CARGO_TARGET_DIR", Path::new(manifest).join("target/share-run"))
        .env_remove("SVC_STUB_URL") // a stub of the child run's own
        .env("SVC_STUB_JOURNAL_DIR", journals)
        .env("RS_TEST_COVERAGE", "1")
        .env_remove("COVERAGE_FAIL_UNDER");
    if !gate.is_empty() {
        command.env("COVERAGE_FAIL_UNDER", gate);
    }
    let output = command.output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (said, output.status.success())
}

#[test]
fn cargo_test_prints_the_runs_coverage_at_its_end_and_keeps_the_report() {
    let journals = std::env::temp_dir().join(format!("svc-stub-rs-coverage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&journals);
    for (gate, passes) in [("", true), ("5", true), ("80", false)] {
        let (said, passed) = cargo_test(&journals, gate);
        assert_eq!(passed, passes, "COVERAGE_FAIL_UNDER={gate}:\n{said}");
        let (suite, last) = (said.find("test evaluate_falls_back_on_a_500 ... ok"), said.find("svc-stub coverage: "));
        assert!(suite.is_some() && last > suite, "the summary is not printed after the suite:\n{said}");
        let file = journals.join("coverage.json");
        let printed = [RUNTIME_LINE, FLAGS_LINE, &format!("svc-stub coverage report: {}", file.display())].join("\n");
        assert!(said.contains(&format!("\n{printed}\n")), "not the stub's summary, then the report:\n{said}");
        let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!((&report["scope"], &report["profiles"]["runtime"]["met"]), (&"run".into(), &1.into()), "{report}");
        if !passes {
            assert!(said.contains("svc-stub coverage: runtime 1 of 15 cells met (6.7 %), under 80 %; gaps:"), "{said}");
        }
    }
    let _ = std::fs::remove_dir_all(&journals);
}

/// The guide shows the summary such a run prints, as the test above reads it.
#[test]
fn the_guides_summary_is_the_one_such_a_run_prints() {
    let guide =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/guides/rust.md")).unwrap();
    let shown = format!("\n{RUNTIME_LINE}\n{FLAGS_LINE}\nsvc-stub coverage report: ");
    assert!(guide.contains(&shown), "docs/guides/rust.md does not show the summary as it is printed:{shown}");
}
