"""How a recorded request reads in `/_test/requests`: when it arrived, what it asked, what it
got, and the headers it sent, with every secret hidden but for its family."""

from __future__ import annotations

import urllib.parse
from typing import Any

from stub.keys import REDACTED, redacted
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
        record
    )
    path, _, query = raw_path.partition("?")
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
    }


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
    return value
