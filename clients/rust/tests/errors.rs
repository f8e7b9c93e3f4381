//! Every way of not getting a stub is one line that says what to do: no binary, a stub that
//! does not start, a URL where nothing or something else answers, a stub too old.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::Command;

use svc_stub::{check_stub, Client, Error, StartOptions, StubProcess};

/// A URL where nothing listens.
fn dead_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

/// A server that answers each path as `answer` says (status, body), for a few connections.
fn fake_server(answer: fn(&str) -> (u16, &'static str)) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(8) {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let path = line.split(' ').nth(1).unwrap_or("/").to_owned();
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap() == 0 || header == "\r\n" {
                    break;
                }
            }
            let (status, body) = answer(&path);
            let _ = write!(stream, "HTTP/1.1 {status} X\r\nContent-Length: {}\r\n\r\n{body}", body.len());
        }
    });
    url
}

#[test]
fn no_binary_to_run() {
    let error = StubProcess::start(StartOptions::default().bin("/nonexistent/svc-stub")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "svc-stub: no '/nonexistent/svc-stub' to run; install it (pip install svc-stub) or set SVC_STUB_BIN to its path"
    );
    assert!(matches!(error, Error::Start(_)));
}

#[test]
fn a_stub_that_does_not_start() {
    let options = StartOptions::default().args(["--fixtures", "/nonexistent/flags.yaml"]);
    let error = StubProcess::start(options).unwrap_err();
    assert_eq!(
        error.to_string(),
        "svc-stub did not start (exit code 2): svc-stub: error: /nonexistent/flags.yaml: no such file"
    );
}

#[test]
fn a_stub_started_by_hand_answers_and_stops() {
    let process = StubProcess::start(StartOptions::default()).unwrap();
    let client = Client::new(process.url()).unwrap();
    client.health().unwrap();
    assert_eq!(client.version().unwrap(), svc_stub::VERSION);
    assert!(process.log_path().is_file());
    let url = process.url().to_owned();
    process.stop();
    assert!(Client::new(&url).unwrap().health().is_err());
}

#[test]
fn a_url_where_nothing_answers() {
    let url = dead_url();
    let error = check_stub(&url, &format!("SVC_STUB_URL={url}")).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "svc-stub: SVC_STUB_URL={url} does not answer as svc-stub (connection refused); start one there \
             (svc-stub --port PORT) or unset SVC_STUB_URL to have one started"
        )
    );
    let port = url.rsplit(':').next().unwrap();
    let error = Client::new(&url).unwrap().recorded().unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("svc-stub at {url} does not answer (connection refused); start one there (svc-stub --port {port}) or correct the URL")
    );
}

#[test]
fn a_url_where_something_else_answers() {
    let url = fake_server(|_| (404, "not found"));
    let error = check_stub(&url, &format!("SVC_STUB_URL={url}")).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "svc-stub: SVC_STUB_URL={url} does not answer as svc-stub (404 from /health: not found); start one there \
             (svc-stub --port PORT) or unset SVC_STUB_URL to have one started"
        )
    );
    let url = fake_server(|_| (200, "<html>hello</html>"));
    let error = check_stub(&url, &format!("SVC_STUB_URL={url}")).unwrap_err();
    assert!(error.to_string().contains("(/health answers something other than svc-stub's JSON)"), "{error}");
}

#[test]
fn a_stub_older_than_this_crate() {
    let url = fake_server(|path| match path {
        "/health" => (200, r#"{"ok": true}"#),
        _ => (200, r#"{"info": {"version": "0.0.9"}}"#),
    });
    let error = check_stub(&url, &format!("SVC_STUB_URL={url}")).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "svc-stub: SVC_STUB_URL={url} is svc-stub 0.0.9, older than this crate (0.1.0); upgrade it (pip install -U svc-stub)"
        )
    );
    assert!(matches!(error, Error::Check(_)));
}

#[test]
fn urls_and_names_that_cannot_be() {
    let error = Client::new("https://stub.example:443").unwrap_err();
    assert_eq!(
        error.to_string(),
        "svc-stub: https://stub.example:443 is not an http:// URL (svc-stub serves plain HTTP)"
    );
    let error = Client::new("http://127.0.0.1:1").unwrap().in_namespace("a b").unwrap_err();
    assert!(error.to_string().starts_with("svc-stub: namespace \"a b\" is not a namespace name"), "{error}");
}

// -- the same, as a test sees them: its `namespace()` panics with the line ------------------

const CHILD: &str = "SVC_STUB_RS_ERRORS_CHILD";

/// Run by `namespace_panics_with`, in a process of its own (the run's stub is one per process).
#[test]
fn child_asks_for_a_namespace() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let _ns = svc_stub::namespace("child");
}

/// What `namespace()` panics with, in this binary run again with these variables.
fn namespace_panics_with(variables: &[(&str, &str)]) -> String {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["--exact", "child_asks_for_a_namespace", "--nocapture", "--test-threads=1"]);
    for variable in ["SVC_STUB_URL", "SVC_STUB_BIN", "SVC_STUB_FIXTURES", "SVC_STUB_CONTROL_TOKEN", "RUST_BACKTRACE"] {
        command.env_remove(variable);
    }
    command.env(CHILD, "1").envs(variables.iter().copied());
    let output = command.output().unwrap();
    assert!(!output.status.success(), "the child's test passed");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    // thread 'child_asks_for_a_namespace' (123) panicked at tests/errors.rs:L:C:\nLINE\nnote: ...
    let after = stderr.split_once("panicked at tests/errors.rs:").unwrap_or_else(|| panic!("{stderr}")).1;
    let mut lines = after.lines();
    lines.next();
    let line = lines.next().unwrap_or_default().to_owned();
    assert!(lines.next().unwrap_or_default().starts_with("note: "), "more than one line:\n{stderr}");
    line
}

#[test]
fn a_test_is_told_in_one_line() {
    let url = dead_url();
    assert_eq!(
        namespace_panics_with(&[("SVC_STUB_URL", &url)]),
        format!(
            "svc-stub: SVC_STUB_URL={url} does not answer as svc-stub (connection refused); start one there \
             (svc-stub --port PORT) or unset SVC_STUB_URL to have one started"
        )
    );
    assert_eq!(
        namespace_panics_with(&[("SVC_STUB_BIN", "/nonexistent/svc-stub")]),
        "svc-stub: no '/nonexistent/svc-stub' to run; install it (pip install svc-stub) or set SVC_STUB_BIN to its path"
    );
    assert_eq!(
        namespace_panics_with(&[("SVC_STUB_FIXTURES", "/nonexistent/flags.yaml")]),
        "svc-stub did not start (exit code 2): svc-stub: error: /nonexistent/flags.yaml: no such file"
    );
}
