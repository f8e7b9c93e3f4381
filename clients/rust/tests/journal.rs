//! The journal read, waited for (the stub's long-poll) and asserted; a failure's panic names
//! the journal snapshot it wrote; fixtures, keys and the management plane.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use svc_stub::{Fault, Mode, Namespace, Route, Selector};

/// The message `block` panics with.
fn panic_of(block: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(block)).expect_err("it should have panicked");
    common::panic_message(payload)
}

/// The journal file a panic message names; it must exist and be the inspector page.
fn journal_named_in(message: &str) -> PathBuf {
    let line = message.lines().last().unwrap_or_default();
    let path = line
        .strip_prefix("svc-stub journal of this test: ")
        .and_then(|rest| rest.strip_suffix(" (open it in a browser)"))
        .unwrap_or_else(|| panic!("no journal line at the end of:\n{message}"));
    let path = PathBuf::from(path);
    let page = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(page.starts_with("<!doctype html>"), "{}", &page[..page.len().min(100)]);
    path
}

fn exposure(key: &str, variant: &str) -> serde_json::Value {
    json!({"type": "exposure", "flagKey": "checkout-v2", "targetingKey": key, "value": variant, "variant": variant})
}

#[test]
fn a_wait_returns_as_soon_as_the_events_arrive() {
    let ns = svc_stub::namespace("wait early");
    let url = ns.url().to_owned();
    let sender = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        common::capture(&url, json!([exposure("user-1", "treatment-b"), {"type": "signal", "name": "x"}]));
    });
    let started = Instant::now();
    let events = ns.wait_for_svc_events(2, Duration::from_secs(10));
    let took = started.elapsed();
    sender.join().unwrap();
    assert_eq!(events.len(), 2);
    // it waited for the capture; had it run out, it would have panicked with what arrived
    assert!(took >= Duration::from_millis(250), "took {took:?}");
    ns.assert_exposure("checkout-v2", "user-1", "treatment-b");
    ns.assert_exposure("checkout-v2", "user-1", None);
}

#[test]
fn a_wait_for_requests_returns_early_too() {
    let ns = svc_stub::namespace("wait requests");
    let url = ns.url().to_owned();
    let sender = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        common::evaluate(&url, &[], common::ANSWER_TIMEOUT)
    });
    let started = Instant::now();
    let requests = ns.wait_for_requests(1, Route::Evaluate, Duration::from_secs(10));
    assert!(started.elapsed() >= Duration::from_millis(150), "it waited for the evaluate");
    assert_eq!(sender.join().unwrap().status, Some(200));
    assert_eq!((requests[0].method.as_str(), requests[0].path.as_str()), ("POST", "/v1/flags/evaluate"));
    let full = ns.request(requests[0].seq);
    assert!(full.body.and_then(|b| b.text).is_some_and(|t| t.contains("user-1")));
    assert_eq!(full.answer.map(|a| a.status), Some(200));
    assert!(full.curl.contains("/v1/flags/evaluate"), "{}", full.curl);
}

#[test]
fn a_wait_that_runs_out_shows_what_arrived_and_the_journal() {
    let ns = svc_stub::namespace("wait timeout");
    common::capture(ns.url(), json!([exposure("user-1", "treatment-b")]));
    let started = Instant::now();
    let message = panic_of(|| {
        ns.wait_for_svc_events(2, Duration::from_millis(400));
    });
    assert!(started.elapsed() >= Duration::from_millis(380));
    assert!(message.starts_with("waited 400ms for 2 svcEvents, got 1:\n[\n  {"), "{message}");
    assert!(message.contains("\"targetingKey\": \"user-1\""), "{message}");
    journal_named_in(&message);

    let error = ns.client().wait_for_requests(1, Route::Capture, Duration::from_millis(100)).unwrap(); // one arrived
    assert_eq!(error.len(), 1);
    let timeout = ns.client().wait_for_requests(3, Route::Evaluate, Duration::from_millis(100)).unwrap_err();
    assert_eq!(timeout.to_string(), "waited 100ms for 3 requests to evaluate, got 0:\n  (none)");
    let targets = ns.client().wait_for_targets(1, Duration::from_millis(50)).unwrap_err();
    assert_eq!(targets.to_string(), "waited 50ms for 1 targets, got 0:\n(none)");
    let events = ns.client().wait_for_events(1, Duration::from_millis(50)).unwrap_err();
    assert!(matches!(events, svc_stub::Error::WaitTimeout(_)));
}

#[test]
fn a_failed_exposure_assertion_names_what_was_recorded_and_the_journal() {
    let ns = svc_stub::namespace("exposure missing");
    common::capture(ns.url(), json!([exposure("user-1", "treatment-b")]));
    let message = panic_of(|| ns.assert_exposure("checkout-v2", "user-2", None));
    assert!(message.starts_with("no exposure of checkout-v2 for user-2; exposures recorded:\n[\n"), "{message}");
    let message = panic_of(|| ns.assert_exposure("checkout-v2", "user-1", "control"));
    assert!(message.starts_with("no exposure of checkout-v2 for user-1 (variant control); exposures"), "{message}");
    let path = journal_named_in(&message);
    assert_eq!(path.file_name().unwrap().to_string_lossy(), format!("{}.html", ns.name()));
    let default_directory = std::env::var_os("SVC_STUB_JOURNAL_DIR").is_none();
    if default_directory {
        // cargo's target directory: the one holding this test binary
        let target = std::env::current_exe()
            .unwrap()
            .ancestors()
            .find(|d| d.join("CACHEDIR.TAG").is_file())
            .unwrap()
            .to_path_buf();
        assert_eq!(path.parent().unwrap(), target.join("svc-stub-journal"));
    }
}

#[test]
fn a_request_where_none_was_expected_is_listed() {
    let ns = svc_stub::namespace("no request");
    ns.assert_no_request(Route::Evaluate);
    common::evaluate(ns.url(), &[], common::ANSWER_TIMEOUT);
    ns.assert_no_request(Route::Capture);
    let message = panic_of(|| ns.assert_no_request(Route::Evaluate));
    assert!(message.starts_with("expected no request to evaluate, got 1:\n  #"), "{message}");
    assert!(message.contains(" POST /v1/flags/evaluate -> 200\n"), "{message}");
    journal_named_in(&message);
    let message = panic_of(|| ns.assert_no_request(Route::Any));
    assert!(message.starts_with("expected no request to any route, got 1:"), "{message}");
}

#[test]
fn a_key_on_the_wrong_plane_is_a_warning() {
    let ns = svc_stub::namespace("warnings");
    common::evaluate(ns.url(), &[], common::ANSWER_TIMEOUT);
    ns.assert_no_warnings();
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let answer = agent
        .post(&format!("{}/v1/flags/evaluate", ns.url()))
        .header("Authorization", "Bearer svc_org_acme_ci") // an organisation key: the management plane's
        .send_empty()
        .unwrap();
    assert_eq!(answer.status().as_u16(), 400, "served, with a warning in the journal");
    let message = panic_of(|| ns.assert_no_warnings());
    assert!(message.starts_with("1 request used a key where the service refuses it:\n  #"), "{message}");
    assert!(message.contains(" POST /v1/flags/evaluate: an organisation key"), "{message}");
    journal_named_in(&message);
}

#[test]
fn a_retry_before_retry_after_is_named() {
    let ns = svc_stub::namespace("retry after");
    let _limited = ns.arm(Fault::new(Mode::Http429).retry_after(1).on(Selector::Evaluate).times(1));
    common::evaluate(ns.url(), &[], common::ANSWER_TIMEOUT);
    common::evaluate(ns.url(), &[], common::ANSWER_TIMEOUT);
    let message = panic_of(|| ns.assert_no_retry_before_retry_after(Route::Evaluate));
    let seqs: Vec<u64> = ns.requests(Route::Evaluate).iter().map(|r| r.seq).collect();
    let expected = format!("retried evaluate before Retry-After allowed:\n  #{} came ", seqs[1]);
    assert!(message.starts_with(&expected), "{message}");
    assert!(message.contains(&format!(" ms after #{} was answered 429 with Retry-After: 1\n", seqs[0])), "{message}");
    journal_named_in(&message);
    assert_eq!(ns.gaps_ms(Route::Evaluate).len(), 1);
    ns.assert_no_retry_before_retry_after(Route::Capture);
}

#[test]
fn a_test_that_panics_leaves_its_journal_when_its_namespace_drops() {
    let mut name = String::new();
    let message = panic_of(|| {
        let ns = svc_stub::namespace("panics");
        name = ns.name().to_owned();
        common::evaluate(ns.url(), &[], common::ANSWER_TIMEOUT);
        panic!("the test's own assertion");
    });
    assert_eq!(message, "the test's own assertion");
    let directory = std::env::var_os("SVC_STUB_JOURNAL_DIR").map(PathBuf::from).unwrap_or_else(|| {
        std::env::current_exe()
            .unwrap()
            .ancestors()
            .find(|d| d.join("CACHEDIR.TAG").is_file())
            .unwrap()
            .join("svc-stub-journal")
    });
    let page = std::fs::read_to_string(directory.join(format!("{name}.html"))).unwrap();
    assert!(page.contains("/v1/flags/evaluate"));
    let gone = svc_stub::Client::new(&svc_stub::run_url().unwrap()).unwrap().namespaces().unwrap();
    assert!(gone.iter().all(|n| n.name != name), "{name} was not deleted");
}

#[test]
fn fixtures_from_a_value_and_a_file_and_bound_keys() {
    let ns = Namespace::builder("fixtures")
        .fixture_file("tests/fixtures/flags.yaml")
        .fixtures(json!({"flags": {"banner": {"type": "boolean", "value": true}}}))
        .keys(["project-api-key_bound_to_fixtures"])
        .create();
    assert_eq!(common::evaluate(ns.url(), &[], common::ANSWER_TIMEOUT).value(), Some("from-a-file"));
    // the bound key is served in the namespace with no /ns/ in the URL
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let answer = agent
        .post(&format!("{}/v1/flags/evaluate", ns.base_url()))
        .header("Authorization", "Bearer project-api-key_bound_to_fixtures")
        .content_type("application/json")
        .send(r#"{"targetingKey": "u", "flagKeys": ["banner"]}"#)
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    assert!(answer.contains("\"value\":true"), "{answer}");
    let served = ns.set_fixtures(json!({"flags": {"only": {"type": "string", "value": "x"}}}));
    assert_eq!(served, ["only"]);
    let served = ns.merge_fixtures_file("tests/fixtures/flags.yaml");
    assert_eq!(served, ["checkout-v2", "only"]);
    assert!(ns.name().starts_with("fixtures-") && ns.url() == format!("{}/ns/{}", ns.base_url(), ns.name()));
    let namespaces = ns.client().namespaces().unwrap();
    let mine = namespaces.iter().find(|n| n.name == ns.name()).unwrap();
    assert_eq!((mine.bound_keys, mine.flags), (1, 2));
}

#[test]
fn a_fixture_file_that_is_not_there_is_one_line() {
    let error = Namespace::builder("missing file").fixture_file("tests/fixtures/nope.yaml").try_create().unwrap_err();
    assert!(error.to_string().starts_with("svc-stub: fixtures: tests/fixtures/nope.yaml: "), "{error}");
    let message = panic_of(|| {
        svc_stub::Namespace::builder("bad fixtures").fixtures(json!({"flags": {"x": {"type": "colour"}}})).create();
    });
    assert!(message.starts_with("svc-stub: 400 ") && message.contains("fixtures: "), "{message}");
    assert!(!message.contains('\n'), "{message}");
}

#[test]
fn the_management_plane_is_seeded_and_read() {
    let ns = svc_stub::namespace("management");
    let seeded = ns.seed_management(json!({"orgs": {"org_acme": {
        "keys": [{"key": "svc_org_acme_tf"}],
        "projects": [{"name": "Shop", "slug": "shop"}],
    }}}));
    assert!(seeded.to_string().contains("shop"), "{seeded}");
    assert!(!ns.management().to_string().contains("svc_org_acme_tf"));
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let listed = agent
        .get(&format!("{}/v1/projects", ns.url()))
        .header("Authorization", "Bearer svc_org_acme_tf")
        .call()
        .unwrap();
    assert_eq!(listed.status().as_u16(), 200);
    assert_eq!(ns.requests(Route::Projects).len(), 1);
    assert_eq!(ns.requests(Route::ProjectsList).len(), 1);
    assert!(ns.requests(Route::ProjectsCreate).is_empty());
}

#[test]
fn a_rate_limit_answers_429_and_reset_lifts_it() {
    let ns = svc_stub::namespace("rate limit");
    ns.set_rate_limit(None, &[("project-api-key_rust", 1.0)]);
    assert_eq!(common::evaluate(ns.url(), &[], common::ANSWER_TIMEOUT).status, Some(200));
    assert_eq!(common::evaluate(ns.url(), &[], common::ANSWER_TIMEOUT).status, Some(429));
    ns.reset();
    assert_eq!(common::evaluate(ns.url(), &[], common::ANSWER_TIMEOUT).status, Some(200));
    assert_eq!(ns.requests(Route::Any).len(), 1, "reset clears the journal");
}
