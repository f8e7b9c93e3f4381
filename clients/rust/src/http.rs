//! The little HTTP/1.1 the control plane needs, over `std::net::TcpStream`: one request per
//! connection (`Connection: close`), plain `http://` (the stub listens on loopback, or on a CI
//! service's name), a body read by `Content-Length`, chunks, or to the end. It keeps the crate
//! free of an HTTP client that a user's own dependency graph would have to agree with.

use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Where a URL points: the host and port to connect to, and what every path is put after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    host: String,
    port: u16,
    /// `host:port` as the URL spells it: the `Host` header.
    authority: String,
    /// The URL's path, without its trailing `/` ("" for a stub at the root).
    prefix: String,
}

impl Target {
    /// Parses `http://host[:port][/prefix]`; the error says what is wrong with the URL.
    pub(crate) fn parse(url: &str) -> Result<Target, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("{url} is not an http:// URL (svc-stub serves plain HTTP)"))?;
        let (authority, prefix) = match rest.find('/') {
            Some(slash) => (&rest[..slash], rest[slash..].trim_end_matches('/')),
            None => (rest, ""),
        };
        let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
            // an IPv6 literal: [::1]:3901
            let (host, tail) = bracketed.split_once(']').ok_or_else(|| format!("{url}: an unclosed [ in its host"))?;
            (host, tail.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(format!("{url} names no host"));
        }
        let port = match port {
            Some(port) => port.parse().map_err(|_| format!("{url}: {port:?} is not a port"))?,
            None => 80,
        };
        Ok(Target { host: host.to_owned(), port, authority: authority.to_owned(), prefix: prefix.to_owned() })
    }
}

/// One request to send.
pub(crate) struct Outgoing<'a> {
    pub method: &'a str,
    /// The path and query after the target's prefix: `/_test/events?waitMs=10`.
    pub path: &'a str,
    pub headers: &'a [(&'a str, &'a str)],
    pub body: Option<&'a [u8]>,
    /// How long the whole exchange may take.
    pub timeout: Duration,
}

/// An answer: its status, headers (names in lower case) and body.
#[derive(Debug)]
pub(crate) struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    /// The first header of that (lower-case) name.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// The most of an answer read: the inspector page of a busy namespace is a few MB.
const MAX_BODY: u64 = 64 << 20;

/// Sends one request and reads its answer; an error's message is the reason, as a test reads it.
pub(crate) fn send(target: &Target, request: &Outgoing<'_>) -> io::Result<Answer> {
    let deadline = Instant::now() + request.timeout;
    let stream = connect(target, request.timeout)?;
    stream.set_nodelay(true)?;
    stream.set_write_timeout(Some(request.timeout))?;
    stream.set_read_timeout(Some(request.timeout))?;

    let mut head = format!(
        "{} {}{} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nAccept: application/json\r\nUser-Agent: svc-stub-rust/{}\r\n",
        request.method,
        target.prefix,
        request.path,
        target.authority,
        crate::VERSION
    );
    for (name, value) in request.headers {
        let _ = write!(head, "{name}: {value}\r\n");
    }
    let body = request.body.unwrap_or_default();
    if request.body.is_some() || matches!(request.method, "POST" | "PUT" | "PATCH") {
        let _ = write!(head, "Content-Length: {}\r\n", body.len());
    }
    head.push_str("\r\n");
    let mut writer = &stream;
    writer.write_all(head.as_bytes())?;
    writer.write_all(body)?;
    writer.flush()?;

    let mut reader = BufReader::new(Deadlined { stream: &stream, deadline });
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .filter(|_| line.starts_with("HTTP/1."))
        .ok_or_else(|| invalid(format!("not an HTTP answer: {:?}", line.trim_end())))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the answer ended in its headers"));
        }
        let text = line.trim_end();
        if text.is_empty() {
            break;
        }
        if let Some((name, value)) = text.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let mut answer = Answer { status, headers, body: Vec::new() };
    if request.method == "HEAD" || status == 204 || status == 304 {
        return Ok(answer);
    }
    if answer.header("transfer-encoding").is_some_and(|te| te.eq_ignore_ascii_case("chunked")) {
        answer.body = read_chunked(&mut reader)?;
    } else if let Some(length) = answer.header("content-length") {
        let length: u64 = length.parse().map_err(|_| invalid(format!("a Content-Length of {length:?}")))?;
        if length > MAX_BODY {
            return Err(invalid(format!("an answer of {length} bytes")));
        }
        answer.body.reserve(usize::try_from(length).unwrap_or(0));
        reader.by_ref().take(length).read_to_end(&mut answer.body)?;
        if (answer.body.len() as u64) < length {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the answer ended short of its Content-Length"));
        }
    } else {
        reader.by_ref().take(MAX_BODY).read_to_end(&mut answer.body)?;
    }
    Ok(answer)
}

fn connect(target: &Target, timeout: Duration) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{} resolves to no address", target.host));
    for address in (target.host.as_str(), target.port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&address, timeout) {
            Ok(stream) => return Ok(stream),
            Err(error) => last = error,
        }
    }
    Err(last)
}

fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let size = line.trim_end().split(';').next().unwrap_or("");
        let size = u64::from_str_radix(size.trim(), 16).map_err(|_| invalid(format!("a chunk size of {size:?}")))?;
        if size == 0 {
            return Ok(body); // trailers, if any, are not needed: the connection closes
        }
        if body.len() as u64 + size > MAX_BODY {
            return Err(invalid("an answer over 64 MiB".to_owned()));
        }
        let before = body.len();
        reader.take(size).read_to_end(&mut body)?;
        if ((body.len() - before) as u64) < size {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the answer ended in a chunk"));
        }
        line.clear();
        reader.read_line(&mut line)?; // the chunk's CRLF
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// A stream whose reads time out at one deadline for the whole answer, not per read.
struct Deadlined<'a> {
    stream: &'a TcpStream,
    deadline: Instant,
}

impl Read for Deadlined<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "no answer in time"));
        }
        self.stream.set_read_timeout(Some(left))?;
        let mut stream = self.stream;
        stream.read(buffer)
    }
}

/// The reason a test reads for an error of `send`.
pub(crate) fn reason(error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::ConnectionRefused => "connection refused".to_owned(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => "no answer in time".to_owned(),
        io::ErrorKind::ConnectionReset => "connection reset".to_owned(),
        _ => error.to_string(),
    }
}

/// `value` percent-encoded for a query string or a path segment (all but RFC 3986's unreserved).
pub(crate) fn encode(value: &str) -> String {
    let mut encoded = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            encoded.push(byte as char);
        } else {
            let _ = write!(encoded, "%{byte:02X}");
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_urls_a_stub_has() {
        let target = Target::parse("http://127.0.0.1:3901").unwrap();
        assert_eq!((target.host.as_str(), target.port, target.prefix.as_str()), ("127.0.0.1", 3901, ""));
        let target = Target::parse("http://[::1]:4000/ns/a/").unwrap();
        assert_eq!((target.host.as_str(), target.port, target.prefix.as_str()), ("::1", 4000, "/ns/a"));
        assert_eq!(target.authority, "[::1]:4000");
        assert_eq!(Target::parse("http://svc-stub").unwrap().port, 80);
        assert!(Target::parse("https://x:1").unwrap_err().contains("not an http:// URL"));
        assert!(Target::parse("http://x:port").unwrap_err().contains("is not a port"));
    }

    #[test]
    fn encodes_what_a_query_cannot_hold() {
        assert_eq!(encode("projects.list"), "projects.list");
        assert_eq!(encode("a b&c/é"), "a%20b%26c%2F%C3%A9");
    }
}
