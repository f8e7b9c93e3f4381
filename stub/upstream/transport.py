"""The one way svc-stub talks to the real service: https off loopback, TLS verified (against a
CA bundle of the user's, if given), bounded in time and (for record and verify) in size, and
never a key in anything it says or keeps (`Secrets`)."""

from __future__ import annotations

import contextlib
import json
import re
import ssl
import urllib.parse
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any, NamedTuple

import aiohttp
import orjson
from yarl import URL

from stub.config import Upstream, is_loopback
from stub.keys import KEY_IN_TEXT, REDACTED, Family, family_of, redacted

CONNECT_TIMEOUT_S = 5.0
ANSWER_TIMEOUT_S = 30.0
"""Longer than any client's own timeout: the client, not svc-stub, decides when to give up."""
MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""The largest upstream answer relayed: a test stub holds each answer whole (faults cut and
spoil it), and a runaway one must not take its memory."""


class UpstreamError(ValueError):
    """The upstream's address or TLS settings cannot be used (one line, said before any
    connection is made)."""


_DECODINGS_CHECKED = 3
"""How many rounds of percent-decoding a path is looked through: a server behind another may
decode once more than the first (`%252e` is `%2e`, then `.`)."""
_SEGMENT_SEPARATORS = re.compile(r"[/\\]")
"""`/`, and the `\\` some servers (IIS, and anything that normalises Windows paths) take for it."""


def dot_segments(raw_path: str) -> bool:
    """Whether a path as sent holds `.` or `..` segments, which a server may resolve to a path
    that was never asked for (`/v1/../_test/requests`): percent-encoded (`%2e%2e`, `..%2f..`,
    even twice), split by `\\` (`..%5c`), or with a parameter (`..;/`, as Tomcat and Spring read
    it)."""
    path = raw_path.partition("?")[0]
    for _ in range(_DECODINGS_CHECKED):
        if _has_dot_segment(path):
            return True
        decoded = urllib.parse.unquote(path)
        if decoded == path:
            return False
        path = decoded
    return _has_dot_segment(path)


def _has_dot_segment(path: str) -> bool:
    segments = _SEGMENT_SEPARATORS.split(path)
    return any(segment.partition(";")[0] in (".", "..") for segment in segments)


def upstream_of(
    raw: str, *, allow_insecure: bool = False, ca_bundle: Path | None = None
) -> Upstream:
    """An upstream from the user's words, or UpstreamError: http off loopback is refused (the
    service's transport rule) unless `allow_insecure`; a CA bundle must be a readable file. An
    address that does not parse is refused in words without the address (it may carry
    credentials: `http://a\\@host`)."""
    try:
        url = URL(raw.strip())
        port = url.explicit_port
    except ValueError as exc:
        raise UpstreamError(
            f"not a valid address ({exc}); give one such as https://staging.example.com"
        ) from None
    if port is not None and not 0 < port < 65536:
        raise UpstreamError(f"port {port} is not a port (1-65535)")
    if "://" not in raw and "@" not in raw:  # a bare host: say the whole address to give
        bare = raw.strip()
        host = bare.partition("/")[0].rpartition(":")[0] or bare.partition("/")[0]
        scheme = "http" if is_loopback(host.strip("[]")) else "https"
        raise UpstreamError(f"{bare!r} has no scheme; give {scheme}://{bare}")
    if url.scheme not in ("http", "https") or not url.host:
        raise UpstreamError(
            f"{raw!r} is not an http(s) address such as https://staging.example.com"
        )
    if url.scheme == "http" and not is_loopback(url.host) and not allow_insecure:
        raise UpstreamError(
            f"{url.origin()} is plain http off loopback, and the service takes https; "
            "use https, or add --allow-insecure-upstream for a test service on your own network"
        )
    if url.user or url.password:
        raise UpstreamError("the address carries credentials; give keys as options instead")
    if ca_bundle is not None and not ca_bundle.is_file():
        raise UpstreamError(f"CA bundle {ca_bundle}: no such file")
    return Upstream(url.with_query(None).with_fragment(None), ca_bundle)


def tls_context(upstream: Upstream) -> ssl.SSLContext:
    """Verification on, always: the system's trust store, or the user's CA bundle."""
    try:
        return ssl.create_default_context(cafile=upstream.ca_bundle)
    except (ssl.SSLError, OSError) as exc:
        message = f"CA bundle {upstream.ca_bundle}: not PEM certificates ({exc})"
        raise UpstreamError(message) from None


@contextlib.asynccontextmanager
async def session(upstream: Upstream) -> AsyncIterator[aiohttp.ClientSession]:
    """One HTTP session for the upstream. It asks only for encodings it can undo, adds no
    User-Agent of its own and follows no redirect, so what a client sends and what the
    service answers pass as they are."""
    # No pool limit: one connection to the upstream per client request in flight, so a
    # request never waits for another's slot (bounded by the clients' own connections).
    connector = aiohttp.TCPConnector(ssl=tls_context(upstream), limit=0)
    timeout = aiohttp.ClientTimeout(total=ANSWER_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
    async with aiohttp.ClientSession(
        connector=connector,
        timeout=timeout,
        skip_auto_headers=("User-Agent", "Content-Type"),
    ) as opened:
        yield opened


def failure_reason(error: BaseException) -> str:
    """What went wrong reaching the upstream, in a few words and without the address."""
    if isinstance(error, aiohttp.ClientConnectorCertificateError):
        return "its TLS certificate is not trusted (give the CA with --upstream-ca-bundle)"
    if isinstance(error, aiohttp.ClientConnectorError):
        return f"cannot connect: {error.os_error.strerror or type(error.os_error).__name__}"
    if isinstance(error, TimeoutError):
        return "no answer in time"
    if isinstance(error, aiohttp.ServerDisconnectedError):
        return "it closed the connection without answering"
    if isinstance(error, aiohttp.ClientResponseError | aiohttp.ClientPayloadError):
        return "its answer was not valid HTTP"
    return type(error).__name__


class Answer(NamedTuple):
    """One answer, whole: what record and verify read of it."""

    status: int
    headers: dict[str, str]
    """By lower-case name."""
    body: bytes

    def json(self) -> Any:
        """The body as JSON, or None where it is not JSON."""
        try:
            return orjson.loads(self.body)
        except orjson.JSONDecodeError:
            return None


class AnswerTooLarge(UpstreamError):
    """An answer larger than record and verify read (`--max-answer-bytes`)."""


_READ_CHUNK = 256 * 1024


async def call(
    client: aiohttp.ClientSession,
    base: Upstream,
    method: str,
    path: str,
    *,
    key: str | None = None,
    body: bytes | None = None,
    max_bytes: int = MAX_ANSWER_BYTES,
) -> Answer:
    """One request to `base` (`path` may carry a query), `key` as `Authorization: Bearer`.
    UpstreamError, saying what failed without the key, when nothing answers; AnswerTooLarge
    once the answer passes `max_bytes` (decoded), read no further."""
    path, _, query = path.partition("?")
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    try:
        async with client.request(
            method, base.address(path, query), headers=headers, data=body, allow_redirects=False
        ) as answer:
            received = await _bounded(answer, max_bytes, f"{method} {path}")
            shown = {name.lower(): value for name, value in answer.headers.items()}
            return Answer(answer.status, shown, received)
    except (aiohttp.ClientError, TimeoutError) as error:
        raise UpstreamError(f"{base.shown} did not answer ({failure_reason(error)})") from None


async def _bounded(answer: aiohttp.ClientResponse, max_bytes: int, asked: str) -> bytes:
    """The body, read in chunks so that an endless or enormous one costs `max_bytes` at most
    (a declared length past it is refused before any of it is read)."""
    too_large = AnswerTooLarge(
        f"{asked}: the answer is larger than {max_bytes:,} bytes, the most record and verify "
        "read; raise it with --max-answer-bytes"
    )
    if answer.content_length is not None and answer.content_length > max_bytes:
        raise too_large
    received = bytearray()
    async for chunk in answer.content.iter_chunked(_READ_CHUNK):
        received += chunk
        if len(received) > max_bytes:
            raise too_large
    return bytes(received)


_FAMILY_KEY = re.compile(KEY_IN_TEXT, re.IGNORECASE)
"""A key of a known family, in any case (an error page may upper-case what it echoes)."""
MIN_CUT_KEY = 8
"""The shortest piece of a given key, cut short at the end of a value, still taken for it: a
shorter one would hide ordinary words."""
_CUT_HERE = r"(?=$|[\s\"'\\]|\.\.\.)"
"""Where a value ends in text: the end, a space, a quote, an escape or the `...` of a cut."""


class Secrets:
    """The keys a command was given, and every way to take them out of what it says or
    writes: each given key as sent, in any case, JSON- or URL-escaped, or cut short at the end
    of a value; then any key of a known family, by its prefix in any case. Each becomes its
    family (`project-api-key_[redacted]`), as everywhere else in svc-stub."""

    def __init__(self, keys: Iterable[str | None], *, keep: Iterable[str] = ()) -> None:
        given = sorted({key for key in keys if key}, key=len, reverse=True)
        self._given = [(_spellings(key), redacted(key)) for key in given]
        self._keep = frozenset(keep)
        """Placeholders svc-stub writes itself (`svc_org_recorded`), which are no secret."""

    def text(self, text: str) -> str:
        for spelled, shown in self._given:
            text = spelled.sub(shown, text)
        return _FAMILY_KEY.sub(self._family_only, text) if "_" in text else text

    def _family_only(self, found: re.Match[str]) -> str:
        return found[0] if found[0] in self._keep else found[1] + REDACTED

    def document(self, value: Any) -> Any:
        """A copy of a JSON value with every string in it scrubbed, names too, walked without
        recursion (an answer may nest a thousand levels)."""
        holder = [value]
        pending: list[tuple[list[Any] | dict[Any, Any], Any]] = [(holder, 0)]
        while pending:
            parent, slot = pending.pop()
            item = parent[slot]
            if isinstance(item, str):
                parent[slot] = self.text(item)
            elif isinstance(item, list):
                parent[slot] = copied = list(item)
                pending.extend((copied, index) for index in range(len(copied)))
            elif isinstance(item, dict):
                parent[slot] = named = {self._name(name): member for name, member in item.items()}
                pending.extend((named, name) for name in named)
        return holder[0]

    def _name(self, name: object) -> object:
        return self.text(name) if isinstance(name, str) else name

    def answer(self, answer: Answer) -> Answer:
        """The answer with its keys taken out of its headers and body. A JSON body holding
        one, or an escape that could hide one, is written anew from its scrubbed document;
        any other is kept byte for byte (and costs no copy of a large document)."""
        headers = {name: self.text(value) for name, value in answer.headers.items()}
        text = answer.body.decode("utf-8", "surrogateescape")
        scrubbed = self.text(text)
        if scrubbed == text and "\\u" not in text:
            return Answer(answer.status, headers, answer.body)
        body = scrubbed.encode("utf-8", "surrogateescape")
        document = answer.json()
        if document is not None:
            with contextlib.suppress(orjson.JSONEncodeError):  # deeper than orjson writes
                body = orjson.dumps(self.document(document))
        return Answer(answer.status, headers, body)


def _spellings(key: str) -> re.Pattern[str]:
    """A given key as it may come back: as sent, JSON- or URL-escaped (in any case), or cut
    short where a value ends (a message cut at its length limit). A key of a known family
    needs no cuts: its prefix alone finds the rest of it, whole or cut."""
    whole = {
        key,
        json.dumps(key)[1:-1],
        key.replace("/", "\\/"),
        urllib.parse.quote(key, safe=""),
    }
    cuts = (
        [key[:length] for length in range(len(key) - 1, MIN_CUT_KEY - 1, -1)]
        if family_of(key) is Family.OTHER
        else []
    )
    pattern = "|".join(re.escape(spelling) for spelling in sorted(whole, key=len, reverse=True))
    if cuts:
        pattern += "|(?:" + "|".join(re.escape(cut) for cut in cuts) + ")" + _CUT_HERE
    return re.compile(pattern, re.IGNORECASE)
