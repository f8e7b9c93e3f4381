"""A recorded request as a command line that sends it again: pasted into bash, it reaches the
same namespace with the same method, target, headers and body (keys as their placeholders)."""

from __future__ import annotations

import shlex
import urllib.parse

from stub.control.redaction import headers, path
from stub.state import RawHeaders, RequestRecord
from stub.wire import redacted_query

_TRAVEL_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "content-encoding",
        "connection",
        "keep-alive",
        "expect",
        "accept-encoding",
        "te",
        "upgrade",
    }
)
"""How the request travelled, not what it is: curl sets its own (the body is given decoded,
so no Content-Encoding)."""


def curl_line(record: RequestRecord, base_url: str, body: bytes | None) -> str:
    """The request to the stub at `base_url`, `body` (already redacted) fed on stdin by bash's
    own printf: no argument limit, no `@file` surprise, NUL bytes kept. `--globoff`: a
    redacted key's brackets are not a curl URL pattern."""
    method, raw_headers = record.method, record.headers
    how = ["--head"] if method == "HEAD" else ["-X", method]  # -X HEAD waits for a body
    words = ["curl", "-sS", "--globoff", *how, _target(record.target, raw_headers, base_url)]
    sent = headers(raw_headers)
    for name, value in sent.items():
        if name not in _TRAVEL_HEADERS:
            # `name;` is how curl sends a header with no value (`name:` would drop it)
            words += ["-H", f"{name}: {value}" if value.strip() else f"{name};"]
    if not body:
        return shlex.join(words)
    if "content-type" not in sent:  # else curl says it is a form
        words += ["-H", "Content-Type:"]
    return f"{_printf(body)} | {shlex.join([*words, '--data-binary', '@-'])}"


def _target(raw_path: str, raw_headers: RawHeaders, base_url: str) -> str:
    """The stub's address and the request's path and query (keys redacted), whatever form
    the request line had (an absolute URL, too)."""
    parts = urllib.parse.urlsplit(raw_path)
    target = base_url.rstrip("/") + (path(raw_headers, parts.path) or "/")
    if parts.query:
        target += "?" + urllib.parse.urlencode(redacted_query(parts.query), doseq=True, safe="[]")
    return target


def _printf(body: bytes) -> str:
    """`printf %s 'text'`, or for bytes that are not UTF-8 text (or hold a NUL, which no
    shell word can), every byte as `\\xNN`."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and "\0" not in text:
        return f"printf %s {shlex.quote(text)}"
    return "printf '" + "".join(f"\\x{byte:02x}" for byte in body) + "'"
