"""How a recorded request reads in `/_test/requests`: when it arrived, what it asked, what it
got, and the headers it sent, with every secret hidden but for its family; and, in full, the
body it sent and the answer it got, and a curl line that sends it again."""

from __future__ import annotations

import base64
import re
import shlex
import urllib.parse
from collections.abc import Mapping
from typing import Any

import orjson

from stub.keys import KEY_PREFIXES, REDACTED, redacted
from stub.state import RawHeaders, RequestRecord
from stub.wire import redacted_query

_SCHEMED = frozenset({"authorization", "proxy-authorization"})
"""`Bearer <key>`: the scheme stays, the key is reduced to its family."""
_KEYED = frozenset({"x-api-key", "api-key", "x-auth-token"})
_COOKIES = frozenset({"cookie"})


def entry(record: RequestRecord, origin: float) -> dict[str, Any]:
    """One request of the journal; `origin` is when the stub started (`time.perf_counter()`),
    so `arrivedMs` is on one monotonic clock for every request of the process."""
    seq, method, raw_path, route, status, fired, arrived, duration_s, warning, raw, gone, up = (
        record[:12]
    )
    path, _, query = raw_path.partition("?")
    body, answer_body = record[12], record[14]
    return {
        "seq": seq,
        "method": method,
        "path": urllib.parse.unquote(path),
        "query": redacted_query(query),
        "route": route,
        "status": status,
        "clientGone": gone,
        "fault": fired.to_json() if fired else None,
        "retryAfter": fired.spec.retry_after() if fired and fired.spec else None,
        "arrivedMs": round((arrived - origin) * 1000, 3),
        "durationMs": round(duration_s * 1000, 3),
        "warning": warning,
        "headers": headers(raw),
        "upstream": None
        if up is None
        else {"status": up.status, "durationMs": round(up.duration_s * 1000, 3)},
        "bodyBytes": None if body is None else len(body),
        "answerBytes": None if answer_body is None else len(answer_body),
        "unmatched": _error_message(answer_body) if route is None else None,
    }


def in_full(record: RequestRecord, origin: float, base_url: str) -> dict[str, Any]:
    """The entry with the body as sent and the answer as given, never cut (keys in a body
    hidden as in the headers), and `curl`: a command line that sends the request again to
    the stub at `base_url`, with a placeholder wherever a key was."""
    shown = entry(record, origin)
    body, answer_headers, answer_body = record[12], record[13], record[14]
    shown["body"] = _text(_redacted_body(body))
    shown["answer"] = (
        None
        if answer_headers is None
        else {
            "status": record[4],
            "headers": _answer_headers(answer_headers),
            "body": _text(answer_body),
        }
    )
    shown["curl"] = curl(record, base_url)
    return shown


def curl(record: RequestRecord, base_url: str) -> str:
    """One line for bash; only the headers that say what the request is (not how it
    travelled: the body is given decoded, so no Content-Encoding). `--globoff`: a redacted
    key's brackets are not a curl URL pattern."""
    method, raw_path, raw_headers, body = record[1], record[2], record[9], record[12]
    path, _, query = raw_path.partition("?")
    target = base_url.rstrip("/") + path
    if query:
        target += "?" + urllib.parse.urlencode(redacted_query(query), doseq=True, safe="[]")
    how = ["--head"] if method == "HEAD" else ["-X", method]  # -X HEAD waits for a body
    words = ["curl", "-sS", "--globoff", *how, target]
    for name, value in headers(raw_headers).items():
        if name not in _TRAVEL_HEADERS:
            words += ["-H", f"{name}: {value}"]
    line = shlex.join(words)
    shown = _redacted_body(body)
    if shown:
        line += " --data-binary " + _shell_word(shown)
    return line


def _shell_word(data: bytes) -> str:
    """Bytes as one bash word: quoted text, or for bytes that are not UTF-8, `$'\\xff...'`."""
    try:
        return shlex.quote(data.decode("utf-8"))
    except UnicodeDecodeError:
        return "$'" + "".join(f"\\x{byte:02x}" for byte in data) + "'"


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

_BODY_MEMBER = re.compile(rb'("(?:api_key|token)"\s*:\s*")((?:[^"\\]|\\.)*)"')
"""Where posthog puts the project key in a JSON body (`api_key`, or `token`; not `key`: a
control point's name), at any depth, found in the text so that a body that does not parse
(the 400 a user opens the journal to understand) is redacted too."""
_FORM_FIELD = re.compile(rb"((?:^|&)(?:api_key|token)=)([^&]*)")
_PREFIXED_KEY = re.compile(
    b"(" + b"|".join(re.escape(p.encode()) for p in KEY_PREFIXES) + rb")[A-Za-z0-9._~+/=-]+"
)
"""A key of a known family, wherever it is in a body."""
_PREFIXED_KEY_TEXT = re.compile(_PREFIXED_KEY.pattern.decode())


def _redacted_body(body: bytes | None) -> bytes | None:
    """A body as sent, byte for byte, but for its keys, each reduced to its family: posthog's
    `api_key` or `token` member (or form field), and any key of a known family anywhere."""
    if not body:
        return body
    shown = _BODY_MEMBER.sub(lambda m: m[1] + _redacted_bytes(m[2]) + b'"', body)
    shown = _FORM_FIELD.sub(lambda m: m[1] + _redacted_bytes(m[2]), shown)
    return _PREFIXED_KEY.sub(lambda m: m[1] + REDACTED.encode(), shown)


def _redacted_bytes(value: bytes) -> bytes:
    return redacted(value.decode("utf-8", errors="replace")).encode()


def _text(body: bytes | None) -> dict[str, Any] | None:
    """A body as text when it is UTF-8 (as every JSON body is), else as base64."""
    if body is None:
        return None
    try:
        return {"text": body.decode("utf-8"), "bytes": len(body)}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(body).decode("ascii"), "bytes": len(body)}


def _answer_headers(raw: Mapping[str, str]) -> dict[str, str]:
    shown: dict[str, str] = {}
    for name, value in raw.items():
        name = str(name)  # aiohttp's names are `istr`s, which orjson does not take as keys
        shown[name] = value if name not in shown else f"{shown[name]}, {value}"
    return shown


def _error_message(body: bytes | None) -> str | None:
    """What a 404 or 405 for an unknown path said (the route it most resembles, if any)."""
    try:
        document = orjson.loads(body or b"")
    except orjson.JSONDecodeError:
        return None
    if not isinstance(document, dict):
        return None
    error = document.get("error")
    message = error.get("message") if isinstance(error, dict) else document.get("message")
    return message if isinstance(message, str) else None


def headers(raw: RawHeaders) -> dict[str, str]:
    """By lower-case name (a repeated one joined as HTTP joins it), secrets redacted."""
    shown: dict[str, str] = {}
    for raw_name, raw_value in raw:
        name = raw_name.decode("latin-1").lower()
        value = _redacted(name, raw_value.decode("utf-8", errors="replace"))
        previous = shown.get(name)
        separator = "; " if name in _COOKIES else ", "
        shown[name] = value if previous is None else previous + separator + value
    return shown


def _redacted(name: str, value: str) -> str:
    if name in _SCHEMED:
        scheme, space, credentials = value.strip().partition(" ")
        return f"{scheme} {redacted(credentials.strip())}" if space else redacted(scheme)
    if name in _KEYED:
        return redacted(value.strip())
    if name in _COOKIES:
        return "; ".join(
            f"{part.partition('=')[0].strip()}={REDACTED}" for part in value.split(";") if part
        )
    return _PREFIXED_KEY_TEXT.sub(lambda m: m[1] + REDACTED, value)  # a key in any header
