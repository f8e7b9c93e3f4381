"""Keys out of what the journal shows: a request's headers, and its body byte for byte but for
the keys in it, each reduced to its family (`phc_[redacted]`), so a reader can tell which key
went where without ever seeing one."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from stub.keys import KEY_IN_TEXT, NOT_IN_A_WORD, REDACTED, redacted, redacted_path, without_keys
from stub.state import RawHeaders
from stub.wire import SECRET_QUERY_KEYS

_SCHEMED = frozenset({"authorization", "proxy-authorization"})
"""`Bearer <key>`: the scheme stays, the key is reduced to its family."""
_KEYED = frozenset({"x-api-key", "api-key", "x-auth-token"})
_COOKIES = frozenset({"cookie"})

_BODY_KEYS = frozenset({"api_key", "token"})
"""Where posthog puts the project key in a body (not `key`: a control point's name)."""

_PREFIXED_KEY = re.compile(KEY_IN_TEXT.encode())
_PREFIXED_KEY_TEXT = re.compile(KEY_IN_TEXT)
"""A key of a known family, wherever it is."""
_KEY_IN_NAME = re.compile(KEY_IN_TEXT.removeprefix(NOT_IN_A_WORD), re.IGNORECASE)
"""A key glued into a header's name: no word of a name ends in a key's prefix."""

_QUERY_KEY_TEXT = re.compile(
    r"([?&](?:" + "|".join(sorted(SECRET_QUERY_KEYS)) + r")=)([^&#\s]*)", re.IGNORECASE
)
"""A key in a URL's query, as a `Referer` carries one."""

_MEMBER = re.compile(rb'("(?:api_key|token)"\s*:\s*")((?:[^"\\]|\\.)*)("|\Z)', re.S)
"""posthog's key member in a body that is not JSON (the 400 a user opens the journal to
understand), its value possibly cut short."""
_FORM_FIELD = re.compile(rb"((?:^|&)(?:api_key|token)=)([^&]*)")


MIN_ECHOED_KEY = 6
"""The shortest key looked for, as sent, in what an upstream answered: a shorter one (a test's
`k`) would hide every such letter of the answer, and is no secret."""


def headers(raw: RawHeaders) -> dict[str, str]:
    """By lower-case name (a repeated one joined as HTTP joins it), secrets redacted, in a
    name too (a malformed client's `X-Key<key>: y`)."""
    shown: dict[str, str] = {}
    for raw_name, raw_value in raw:
        name = _in_name(raw_name.decode("latin-1").lower())
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
    return _in_text(value)  # a key in any header


def _in_name(name: str) -> str:
    """A header's name with a key glued into it (`x-keyphc_...`) reduced to its family: no
    word of a name ends in a key's prefix, as one of free text may (`graphs_count`)."""
    return _KEY_IN_NAME.sub(lambda m: m[1] + REDACTED, name) if "_" in name else name


def _in_text(text: str) -> str:
    """Free text with every key of a known family reduced to its family."""
    return _PREFIXED_KEY_TEXT.sub(lambda m: m[1] + REDACTED, text) if "_" in text else text


def path(raw: RawHeaders, decoded_path: str) -> str:
    """A request's path with the keys in it redacted: of a known family, or the one its
    headers present (a client that put its key in the URL)."""
    return redacted_path(decoded_path, _header_keys(raw))


def answer(
    raw: RawHeaders,
    body: bytes | None,
    answer_headers: Mapping[str, str],
    answer_body: bytes | None,
) -> tuple[dict[str, str], bytes | None]:
    """An answer's headers and body, its keys redacted as a request's are, and the keys the
    request presented (`raw` and `body`) wherever the answer echoes them: an upstream (proxy
    mode) may say the key it was sent in an error, or any header."""
    echoed = sorted(_presented_keys(raw, body), key=len, reverse=True)  # longest first
    shown_headers: dict[str, str] = {}
    for raw_name, value in answer_headers.items():
        name = _in_name(_echoes_removed(str(raw_name), echoed))
        shown = _echoes_removed(_redacted_header(name.lower(), value), echoed)
        shown_headers[name] = (
            shown if name not in shown_headers else f"{shown_headers[name]}, {shown}"
        )
    shown_body = redacted_body(answer_body)
    for key in echoed:
        shown_body = shown_body and shown_body.replace(key.encode(), redacted(key).encode())
    return shown_headers, shown_body


def _echoes_removed(text: str, keys: list[str]) -> str:
    return _in_text(without_keys(text, keys))


def _header_keys(raw: RawHeaders) -> Iterator[str]:
    """The keys a request's headers present: a scheme's credentials, an API-key header's."""
    for raw_name, raw_value in raw:
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("utf-8", errors="replace").strip()
        if name in _SCHEMED:
            value = value.partition(" ")[2].strip() or value
        elif name not in _KEYED:
            continue
        if len(value) >= MIN_ECHOED_KEY:
            yield value


def _presented_keys(raw: RawHeaders, body: bytes | None) -> set[str]:
    """Every key a request presented: in its headers, and posthog's in its body."""
    keys = set(_header_keys(raw))
    if body:
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError:
            document = None
        keys.update(
            member[name]
            for member, name in _key_members(document)
            if len(member[name]) >= MIN_ECHOED_KEY
        )
    return keys


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
