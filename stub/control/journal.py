"""How a recorded request reads in `/_test/requests`: when it arrived, what it asked, what it
got, and the headers it sent, with every secret hidden but for its family (and every secret
the stub knows hidden wherever it is); and, in full, the body it sent and the answer it got,
and a curl line that sends it again."""

from __future__ import annotations

import asyncio
import base64
import urllib.parse
from collections.abc import Callable, Iterable
from typing import Any

import orjson

from stub.control import redaction
from stub.control.curl import curl_line
from stub.control.redaction import KnownSecrets, headers, redacted_body
from stub.state import RawHeaders, RequestRecord, recorded_bytes
from stub.wire import is_count, redacted_query


def entry(record: RequestRecord, origin: float, known: KnownSecrets) -> dict[str, Any]:
    """One request of the journal; `origin` is when the stub started (`time.perf_counter()`),
    so `arrivedMs` is on one monotonic clock for every request of the process; `known`: the
    secrets the stub knows (`redaction.known_secrets`)."""
    return _summary(record, known.in_record(record, bodies=False), origin, known)


def _summary(
    record: RequestRecord, sent: RequestRecord, origin: float, known: KnownSecrets
) -> dict[str, Any]:
    """`record` as `entry` shows it, read from `sent` (the record without the known secrets)
    but for the sizes of what was sent and answered."""
    path, _, query = sent.target.partition("?")
    fired, up, body, answer_body = record.fault, record.upstreamed, record.body, record.answer_body
    unmatched = (
        None if record.route is not None else _unmatched(sent.headers, body, answer_body, known)
    )
    return {
        "seq": record.seq,
        "method": record.method,
        "path": redaction.path(sent.headers, urllib.parse.unquote(path)),
        "query": redacted_query(query),
        "route": record.route,
        "status": record.status,
        "clientGone": record.client_gone,
        "fault": fired.to_json() if fired else None,
        "retryAfter": retry_after_of(record),
        "arrivedMs": round((record.arrived - origin) * 1000, 3),
        "durationMs": round(record.duration_s * 1000, 3),
        "warning": record.warning,
        "headers": headers(sent.headers),
        "upstream": None
        if up is None
        else {"status": up.status, "durationMs": round(up.duration_s * 1000, 3)},
        "bodyBytes": None if body is None else len(body),
        "answerBytes": None if answer_body is None else len(answer_body),
        "unmatched": unmatched,
    }


def retry_after_of(record: RequestRecord) -> int | None:
    """The `Retry-After` its answer carried, in seconds: a fault's, the rate limit's, or in
    proxy mode the service's (None: it carried none, or not in seconds)."""
    fired = record.fault
    if fired is not None and fired.spec is not None:
        return fired.spec.retry_after()
    said = (record.answer_headers or {}).get("Retry-After")
    return int(said) if said is not None and is_count(said.strip()) else None


def in_full(
    record: RequestRecord, origin: float, base_url: str, known: KnownSecrets
) -> dict[str, Any]:
    """The entry with the body as sent and the answer as given, never cut (keys in a body
    hidden as in the headers), and `curl`: a command line that sends the request again to
    the stub at `base_url`, with a placeholder wherever a key was."""
    sent = known.in_record(record, bodies=True)  # the curl line too is made from it
    shown = _summary(record, sent, origin, known)
    body = redacted_body(sent.body)
    shown["body"] = _text(body)
    if sent.answer_headers is None:
        shown["answer"] = None
    else:
        said, answer_body = redaction.answer(
            sent.headers, sent.body, sent.answer_headers, sent.answer_body
        )
        shown["answer"] = {"status": record.status, "headers": said, "body": _text(answer_body)}
    shown["curl"] = curl_line(sent, base_url, body)
    return shown


RENDERED_AT_ONCE = 256 * 1024
"""Bytes of bodies rendered before other requests get a turn: a full journal in full is
seconds of work, and /health must not wait for it."""


async def rendered_in_turns(
    records: Iterable[RequestRecord], render: Callable[[RequestRecord], dict[str, Any]]
) -> list[dict[str, Any]]:
    """Each record rendered, other requests served between every RENDERED_AT_ONCE bytes."""
    shown, weighed = [], 0
    for record in records:
        shown.append(render(record))
        weighed += recorded_bytes(record)
        if weighed > RENDERED_AT_ONCE:
            weighed = 0
            await asyncio.sleep(0)
    return shown


def _text(body: bytes | None) -> dict[str, Any] | None:
    """A body as text when it is UTF-8 (as every JSON body is), else as base64."""
    if body is None:
        return None
    try:
        return {"text": body.decode("utf-8"), "bytes": len(body)}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(body).decode("ascii"), "bytes": len(body)}


def _unmatched(
    raw: RawHeaders, body: bytes | None, answer_body: bytes | None, known: KnownSecrets
) -> str | None:
    """What a 404 or 405 for an unknown path said (the route it most resembles, if any; in
    proxy mode the upstream's words, keys redacted: the secrets it knows, read after JSON
    decoded them, however they were escaped)."""
    if not answer_body:
        return None
    message = _error_message(redaction.answer(raw, body, {}, answer_body)[1])
    return None if message is None else known.in_text(message)


def _error_message(body: bytes | None) -> str | None:
    try:
        document = orjson.loads(body or b"")
    except orjson.JSONDecodeError:
        return None
    if not isinstance(document, dict):
        return None
    error = document.get("error")
    message = error.get("message") if isinstance(error, dict) else document.get("message")
    return message if isinstance(message, str) else None
