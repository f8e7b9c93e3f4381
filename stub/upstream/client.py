"""The one way svc-stub talks to the real service: https off loopback, TLS verified (against a
CA bundle of the user's, if given), bounded in time, and never a key in anything it says."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import NamedTuple

import aiohttp
from yarl import URL

from stub.config import is_loopback

CONNECT_TIMEOUT_S = 5.0
ANSWER_TIMEOUT_S = 30.0
"""Longer than any client's own timeout: the client, not svc-stub, decides when to give up."""
CONNECTIONS = 100
"""Kept open to the upstream at once, reused across requests."""


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
        """The upstream address of a request for `path?query` (both as sent, encoded)."""
        base = self.url.raw_path.rstrip("/")
        target = base + path + (f"?{query}" if query else "")
        return self.url.origin().join(URL(target, encoded=True))


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
    """One pooled HTTP session for the upstream. It adds no User-Agent of its own and follows
    no redirect, so what a client sends and what the service answers pass as they are."""
    connector = aiohttp.TCPConnector(ssl=tls_context(upstream), limit=CONNECTIONS)
    timeout = aiohttp.ClientTimeout(total=ANSWER_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
    async with aiohttp.ClientSession(
        connector=connector,
        timeout=timeout,
        skip_auto_headers=("User-Agent", "Accept-Encoding", "Content-Type"),
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
    return type(error).__name__
