"""Keys out of what the journal shows: a request's headers, and its body byte for byte but for
the keys in it, each reduced to its family (`phc_[redacted]`), so a reader can tell which key
went where without ever seeing one."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson

from stub.keys import KEY_PREFIXES, REDACTED, redacted
from stub.state import RawHeaders
from stub.wire import SECRET_QUERY_KEYS

_SCHEMED = frozenset({"authorization", "proxy-authorization"})
"""`Bearer <key>`: the scheme stays, the key is reduced to its family."""
_KEYED = frozenset({"x-api-key", "api-key", "x-auth-token"})
_COOKIES = frozenset({"cookie"})

_BODY_KEYS = frozenset({"api_key", "token"})
"""Where posthog puts the project key in a body (not `key`: a control point's name)."""

_PREFIXED = (
    r"(?<![A-Za-z0-9_])("  # a word's own `phs_` (`graphs_count`) is no key
    + "|".join(re.escape(prefix) for prefix in KEY_PREFIXES)
    + r")[A-Za-z0-9._~+/=-]+"
)
_PREFIXED_KEY = re.compile(_PREFIXED.encode())
_PREFIXED_KEY_TEXT = re.compile(_PREFIXED)
"""A key of a known family, wherever it is."""

_QUERY_KEY_TEXT = re.compile(
    r"([?&](?:" + "|".join(sorted(SECRET_QUERY_KEYS)) + r")=)([^&#\s]*)", re.IGNORECASE
)
"""A key in a URL's query, as a `Referer` carries one."""

_MEMBER = re.compile(rb'("(?:api_key|token)"\s*:\s*")((?:[^"\\]|\\.)*)("|\Z)', re.S)
"""posthog's key member in a body that is not JSON (the 400 a user opens the journal to
understand), its value possibly cut short."""
_FORM_FIELD = re.compile(rb"((?:^|&)(?:api_key|token)=)([^&]*)")


def headers(raw: RawHeaders) -> dict[str, str]:
    """By lower-case name (a repeated one joined as HTTP joins it), secrets redacted."""
    shown: dict[str, str] = {}
    for raw_name, raw_value in raw:
        name = raw_name.decode("latin-1").lower()
        value = _redacted_header(name, raw_value.decode("utf-8", errors="replace"))
        previous = shown.get(name)
        separator = "; " if name in _COOKIES else ", "
        shown[name] = value if previous is None else previous + separator + value
    return shown


def _redacted_header(name: str, value: str) -> str:
    if name in _SCHEMED:
        scheme, space, credentials = value.strip().partition(" ")
        return f"{scheme} {redacted(credentials.strip())}" if space else redacted(scheme)
    if name in _KEYED:
        return redacted(value.strip())
    if name in _COOKIES:
        return "; ".join(
            f"{part.partition('=')[0].strip()}={REDACTED}" for part in value.split(";") if part
        )
    value = _QUERY_KEY_TEXT.sub(lambda m: m[1] + redacted(m[2]), value)
    return _PREFIXED_KEY_TEXT.sub(lambda m: m[1] + REDACTED, value)  # a key in any header


def redacted_body(body: bytes | None) -> bytes | None:
    """A body as sent, byte for byte, but for its keys: posthog's `api_key` or `token` (in a
    JSON document at any depth, or in a body that does not parse, or a form field), and a key
    of a known family anywhere."""
    if not body:
        return body
    try:
        shown = _without_members(body, orjson.loads(body))
    except orjson.JSONDecodeError:
        shown = _FORM_FIELD.sub(lambda m: m[1] + _redacted_bytes(m[2]), body)
    # As written, too: a member repeated (the parser keeps the last), or a body cut short
    shown = _MEMBER.sub(lambda m: m[1] + _redacted_bytes(m[2]) + m[3], shown)
    return _PREFIXED_KEY.sub(lambda m: m[1] + REDACTED.encode(), shown)


def _without_members(body: bytes, document: Any) -> bytes:
    """Each key member's value replaced where it is written; a value written in some other
    way (escaped) leaves no trace either: then the body is written anew without it."""
    members = list(_key_members(document))
    shown = body
    for key in {member[name] for member, name in members} - {""}:
        written = orjson.dumps(key)
        if written not in shown:
            return _rewritten(document, members)
        shown = shown.replace(written, orjson.dumps(redacted(key)))
    return shown


def _key_members(document: Any) -> Iterator[tuple[dict[str, Any], str]]:
    """Every `api_key` and `token` member holding a string, as (its object, its name), at
    any depth (without recursion: a body may nest a thousand levels)."""
    pending = [document]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            for name, member in value.items():
                if name in _BODY_KEYS and isinstance(member, str):
                    yield value, name
                else:
                    pending.append(member)
        elif isinstance(value, list):
            pending.extend(value)


def _rewritten(document: Any, members: list[tuple[dict[str, Any], str]]) -> bytes:
    """The document with its keys redacted, written anew (or, too deep to write, a note)."""
    for member, name in members:
        member[name] = redacted(member[name])
    try:
        return orjson.dumps(document)
    except orjson.JSONEncodeError:
        return b'"[a body holding a key, nested too deep to show without it]"'


def redacted_document(value: Any) -> Any:
    """A copy of a recorded item (a captured event, a target) with its keys reduced to their
    family, as in a body: for pages and files that travel further than a test's assertions."""
    if isinstance(value, dict):
        return {
            name: redacted(member)
            if name in _BODY_KEYS and isinstance(member, str)
            else redacted_document(member)
            for name, member in value.items()
        }
    if isinstance(value, list):
        return [redacted_document(member) for member in value]
    if isinstance(value, str) and "_" in value:
        return _PREFIXED_KEY_TEXT.sub(lambda m: m[1] + REDACTED, value)
    return value


def _redacted_bytes(value: bytes) -> bytes:
    return redacted(value.decode("utf-8", errors="replace")).encode()
