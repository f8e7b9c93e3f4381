"""Keys out of what the journal shows: a request's headers, and its body byte for byte but for
the keys in it, each reduced to its family (`phc_[redacted]`), so a reader can tell which key
went where without ever seeing one; and every secret the stub knows, wherever it is."""

from __future__ import annotations

import functools
import itertools
import re
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson
from multidict import CIMultiDict

from stub.keys import KEY_IN_TEXT, NOT_IN_A_WORD, REDACTED, redacted, redacted_path, without_keys
from stub.namespaces import Namespaces
from stub.state import RawHeaders, RequestRecord, StubState
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


class KnownSecrets:
    """The exact secrets the stub knows (`known_secrets`), found as written wherever they are
    and each shown as `redacted()` shows a key: its family's prefix, if it has one, then
    `[redacted]`. Built when the journal is read, never on a request's way."""

    __slots__ = ("_bytes", "_text")

    def __init__(self, secrets: Iterable[str]) -> None:
        looked_for = sorted(
            (secret for secret in secrets if len(secret) >= MIN_ECHOED_KEY),
            key=lambda secret: (-len(secret), secret),  # the longest first, in a fixed order
        )
        self._text: re.Pattern[str] | None = None
        self._bytes: re.Pattern[bytes] | None = None
        if looked_for:
            try:
                pattern = _trie(looked_for)
                self._text, self._bytes = re.compile(pattern), re.compile(pattern.encode())
            except RecursionError:  # secrets each the beginning of the next, hundreds deep
                pattern = "|".join(map(re.escape, looked_for))  # slower, never wrong
                self._text, self._bytes = re.compile(pattern), re.compile(pattern.encode())

    def in_text(self, text: str) -> str:
        if self._text is None:
            return text
        return self._text.sub(lambda m: redacted(m[0]), text)

    def in_bytes(self, data: bytes) -> bytes:
        if self._bytes is None:
            return data
        return self._bytes.sub(lambda m: redacted(m[0].decode(errors="replace")).encode(), data)

    def in_headers(self, raw: RawHeaders) -> RawHeaders:
        """Raw headers without the secrets, in names too (`X-Key<token>: y`): looked for
        before a name is lower-cased, while it is as written."""
        if self._bytes is None or not self._bytes.search(b"\n".join(itertools.chain(*raw))):
            return raw  # one search over them all: most requests hold no secret
        return tuple((self.in_bytes(name), self.in_bytes(value)) for name, value in raw)

    def in_target(self, target: str) -> str:
        """A path and query as sent, without the secrets, whether written plainly or
        percent-encoded (the journal and the curl line decode both)."""
        if self._text is None:
            return target
        target = self.in_text(target)
        if "%" not in target and "+" not in target:  # nothing else decodes to a secret
            return target
        path, mark, query = target.partition("?")
        if self._text.search(urllib.parse.unquote(path)):
            path = urllib.parse.quote(self.in_text(urllib.parse.unquote(path)), safe=_IN_A_PATH)
        if self._text.search(urllib.parse.unquote_plus(query)):
            pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
            cleaned = [(self.in_text(name), self.in_text(value)) for name, value in pairs]
            query = urllib.parse.urlencode(cleaned, safe="[]")
        return path + mark + query

    def in_record(self, record: RequestRecord, *, bodies: bool) -> RequestRecord:
        """The record as if the secrets had never been sent nor echoed: its target and
        headers, and with `bodies` its body and its answer (a summary shows neither, so
        there they are not searched)."""
        if self._text is None:
            return record
        target, raw = self.in_target(record.target), self.in_headers(record.headers)
        if not bodies:
            unchanged = target == record.target and raw is record.headers
            return record if unchanged else record._replace(target=target, headers=raw)
        body, said, answer_body = record.body, record.answer_headers, record.answer_body
        return record._replace(
            target=target,
            headers=raw,
            body=None if body is None else self.in_bytes(body),
            answer_headers=None if said is None else self._in_answer_headers(said),
            answer_body=None if answer_body is None else self.in_bytes(answer_body),
        )

    def _in_answer_headers(self, said: Mapping[str, str]) -> Mapping[str, str]:
        """A multidict still, so a repeated header (`Set-Cookie`) is still shown each time."""
        return CIMultiDict(
            (self.in_text(name), self.in_text(value)) for name, value in said.items()
        )

    def in_document(self, value: Any) -> Any:
        """A copy of a parsed document (a recorded event) without the secrets, in its names
        and its strings."""
        if self._text is None:
            return value
        if isinstance(value, dict):
            return {self.in_text(name): self.in_document(item) for name, item in value.items()}
        if isinstance(value, list):
            return [self.in_document(item) for item in value]
        return self.in_text(value) if isinstance(value, str) else value


_IN_A_PATH = "/:@!$&'()*+,;=~[]"
"""What a path keeps unencoded when written anew (`[]`: a redaction's own brackets)."""


def known_secrets(state: StubState, namespaces: Namespaces) -> KnownSecrets:
    """Every secret the stub knows that a namespace's journal may hold: its keys (accepted,
    rate-limited), its organisation keys and CLI session tokens, the control token, and every
    namespace's bound keys (a request may carry one to another namespace, or before it was
    bound)."""
    seeds = [state.served.fixtures.management_seed]
    if state.management_in_use:  # else not built yet, and reading it would build it
        seeds.append(state.management.seed)
    secrets = {
        *state.key_policy.accepted,
        *state.limiter.limits.per_key,
        *(p.token for seed in seeds for org in seed.orgs.values() for p in org.principals),
        *namespaces.bound_keys,
    }
    if state.config.control_token:
        secrets.add(state.config.control_token)
    return _compiled(frozenset(secrets))


@functools.lru_cache(maxsize=8)
def _compiled(secrets: frozenset[str]) -> KnownSecrets:
    """Secrets change seldom and a page reads the journal five times a second: the last few
    sets' patterns kept, each compiled once."""
    return KnownSecrets(secrets)


def _trie(secrets: Iterable[str]) -> str:
    """One pattern for every secret, the longer where one begins another, written as a trie:
    a plain alternation tries every secret at every character (with 100 secrets a megabyte
    took 250 ms to search, as a trie 70 ms)."""
    root: dict[str, Any] = {}
    for secret in secrets:
        node = root
        for char in secret:
            node = node.setdefault(char, {})
        node[_ENDS] = {}
    return _branches(root)


_ENDS = ""
"""In a trie node: a secret ends here."""


def _branches(node: dict[str, Any]) -> str:
    """The pattern below a trie node; a run of characters with no fork is one literal (so a
    long secret costs no recursion)."""
    branches = []
    for first, below in node.items():
        if first == _ENDS:
            continue
        run, child = first, below
        while len(child) == 1 and _ENDS not in child:
            ((char, child),) = child.items()
            run += char
        branches.append(re.escape(run) + _branches(child))
    if not branches:
        return ""
    if len(branches) == 1 and _ENDS not in node:
        return branches[0]
    return "(?:" + "|".join(branches) + ")" + ("?" if _ENDS in node else "")


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
