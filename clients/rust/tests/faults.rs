//! Every fault mode, armed and sent as headers, reaches a real HTTP client, once, and the
//! journal names it; guards disarm; sequences step.

mod common;

use std::time::Duration;

use common::{evaluate, Seen, ANSWER_TIMEOUT};
use svc_stub::{fault_headers, Error, Fault, FaultSource, Mode, Route, Selector, Step, Word};

/// How long a wait for the journal may take: a guard against a hang, not a speed budget.
const WAIT: Duration = Duration::from_secs(60);
/// How long the client waits for a hung answer before it gives up: what `Mode::Hang` is tested by.
const HANG_TIMEOUT: Duration = Duration::from_secs(1);

/// How long the client waits for an answer faulted by `mode`.
fn client_timeout(mode: Mode) -> Duration {
    if mode == Mode::Hang {
        HANG_TIMEOUT
    } else {
        ANSWER_TIMEOUT
    }
}

/// What the fault of each mode is armed with, and what a client sees of it.
fn case(mode: Mode) -> (Fault, fn(&Seen) -> bool) {
    let fault = Fault::new(mode);
    match mode {
        Mode::Delay => {
            (fault.delay(Duration::from_millis(300)), |s| s.status == Some(200) && s.took >= Duration::from_millis(280))
        }
        Mode::Http401 => (fault, |s| s.status == Some(401)),
        Mode::Http429 => (fault.retry_after(3), |s| s.status == Some(429) && s.retry_after.as_deref() == Some("3")),
        Mode::Http500 => (fault, |s| s.status == Some(500)),
        Mode::InvalidJson => (fault, |s| s.status == Some(200) && s.decoded.is_none()),
        Mode::Truncated => (fault, |s| s.error.is_some() || s.decoded.is_none()),
        Mode::QuotaLimited => {
            (fault, |s| s.status == Some(200) && s.decoded.as_ref().is_some_and(|d| d["quotaLimited"] == true))
        }
        Mode::Status => {
            (fault.status(503).retry_after(2), |s| s.status == Some(503) && s.retry_after.as_deref() == Some("2"))
        }
        Mode::Reset | Mode::EmptyResponse => (fault, |s| s.error.is_some() && s.status.is_none()),
        Mode::SlowBody => (fault.delay(Duration::from_millis(300)), |s| {
            s.status == Some(200) && s.decoded.is_some() && s.took >= Duration::from_millis(280)
        }),
        Mode::Hang => (fault, |s| s.error.as_deref().is_some_and(|e| e.contains("timeout")) && s.status.is_none()),
    }
}

/// Arms `mode` on evaluate for one request: the client sees it, the next request is served, and
/// the journal names the fault as armed.
fn armed_reaches_the_client_once(mode: Mode) {
    let stub = svc_stub::start();
    let (fault, seen) = case(mode);
    let guard = stub.arm(fault.apply_to(Selector::Evaluate).times(1));
    assert_eq!(guard.armed().mode, Some(mode));
    let got = evaluate(stub.url(), &[], client_timeout(mode));
    assert!(seen(&got), "{mode}: the client saw {got:?}");
    let after = evaluate(stub.url(), &[], ANSWER_TIMEOUT);
    assert_eq!(after.status, Some(200), "times(1) faults one request only; the next: {after:?}");
    assert_eq!(after.value(), Some("treatment-b"));
    // listed as each ends: a hung request only once its client has given up on it
    let faulted: Vec<_> =
        stub.wait_for_requests(2, Route::Evaluate, WAIT).into_iter().filter_map(|r| r.fault).collect();
    assert_eq!(faulted.len(), 1, "{faulted:?}");
    assert_eq!((faulted[0].mode.clone(), faulted[0].source.clone()), (Some(mode.into()), FaultSource::Armed.into()));
    assert_eq!(faulted[0].armed_id, Some(guard.armed().id));
}

/// Sends `mode` as the request's own headers: that request alone is faulted.
fn headers_fault_one_request(mode: Mode) {
    let stub = svc_stub::start();
    let (fault, seen) = case(mode);
    let got = evaluate(stub.url(), &fault_headers(&fault).unwrap(), client_timeout(mode));
    assert!(seen(&got), "{mode} by header: the client saw {got:?}");
    assert_eq!(evaluate(stub.url(), &[], ANSWER_TIMEOUT).status, Some(200));
    let faulted: Vec<_> =
        stub.wait_for_requests(2, Route::Evaluate, WAIT).into_iter().filter_map(|r| r.fault).collect();
    assert_eq!(faulted.len(), 1, "{faulted:?}");
    assert_eq!((faulted[0].mode.clone(), faulted[0].source.clone()), (Some(mode.into()), FaultSource::Header.into()));
}

macro_rules! every_mode {
    ($($test:ident: $mode:expr,)+) => {
        mod armed {
            use super::*;
            $(#[test] fn $test() { armed_reaches_the_client_once($mode) })+
        }
        mod by_header {
            use super::*;
            $(#[test] fn $test() { headers_fault_one_request($mode) })+
        }

        #[test]
        fn every_mode_has_a_test() {
            let tested = [$($mode),+];
            for mode in Mode::ALL {
                assert!(tested.contains(mode), "no test of {mode}");
            }
            assert_eq!(tested.len(), Mode::ALL.len());
        }
    };
}

every_mode! {
    delay: Mode::Delay,
    http_401: Mode::Http401,
    http_429: Mode::Http429,
    http_500: Mode::Http500,
    invalid_json: Mode::InvalidJson,
    truncated: Mode::Truncated,
    quota_limited: Mode::QuotaLimited,
    status: Mode::Status,
    reset: Mode::Reset,
    empty_response: Mode::EmptyResponse,
    slow_body: Mode::SlowBody,
    hang: Mode::Hang,
}

#[test]
fn a_guard_disarms_its_fault_when_dropped() {
    let stub = svc_stub::start();
    {
        let _outage = stub.arm(Fault::new(Mode::Http500).apply_to(Selector::Evaluate));
        assert_eq!(evaluate(stub.url(), &[], ANSWER_TIMEOUT).status, Some(500));
        assert_eq!(evaluate(stub.url(), &[], ANSWER_TIMEOUT).status, Some(500));
        assert_eq!(stub.armed().len(), 1);
    }
    assert!(stub.armed().is_empty());
    assert_eq!(evaluate(stub.url(), &[], ANSWER_TIMEOUT).status, Some(200));
}

#[test]
fn a_kept_fault_stays_armed_and_one_run_out_is_fine() {
    let stub = svc_stub::start();
    let kept = stub.arm(Fault::new(Mode::Http401).apply_to(Selector::Evaluate)).keep();
    let once = stub.arm(Fault::new(Mode::Http429).apply_to(Selector::Capture).times(1));
    let refused = common::try_capture(stub.url(), serde_json::json!([{"type": "signal", "name": "x"}]));
    assert_eq!(refused, Some(429));
    drop(once); // it ran out by itself: dropping its guard is fine
    let armed = stub.armed();
    assert_eq!(armed.iter().map(|f| f.id).collect::<Vec<_>>(), vec![kept.id]);
    assert_eq!(evaluate(stub.url(), &[], ANSWER_TIMEOUT).status, Some(401));
    stub.clear_faults();
    assert_eq!(evaluate(stub.url(), &[], ANSWER_TIMEOUT).status, Some(200));
}

#[test]
fn with_fault_arms_for_a_closure() {
    let stub = svc_stub::start();
    let during = stub.with_fault(Fault::new(Mode::Status).status(503).apply_to(Selector::Runtime), || {
        evaluate(stub.url(), &[], ANSWER_TIMEOUT).status
    });
    assert_eq!(during, Some(503));
    assert_eq!(evaluate(stub.url(), &[], ANSWER_TIMEOUT).status, Some(200));
}

#[test]
fn a_sequence_steps_one_request_at_a_time() {
    let stub = svc_stub::start();
    let _steps = stub.arm(
        Fault::sequence([Step::new(Mode::Http500), Step::pass(), Step::new(Mode::Status).status(418)])
            .apply_to(Selector::Evaluate),
    );
    let statuses: Vec<_> = (0..4).map(|_| evaluate(stub.url(), &[], ANSWER_TIMEOUT).status).collect();
    assert_eq!(statuses, [Some(500), Some(200), Some(418), Some(200)]);
    let steps: Vec<_> = stub.requests(Route::Evaluate).into_iter().map(|r| r.fault.and_then(|f| f.step)).collect();
    assert_eq!(steps, [Some(0), Some(1), Some(2), None]);
}

#[test]
fn a_fault_on_another_route_leaves_evaluate_alone() {
    let stub = svc_stub::start();
    let _fault = stub.arm(Fault::new(Mode::Http500).apply_to(Selector::Management).apply_to(Selector::Capture));
    assert_eq!(evaluate(stub.url(), &[], ANSWER_TIMEOUT).status, Some(200));
}

#[test]
fn a_fault_the_stub_refuses_panics_with_its_one_line() {
    let stub = svc_stub::start();
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _fault = stub.arm(Fault::new(Mode::Delay).probability(2.0, 1)); // a share above 1
    }));
    let message = common::panic_message(refused.unwrap_err());
    assert!(message.starts_with("svc-stub: 400 "), "{message}");
    assert!(message.contains("probability"), "{message}");
    assert!(!message.contains('\n'), "{message}");
    let error = stub.client().arm(&Fault::new(Mode::Delay).probability(2.0, 1)).unwrap_err();
    assert!(matches!(error, svc_stub::Error::Stub { status: 400, .. }), "{error:?}");
}

/// `Mode::Status` has a constructor that takes its status; one built without is refused before
/// anything is sent, at the test's line, with what to write instead.
#[test]
fn a_status_fault_takes_its_status_and_one_without_is_refused_before_it_is_sent() {
    let stub = svc_stub::start();
    let armed = stub.arm(Fault::with_status(418).apply_to(Selector::Evaluate).times(1));
    assert_eq!((armed.armed().mode, armed.armed().status), (Some(Mode::Status), Some(418)));
    assert_eq!(evaluate(stub.url(), &[], ANSWER_TIMEOUT).status, Some(418));
    let step = Fault::sequence([Step::with_status(503), Step::new(Mode::Status)]);
    for fault in [Fault::new(Mode::Status), step] {
        let error = stub.client().arm(&fault).unwrap_err();
        assert!(matches!(error, Error::Invalid { .. }), "{error:?}");
        assert_eq!(
            error.to_string(),
            "svc-stub: a Mode::Status fault needs its status: Fault::with_status(503) (or Step::with_status in a sequence)"
        );
    }
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _fault = stub.arm(Fault::new(Mode::Status));
    }));
    assert!(common::panic_message(refused.unwrap_err()).contains("Fault::with_status(503)"));
    assert!(stub.armed().is_empty(), "nothing was armed: {:?}", stub.armed());
    let headers = fault_headers(&Fault::new(Mode::Status)).unwrap_err().to_string();
    assert!(headers.starts_with("svc-stub: a Mode::Status fault needs its status: "), "{headers}");
}

#[test]
fn a_mode_read_from_text_lists_the_modes_when_unknown() {
    assert_eq!("slow_body".parse::<Mode>(), Ok(Mode::SlowBody));
    let unknown = "500s".parse::<Mode>().unwrap_err().to_string();
    assert_eq!(
        unknown,
        "svc-stub: unknown fault mode \"500s\"; the fault modes are delay, 401, 429, 500, invalid_json, truncated, \
         quota_limited, status, reset, empty_response, slow_body, hang"
    );
    assert!("evaluate.list".parse::<Route>().is_err());
    assert_eq!("projects".parse::<Route>(), Ok(Route::Projects));
}

#[test]
fn fault_headers_carry_the_parameters() {
    let fault = Fault::with_status(503).retry_after(2).delay(Duration::from_millis(250));
    assert_eq!(
        fault_headers(&fault).unwrap(),
        [
            ("X-Svc-Test-Fault", "status".to_owned()),
            ("X-Svc-Test-Delay-Ms", "250".to_owned()),
            ("X-Svc-Test-Status", "503".to_owned()),
            ("X-Svc-Test-Retry-After", "2".to_owned()),
        ]
    );
}

/// What headers cannot carry is refused, by name, never dropped in silence.
#[test]
fn fault_headers_refuse_what_headers_cannot_carry() {
    let refused = |fault: Fault| fault_headers(&fault).unwrap_err().to_string();
    assert_eq!(
        refused(Fault::sequence([Step::pass()])),
        "svc-stub: a sequence cannot be sent as headers: arm it (stub.arm(fault))"
    );
    assert_eq!(
        refused(Fault::new(Mode::Http500).body("down").times(1).apply_to(Selector::Evaluate)),
        "svc-stub: fault headers carry a mode, delay, status and Retry-After, not a body, times, apply_to: arm the \
         fault instead (stub.arm(fault))"
    );
    assert!(refused(Fault::new(Mode::Http500).probability(0.5, 7)).contains("not probability:"));
    let error = fault_headers(&Fault::new(Mode::Http500).times(2)).unwrap_err();
    assert!(matches!(error, Error::Invalid { source: None, .. }), "{error:?}");
    assert_eq!(fault_headers(&Fault::new(Mode::Http500)).unwrap(), [("X-Svc-Test-Fault", "500".to_owned())]);
}

/// The read side is typed with the write side's enums, and a word a newer stub says (a mode,
/// a route, a selector) is kept as `Word::Other`, not a failure to read.
#[test]
fn the_journal_reads_as_the_enums_and_keeps_words_it_does_not_know() {
    let stub = svc_stub::start();
    let guard = stub.arm(Fault::new(Mode::Http500).apply_to(Selector::Runtime).times(1));
    assert_eq!(guard.armed().apply_to, [Selector::Capture, Selector::Evaluate, Selector::Register].map(Word::from));
    assert_eq!(evaluate(stub.url(), &[], ANSWER_TIMEOUT).status, Some(500));
    let sent = stub.wait_for_requests(1, Route::Evaluate, WAIT);
    assert_eq!(sent[0].route, Some(Route::Evaluate.into()));
    let fault = sent[0].fault.clone().expect("the fault that fired");
    assert!(fault.mode.as_ref().is_some_and(|mode| *mode == Mode::Http500), "{fault:?}");
    assert_eq!(fault.source, FaultSource::Armed);
    assert_eq!("evaluate.batch".parse::<Route>().ok(), None);
    assert_eq!("teapot".parse::<Mode>().ok(), None);
    let newer = "teapot".parse::<Mode>().map_or_else(|_| Word::Other("teapot".to_owned()), Word::Known);
    assert_eq!((newer.as_str(), newer.known()), ("teapot", None));
}
