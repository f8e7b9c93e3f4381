//! svc-stub, installed from a registry by `cargo add --dev svc-stub`: an armed 500 on evaluate
//! is what a plain HTTP call sees, and the stub recorded that call.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use svc_stub::{Fault, Mode, Route, Selector};

/// The status line's code of one `POST {url}/v1/flags/evaluate`, over a plain socket.
fn evaluate(url: &str) -> String {
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (host, path) = rest.split_once('/').map_or((rest, String::new()), |(h, p)| (h, format!("/{p}")));
    let body = r#"{"targetingKey": "user-1", "flagKeys": ["checkout-v2"]}"#;
    let mut stream = TcpStream::connect(host).expect("the stub answers");
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        stream,
        "POST {path}/v1/flags/evaluate HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer project-api-key_rust\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer.split_whitespace().nth(1).unwrap_or_default().to_owned()
}

#[test]
fn an_armed_500_on_evaluate_is_what_the_client_sees() {
    let stub = svc_stub::start();
    {
        let _outage = stub.arm(Fault::new(Mode::Http500).apply_to(Selector::Evaluate));
        assert_eq!(evaluate(stub.url()), "500");
    }
    let sent = stub.wait_for_requests(1, Route::Evaluate, Duration::from_secs(5));
    assert_eq!(sent.len(), 1);
}
