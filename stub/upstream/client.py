"""The one way svc-stub talks to the real service: https off loopback, TLS verified (against a
CA bundle of the user's, if given), bounded in time, and never a key in anything it says."""

from __future__ import annotations

import contextlib
import ssl
import urllib.parse
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, NamedTuple

import aiohttp
import orjson
from yarl import URL

from stub.config import is_loopback

CONNECT_TIMEOUT_S = 5.0
ANSWER_TIMEOUT_S = 30.0
"""Longer than any client's own timeout: the client, not svc-stub, decides when to give up."""
MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""The largest upstream answer relayed: a test stub holds each answer whole (faults cut and
spoil it), and a runaway one must not take its memory."""


class UpstreamError(ValueError):
    """The upstream's address or TLS settings cannot be used (one line, said before any
    connection is made)."""


class Upstream(NamedTuple):
    """Where the real service is, checked (`upstream_of`), and how to trust it."""

    url: URL
    """Its base address, without a trailing slash: a path prefix is kept."""
    ca_bundle: Path | None = None

    @property
    def shown(self) -> str:
        """The address for messages: scheme, host and port only (a path may carry a token)."""
        return str(self.url.origin())

    def address(self, path: str, query: str) -> URL:
        """The upstream address of a request for `path?query` (both as sent, encoded): always
        on the upstream's host, under its path (a path is never resolved as a reference, so
        `//host/...` stays a path; dot segments are refused before this, see `dot_segments`)."""
        base = self.url.raw_path.rstrip("/")
        target = self.url.with_path(base + path, encoded=True)
        return URL(f"{target}?{query}", encoded=True) if query else target


def dot_segments(raw_path: str) -> bool:
    """Whether a path as sent holds `.` or `..` segments (percent-encoded or not), which a
    server may resolve to a path that was never asked for (`/v1/../_test/requests`)."""
    segments = raw_path.partition("?")[0].split("/")
    return any(urllib.parse.unquote(segment) in (".", "..") for segment in segments)


def upstream_of(
    raw: str, *, allow_insecure: bool = False, ca_bundle: Path | None = None
) -> Upstream:
    """An upstream from the user's words, or UpstreamError: http off loopback is refused (the
    service's transport rule) unless `allow_insecure`; a CA bundle must be a readable file."""
    url = URL(raw.strip())
    if url.scheme not in ("http", "https") or not url.host:
        raise UpstreamError(f"{raw!r} is not an http(s) address such as https://staging.example")
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


async def call(
    client: aiohttp.ClientSession,
    base: Upstream,
    method: str,
    path: str,
    *,
    key: str | None = None,
    body: bytes | None = None,
) -> Answer:
    """One request to `base` (`path` may carry a query), `key` as `Authorization: Bearer`.
    UpstreamError, saying what failed without the key, when nothing answers."""
    path, _, query = path.partition("?")
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    try:
        async with client.request(
            method, base.address(path, query), headers=headers, data=body, allow_redirects=False
        ) as answer:
            received = await answer.read()
            shown = {name.lower(): value for name, value in answer.headers.items()}
            return Answer(answer.status, shown, received)
    except (aiohttp.ClientError, TimeoutError) as error:
        raise UpstreamError(f"{base.shown} did not answer ({failure_reason(error)})") from None
