//! Every way of not getting a stub is one line that says what to do, as a test sees it: no
//! `svc-stub` command, a stub that does not start (the stub's own line), a URL where nothing or
//! something else answers, a stub too old.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use svc_stub::Client;

/// The clone this crate is in, as the messages name it.
fn clone() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap().display().to_string()
}

/// The run's address where nothing listens.
fn offline_url() -> String {
    svc_stub::start().offline_url()
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

const CHILD: &str = "RS_TEST_ERRORS_CHILD";

/// Run by `start_panics_with`, in a process of its own (the run's stub is one per process).
#[test]
fn child_starts_a_stub() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let _stub = svc_stub::start();
}

/// What `start()` panics with, in this binary run again with these variables.
fn start_panics_with(variables: &[(&str, &str)]) -> String {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["--exact", "child_starts_a_stub", "--nocapture", "--test-threads=1"]);
    for variable in ["SVC_STUB_URL", "SVC_STUB_BIN", "SVC_STUB_FIXTURES", "SVC_STUB_CONTROL_TOKEN", "RUST_BACKTRACE"] {
        command.env_remove(variable);
    }
    command.env(CHILD, "1").envs(variables.iter().copied());
    let output = command.output().unwrap();
    assert!(!output.status.success(), "the child's test passed");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    // thread 'child_starts_a_stub' (123) panicked at tests/errors.rs:L:C:\nLINE\nnote: ...
    let after = stderr.split_once("panicked at tests/errors.rs:").unwrap_or_else(|| panic!("{stderr}")).1;
    let mut lines = after.lines();
    lines.next();
    let line = lines.next().unwrap_or_default().to_owned();
    assert!(lines.next().unwrap_or_default().starts_with("note: "), "more than one line:\n{stderr}");
    line
}

#[test]
fn no_svc_stub_command() {
    let install = format!(
        "install it from its clone (python3 -m venv .venv && .venv/bin/pip install {}) and set \
         SVC_STUB_BIN=$PWD/.venv/bin/svc-stub, or SVC_STUB_URL to a running stub",
        clone()
    );
    assert_eq!(
        start_panics_with(&[("PATH", "/nonexistent")]),
        format!("svc-stub: no svc-stub command (SVC_STUB_BIN is not set and none is on PATH); {install}")
    );
    assert_eq!(
        start_panics_with(&[("SVC_STUB_BIN", "/nonexistent/svc-stub")]),
        format!("svc-stub: no svc-stub command (SVC_STUB_BIN=/nonexistent/svc-stub: no such file); {install}")
    );
}

#[test]
fn a_stub_that_does_not_start_says_why_in_its_own_words() {
    assert_eq!(
        start_panics_with(&[("SVC_STUB_FIXTURES", "/nonexistent/flags.yaml")]),
        "svc-stub: error: shared: the stub did not start: /nonexistent/flags.yaml: no such file"
    );
}

#[cfg(unix)]
#[test]
fn the_command_is_svc_stub_shared_for_the_cargo_run_and_its_line_is_shown() {
    use std::os::unix::fs::PermissionsExt;
    // a stand-in for svc-stub: it says how it was run, as svc-stub says why it refuses
    let bin = std::env::temp_dir().join(format!("svc-stub-rs-fake-{}", std::process::id()));
    std::fs::write(&bin, "#!/bin/sh\necho \"svc-stub: error: ran with: $*\" >&2\nexit 2\n").unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let line = start_panics_with(&[("SVC_STUB_BIN", bin.to_str().unwrap())]);
    let _ = std::fs::remove_file(&bin);
    assert_eq!(line, format!("svc-stub: error: ran with: shared --owner-named cargo --require {}", svc_stub::VERSION));
}

#[test]
fn a_url_where_nothing_answers() {
    let url = offline_url();
    assert_eq!(
        start_panics_with(&[("SVC_STUB_URL", &url)]),
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
    assert_eq!(
        start_panics_with(&[("SVC_STUB_URL", &url)]),
        format!(
            "svc-stub: SVC_STUB_URL={url} does not answer as svc-stub (404 from /health: not found); start one there \
             (svc-stub --port PORT) or unset SVC_STUB_URL to have one started"
        )
    );
    let url = fake_server(|_| (200, "<html>hello</html>"));
    let line = start_panics_with(&[("SVC_STUB_URL", &url)]);
    assert!(line.contains("(/health answers something other than svc-stub's JSON)"), "{line}");
}

#[test]
fn a_stub_older_than_this_crate() {
    let url = fake_server(|path| match path {
        "/health" => (200, r#"{"ok": true}"#),
        _ => (200, r#"{"info": {"version": "0.0.9"}}"#),
    });
    assert_eq!(
        start_panics_with(&[("SVC_STUB_URL", &url)]),
        format!(
            "svc-stub: SVC_STUB_URL={url} is svc-stub 0.0.9, older than this crate (0.1.0); upgrade it \
             (pip install --upgrade {})",
            clone()
        )
    );
}

#[test]
fn a_url_that_cannot_be() {
    let error = Client::new("https://stub.example:443").unwrap_err();
    assert_eq!(
        error.to_string(),
        "svc-stub: https://stub.example:443 is not an http:// URL (svc-stub serves plain HTTP)"
    );
}
