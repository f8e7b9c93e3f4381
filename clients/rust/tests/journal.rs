//! The journal read (in arrival order, bodies included), waited for (the stub's long-poll) and
//! asserted (the stub's verdicts); a failure's panic names the journal snapshot it wrote, under
//! cargo's target directory; fixtures, keys, the management plane and the offline address.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use svc_stub::{Fault, Mode, Route, Selector, SvcStub};

/// How long a wait may take: a guard against a hang, not a speed budget.
const WAIT: Duration = Duration::from_secs(60);

/// Where journals go: `SVC_STUB_JOURNAL_DIR`, else `svc-stub-journal` in cargo's target
/// directory, the one holding this test binary.
fn journal_directory() -> PathBuf {
    std::env::var_os("SVC_STUB_JOURNAL_DIR").map(PathBuf::from).unwrap_or_else(|| {
        let exe = std::env::current_exe().unwrap();
        exe.ancestors().find(|d| d.join("CACHEDIR.TAG").is_file()).unwrap().join("svc-stub-journal")
    })
}

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
    let stub = svc_stub::start();
    let url = stub.url().to_owned();
    let sender = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        common::capture(&url, json!([exposure("user-1", "treatment-b"), {"type": "signal", "name": "x"}]));
    });
    let started = Instant::now();
    let events = stub.wait_for_svc_events(2, WAIT);
    let took = started.elapsed();
    sender.join().unwrap();
    assert_eq!(events.len(), 2);
    // it waited for the capture; had it run out, it would have panicked with what arrived
    assert!(took >= Duration::from_millis(250), "took {took:?}");
    stub.assert_exposure("checkout-v2", "user-1", "treatment-b");
    stub.assert_exposure("checkout-v2", "user-1", None);
}

#[test]
fn a_wait_for_requests_returns_early_too() {
    let stub = svc_stub::start();
    let url = stub.url().to_owned();
    let sender = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        common::evaluate(&url, &[], common::ANSWER_TIMEOUT)
    });
    let started = Instant::now();
    let requests = stub.wait_for_requests(1, Route::Evaluate, WAIT);
    assert!(started.elapsed() >= Duration::from_millis(150), "it waited for the evaluate");
    assert_eq!(sender.join().unwrap().status, Some(200));
    assert_eq!((requests[0].method.as_str(), requests[0].path.as_str()), ("POST", "/v1/flags/evaluate"));
    assert_eq!(requests[0].json::<Value>()["targetingKey"], "user-1", "waited for, with its body");
    let one = stub.request(requests[0].seq);
    assert_eq!(one.answer.as_ref().map(|a| a.status), Some(200));
    assert!(one.curl.contains("/v1/flags/evaluate"), "{}", one.curl);
    assert_eq!(one, requests[0]);
}

#[test]
fn a_recorded_body_reads_as_json_in_one_call() {
    let stub = svc_stub::start();
    common::capture(stub.url(), json!([exposure("user-1", "treatment-b")]));
    let sent = stub.requests(Route::Capture);
    let body: Value = sent[0].json();
    assert_eq!(body["events"][0]["targetingKey"], "user-1");
    // or into a type of the test's own (a struct deriving Deserialize reads the same way)
    let events: std::collections::BTreeMap<String, Vec<Value>> = sent[0].json();
    assert_eq!(events["events"].len(), 1);
    assert!(sent[0].text().is_some_and(|text| text.contains("\"variant\":\"treatment-b\"")), "{:?}", sent[0].text());

    common::evaluate(stub.url(), &[], common::ANSWER_TIMEOUT);
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    agent.get(&format!("{}/v1/whoami", stub.url())).header("Authorization", "Bearer svc_org_acme_ci").call().unwrap();
    let whoami = &stub.requests(Route::Whoami)[0];
    assert_eq!(whoami.text(), None, "a GET sends no body");
    let message = panic_of(|| drop(whoami.json::<Value>()));
    assert_eq!(message, format!("svc-stub: #{} GET /v1/whoami sent no body, not JSON", whoami.seq));
    let evaluate = &stub.requests(Route::Evaluate)[0];
    let message = panic_of(|| drop(evaluate.json::<Vec<u32>>()));
    let expected = format!("svc-stub: the body of #{} POST /v1/flags/evaluate does not read as ", evaluate.seq);
    assert!(message.starts_with(&expected) && message.contains("Vec<u32>: invalid type: map"), "{message}");
}

#[test]
fn requests_are_listed_as_they_arrived_a_delayed_one_first() {
    let stub = svc_stub::start();
    let _slow =
        stub.arm(Fault::new(Mode::Delay).delay(Duration::from_millis(1500)).apply_to(Selector::Evaluate).times(1));
    let url = stub.url().to_owned();
    let delayed = std::thread::spawn(move || common::evaluate(&url, &[], common::ANSWER_TIMEOUT));
    // the delayed one has arrived once its fault has fired (and so run out)
    let started = Instant::now();
    while !stub.armed().is_empty() {
        assert!(started.elapsed() < WAIT, "the delayed evaluate never arrived");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(common::evaluate(stub.url(), &[], common::ANSWER_TIMEOUT).status, Some(200)); // the quick one
    assert_eq!(delayed.join().unwrap().status, Some(200));

    let listed = stub.wait_for_requests(2, Route::Evaluate, WAIT);
    let seqs: Vec<u64> = listed.iter().map(|r| r.seq).collect();
    assert!(seqs[0] < seqs[1], "listed by seq: {seqs:?}");
    assert_eq!(
        listed[0].fault.as_ref().and_then(|f| f.mode.clone()),
        Some(Mode::Delay.into()),
        "the delayed one first: {listed:?}"
    );
    assert!(listed[1].fault.is_none(), "the quick one, which ended first, second: {listed:?}");
}

#[test]
fn the_offline_address_refuses_a_real_client() {
    let stub = svc_stub::start();
    let offline = stub.offline_url();
    assert!(offline.starts_with("http://127.0.0.1:"), "{offline}");
    assert_eq!(stub.offline_url(), offline, "one address for the stub's whole life");
    let agent: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(WAIT)).build().into();
    let refused = agent.post(&format!("{offline}/v1/flags/evaluate")).send("{}").unwrap_err();
    assert!(matches!(&refused, ureq::Error::Io(e) if e.kind() == std::io::ErrorKind::ConnectionRefused), "{refused:?}");
    stub.assert_no_request(Route::Evaluate); // nothing reached the stub
}

#[test]
fn the_namespace_is_named_after_the_test() {
    let stub = svc_stub::start();
    let (readable, suffix) = stub.name().rsplit_once('-').unwrap();
    assert_eq!(readable, "journal-the_namespace_is_named_after_the_test");
    assert!(suffix.len() == 8 && suffix.bytes().all(|b| b.is_ascii_hexdigit()), "{}", stub.name());
    assert_eq!(stub.url(), format!("{}/ns/{}", stub.base_url(), stub.name()));
    let other = svc_stub::start();
    assert_ne!(other.name(), stub.name(), "two of one test are two namespaces");
}

#[test]
fn a_wait_that_runs_out_shows_what_arrived_and_the_journal() {
    let stub = svc_stub::start();
    common::capture(stub.url(), json!([exposure("user-1", "treatment-b")]));
    let started = Instant::now();
    let message = panic_of(|| {
        stub.wait_for_svc_events(2, Duration::from_millis(400));
    });
    assert!(started.elapsed() >= Duration::from_millis(380));
    assert!(message.starts_with("waited 400ms for 2 svcEvents, got 1:\n[\n  {"), "{message}");
    assert!(message.contains("\"targetingKey\": \"user-1\""), "{message}");
    journal_named_in(&message);

    let error = stub.client().wait_for_requests(1, Route::Capture, Duration::from_millis(100)).unwrap(); // one arrived
    assert_eq!(error.len(), 1);
    let timeout = stub.client().wait_for_requests(3, Route::Evaluate, Duration::from_millis(100)).unwrap_err();
    assert_eq!(timeout.to_string(), "waited 100ms for 3 requests to evaluate, got 0:\n  (none)");
    let targets = stub.client().wait_for_targets(1, Duration::from_millis(50)).unwrap_err();
    assert_eq!(targets.to_string(), "waited 50ms for 1 targets, got 0:\n(none)");
    let events = stub.client().wait_for_events(1, Duration::from_millis(50)).unwrap_err();
    assert!(matches!(events, svc_stub::Error::WaitTimeout(_)));
}

#[test]
fn a_failed_exposure_assertion_names_what_was_recorded_and_the_journal() {
    let stub = svc_stub::start();
    common::capture(stub.url(), json!([exposure("user-1", "treatment-b")]));
    let message = panic_of(|| stub.assert_exposure("checkout-v2", "user-2", None));
    let recorded =
        "exposures recorded:\n  checkout-v2 for user-1: variant treatment-b\nsvc-stub journal of this test: ";
    assert!(message.starts_with(&format!("no exposure of checkout-v2 for user-2; {recorded}")), "{message}");
    let message = panic_of(|| stub.assert_exposure("checkout-v2", "user-1", "control"));
    assert!(message.starts_with(&format!("no exposure of checkout-v2 for user-1 (variant control); {recorded}")));
    let path = journal_named_in(&message);
    assert_eq!(path, journal_directory().join(format!("{}.html", stub.name())));
    stub.assert_exposure("checkout-v2", "user-1", "treatment-b");
}

#[test]
fn a_request_where_none_was_expected_is_listed() {
    let stub = svc_stub::start();
    stub.assert_no_request(Route::Evaluate);
    common::evaluate(stub.url(), &[], common::ANSWER_TIMEOUT);
    stub.assert_no_request(Route::Capture);
    let message = panic_of(|| stub.assert_no_request(Route::Evaluate));
    assert!(message.starts_with("expected no request to route 'evaluate', got 1:\n  #"), "{message}");
    assert!(message.contains(" POST /v1/flags/evaluate -> 200\n"), "{message}");
    journal_named_in(&message);
    stub.assert_no_request(Route::Projects); // a resource: each of its routes
}

#[test]
fn a_key_on_the_wrong_plane_is_a_warning() {
    let stub = svc_stub::start();
    common::evaluate(stub.url(), &[], common::ANSWER_TIMEOUT);
    stub.assert_no_warnings();
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let answer = agent
        .post(&format!("{}/v1/flags/evaluate", stub.url()))
        .header("Authorization", "Bearer svc_org_acme_ci") // an organisation key: the management plane's
        .send_empty()
        .unwrap();
    assert_eq!(answer.status().as_u16(), 400, "served, with a warning in the journal");
    let message = panic_of(|| stub.assert_no_warnings());
    assert!(message.starts_with("1 request used a key where the service refuses it:\n  #"), "{message}");
    assert!(message.contains(" POST /v1/flags/evaluate: an organisation key"), "{message}");
    journal_named_in(&message);
}

#[test]
fn a_retry_before_retry_after_is_named() {
    let stub = svc_stub::start();
    let _limited = stub.arm(Fault::new(Mode::Http429).retry_after(1).apply_to(Selector::Evaluate).times(1));
    common::evaluate(stub.url(), &[], common::ANSWER_TIMEOUT);
    common::evaluate(stub.url(), &[], common::ANSWER_TIMEOUT);
    let message = panic_of(|| stub.assert_no_retry_before_retry_after(Route::Evaluate));
    let seqs: Vec<u64> = stub.requests(Route::Evaluate).iter().map(|r| r.seq).collect();
    let expected = format!("retried 'evaluate' before Retry-After allowed:\n  #{} came ", seqs[1]);
    assert!(message.starts_with(&expected), "{message}");
    assert!(message.contains(&format!(" ms after #{} was answered 429 with Retry-After: 1\n", seqs[0])), "{message}");
    journal_named_in(&message);
    assert_eq!(stub.gaps_ms(Route::Evaluate).len(), 1);
    stub.assert_no_retry_before_retry_after(Route::Capture);
}

#[test]
fn a_test_that_panics_leaves_its_journal_when_its_namespace_drops() {
    let mut name = String::new();
    let message = panic_of(|| {
        let stub = svc_stub::start();
        name = stub.name().to_owned();
        common::evaluate(stub.url(), &[], common::ANSWER_TIMEOUT);
        panic!("the test's own assertion");
    });
    assert_eq!(message, "the test's own assertion");
    let page = std::fs::read_to_string(journal_directory().join(format!("{name}.html"))).unwrap();
    assert!(page.contains("/v1/flags/evaluate"));
    let gone = svc_stub::Client::new(&svc_stub::run_url().unwrap()).unwrap().namespaces().unwrap();
    assert!(gone.iter().all(|n| n.name != name), "{name} was not deleted");
}

#[test]
fn fixtures_from_a_value_and_a_file_and_bound_keys() {
    let stub = SvcStub::builder()
        .fixture_file("tests/fixtures/flags.yaml")
        .fixtures(json!({"flags": {"banner": {"type": "boolean", "value": true}}}))
        .keys(["project-api-key_bound_to_fixtures"])
        .start();
    assert_eq!(common::evaluate(stub.url(), &[], common::ANSWER_TIMEOUT).value(), Some("from-a-file"));
    // the bound key is served in the namespace with no /ns/ in the URL
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let answer = agent
        .post(&format!("{}/v1/flags/evaluate", stub.base_url()))
        .header("Authorization", "Bearer project-api-key_bound_to_fixtures")
        .content_type("application/json")
        .send(r#"{"targetingKey": "u", "flagKeys": ["banner"]}"#)
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    assert!(answer.contains("\"value\":true"), "{answer}");
    let served = stub.set_fixtures(json!({"flags": {"only": {"type": "string", "value": "x"}}}));
    assert_eq!(served, ["only"]);
    let served = stub.merge_fixtures_file("tests/fixtures/flags.yaml");
    assert_eq!(served, ["checkout-v2", "only"]);
    let namespaces = stub.client().namespaces().unwrap();
    let mine = namespaces.iter().find(|n| n.name == stub.name()).unwrap();
    assert_eq!((mine.bound_keys, mine.flags), (1, 2));
}

#[test]
fn a_fixture_file_that_is_not_there_is_one_line() {
    let error = SvcStub::builder().fixture_file("tests/fixtures/nope.yaml").try_start().unwrap_err();
    assert!(error.to_string().starts_with("svc-stub: fixtures: tests/fixtures/nope.yaml: "), "{error}");
    let message = panic_of(|| {
        drop(svc_stub::SvcStub::builder().fixtures(json!({"flags": {"x": {"type": "colour"}}})).start());
    });
    assert!(message.starts_with("svc-stub: 400 ") && message.contains("fixtures: "), "{message}");
    assert!(!message.contains('\n'), "{message}");
}

#[test]
fn the_management_plane_is_seeded_and_read() {
    let stub = svc_stub::start();
    let seeded = stub.seed_management(json!({"orgs": {"org_acme": {
        "keys": [{"key": "svc_org_acme_tf"}],
        "projects": [{"name": "Shop", "slug": "shop"}],
    }}}));
    assert!(seeded.to_string().contains("shop"), "{seeded}");
    assert!(!stub.management().to_string().contains("svc_org_acme_tf"));
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let listed = agent
        .get(&format!("{}/v1/projects", stub.url()))
        .header("Authorization", "Bearer svc_org_acme_tf")
        .call()
        .unwrap();
    assert_eq!(listed.status().as_u16(), 200);
    assert_eq!(stub.requests(Route::Projects).len(), 1);
    assert_eq!(stub.requests(Route::ProjectsList).len(), 1);
    assert!(stub.requests(Route::ProjectsCreate).is_empty());
}

#[test]
fn a_rate_limit_answers_429_and_reset_lifts_it() {
    let stub = svc_stub::start();
    stub.set_rate_limit(None, &[("project-api-key_rust", 1.0)]);
    assert_eq!(common::evaluate(stub.url(), &[], common::ANSWER_TIMEOUT).status, Some(200));
    assert_eq!(common::evaluate(stub.url(), &[], common::ANSWER_TIMEOUT).status, Some(429));
    stub.reset();
    assert_eq!(common::evaluate(stub.url(), &[], common::ANSWER_TIMEOUT).status, Some(200));
    assert_eq!(stub.requests(Route::Any).len(), 1, "reset clears the journal");
}
