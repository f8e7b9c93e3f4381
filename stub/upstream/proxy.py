"""Proxy mode (`svc-stub --upstream URL`): every client-plane request is forwarded to the real
service and its answer relayed, with svc-stub's faults on top and everything recorded as usual.

The forwarder is the answer of every client route, so the pipeline (stub/http/pipeline.py)
resolves namespaces, fires faults and records exactly as it does for fixtures (the service
judges the keys; the forwarder only charges them): a fault that replaces the answer never
forwards, `delay` waits and then forwards, `truncated`, `invalid_json` and
`slow_body` damage the real answer.

What each route charges and records is its declaration's (stub/http/route.py), read here
as the pipeline's admission reads it. An answer the upstream cut short is relayed cut, and the
answers held at once are bounded together (`AnswersInFlight`) as each is alone (`MAX_ANSWER_BYTES`).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable
from typing import Any, NamedTuple

import aiohttp
from aiohttp import HttpVersion11, hdrs, web
from aiohttp.typedefs import Handler
from multidict import CIMultiDict, CIMultiDictProxy

from stub.config import Upstream
from stub.faults.arming import FAULT_QUERY, FAULT_QUERY_PARAMETERS
from stub.http.admission import charge, key_in
from stub.http.route import RouteDeclaration
from stub.state import UPSTREAMED, Upstreamed, state_of
from stub.upstream.transport import (
    MAX_ANSWER_BYTES,
    dot_segments,
    failure_reason,
    session,
)
from stub.wire import ApiError, ClientGone, invalid_body, json_object, read_body

UPSTREAM_SESSION = web.AppKey("upstream_session", aiohttp.ClientSession)
_DISCONNECT_POLL_S = 0.25
"""How soon a forward notices that its client left (aiohttp does not cancel the handler)."""

_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
_NOT_FORWARDED = _HOP_BY_HOP | {
    "host",
    "content-length",
    "content-encoding",
    "accept-encoding",
    "expect",
}
"""Besides the hop-by-hop headers: the body is forwarded as read (decompressed), the answer is
asked for in encodings the session can undo, and the connection is the session's own."""
_NOT_RELAYED = _HOP_BY_HOP | {"content-length", "content-encoding", "date", "server"}
_OWN_HEADER_PREFIXES = ("x-svc-test-", "x-svc-stub-")
"""svc-stub's own headers (faults, namespaces, warnings) are for svc-stub, never the service."""


IN_FLIGHT_OPTION = "--max-upstream-in-flight-bytes"

log = logging.getLogger("stub")

Forwarding = Callable[[RouteDeclaration | None, bool], Handler]
"""The forwarder of a route, by its declaration (None: an unknown path), and whether its key
is charged against the rate limit (runtime and vendor routes, as against fixtures)."""


def forwarding(
    upstream: Upstream, control_token: str | None, max_in_flight_bytes: int
) -> Forwarding:
    """The forwarders of one app: they share its bound on the upstream's answers held at
    once (each is held whole), `--max-upstream-in-flight-bytes`."""
    in_flight = AnswersInFlight(max_in_flight_bytes)

    def for_route(route: RouteDeclaration | None, rate_limited: bool) -> Handler:
        declared = route or _UNKNOWN
        charged = declared.key if rate_limited else None
        reads_body = (charged is not None and charged.in_body) or declared.records is not None

        async def forward(request: web.Request) -> web.StreamResponse:
            if dot_segments(request.raw_path):
                raise invalid_body(
                    "path: a '.' or '..' segment is not forwarded (the upstream could resolve "
                    "it to a path that was never asked for); send the path it stands for"
                )
            state = state_of(request)
            body = await read_body(request)
            document = _document(body) if reads_body else None
            if charged is not None:
                charge(state, key_in(charged, request, document))
            exchange = _Exchange(upstream, control_token, in_flight)
            relayed = await _sent_upstream(request, exchange, body)
            if document is not None and 200 <= relayed.status < 300:
                declared.keep_accepted(state, document)
            if relayed.cut:
                _log_cut(request, declared, upstream, relayed)
                return CutAnswer(request, relayed)
            return web.Response(status=relayed.status, body=relayed.body, headers=relayed.headers)

        return forward

    return for_route


_UNKNOWN = RouteDeclaration("")
"""A path no route serves: its key (if charged) from the headers, nothing recorded."""


class Relayed(NamedTuple):
    """The upstream's answer as it reached svc-stub."""

    status: int
    headers: CIMultiDict[str]
    """The headers relayed."""
    body: bytes
    """Decoded; only what arrived, if `cut`."""
    cut: bool = False
    """The upstream ended its answer before its end: relayed as cut."""
    declared_length: int | None = None
    """The upstream's Content-Length where it counts the bytes relayed (no encoding was
    undone): the length the cut answer declares too."""


class AnswersInFlight:
    """The bytes of the upstream's answers being read now, bounded together (each is held
    whole, so a few large ones at once must not take the stub's memory)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0

    def take(self, size: int) -> None:
        if self.held + size > self.limit:
            raise ApiError(
                502,
                "UPSTREAM_IN_FLIGHT_TOO_LARGE",
                f"the upstream's answers being relayed at once would hold more than "
                f"{self.limit:,} bytes together, more than svc-stub holds: raise "
                f"{IN_FLIGHT_OPTION}, or send fewer requests for large answers at once",
            )
        self.held += size

    def give_back(self, size: int) -> None:
        self.held -= size


class _Exchange(NamedTuple):
    """What one forwarded request needs to go upstream and come back."""

    upstream: Upstream
    control_token: str | None
    in_flight: AnswersInFlight


async def _sent_upstream(request: web.Request, exchange: _Exchange, body: bytes) -> Relayed:
    """The exchange with the upstream, abandoned (and the client recorded as gone) as soon as
    the client goes away: its connection to the upstream is not held for nobody."""
    started = time.perf_counter()
    answering = asyncio.ensure_future(_exchanged(request, exchange, body))
    try:
        while not answering.done():
            await asyncio.wait([answering], timeout=_DISCONNECT_POLL_S)
            if not answering.done() and _client_gone(request):
                raise ClientGone("while the upstream answered")
        relayed = answering.result()
    except (aiohttp.ClientError, TimeoutError) as error:
        raise ApiError(
            502,
            "UPSTREAM_UNREACHABLE",
            f"the upstream {exchange.upstream.shown} did not answer ({failure_reason(error)}): "
            "check --upstream, that the service is up, and that this machine can reach it",
        ) from None
    finally:
        answering.cancel()
    request[UPSTREAMED] = Upstreamed(relayed.status, time.perf_counter() - started)
    return relayed


async def _exchanged(request: web.Request, exchange: _Exchange, body: bytes) -> Relayed:
    upstream = exchange.upstream
    address = upstream.address(request.raw_path.partition("?")[0], _forwarded_query(request))
    async with request.app[UPSTREAM_SESSION].request(
        request.method,
        address,
        headers=_forwarded_headers(request, exchange.control_token),
        data=body or None,
        allow_redirects=False,
    ) as answer:
        chunks: list[bytes] = []
        held = 0
        try:
            async for chunk in answer.content.iter_chunked(1 << 16):
                if held + len(chunk) > MAX_ANSWER_BYTES:
                    raise ApiError(
                        502,
                        "UPSTREAM_TOO_LARGE",
                        f"the upstream {upstream.shown} answered more than "
                        f"{MAX_ANSWER_BYTES:,} bytes, more than svc-stub relays",
                    )
                exchange.in_flight.take(len(chunk))
                held += len(chunk)
                chunks.append(chunk)
        except (aiohttp.ClientError, TimeoutError):
            # The status line and headers came: the failure is a cut answer, relayed as one
            return Relayed(answer.status, _relayed(answer), b"".join(chunks), True, _length(answer))
        finally:
            exchange.in_flight.give_back(held)
        return Relayed(answer.status, _relayed(answer), b"".join(chunks))


def _length(answer: aiohttp.ClientResponse) -> int | None:
    """The upstream's Content-Length, where it counts the bytes relayed (none was decoded)."""
    if answer.headers.get("Content-Encoding", "identity").lower() != "identity":
        return None
    return answer.content_length


class CutAnswer(web.Response):
    """An answer the upstream cut short, relayed as the client would see it from the service:
    its status and headers, the bytes that came, then the connection closed before the end
    (framed as the upstream framed it where its length still counts, else chunked)."""

    def __init__(self, request: web.Request, relayed: Relayed) -> None:
        super().__init__(status=relayed.status, body=relayed.body, headers=relayed.headers)
        self._client = request
        self.force_close()
        declared = relayed.declared_length
        if declared is not None and declared > len(relayed.body):
            self.headers[hdrs.CONTENT_LENGTH] = str(declared)
        elif request.version >= HttpVersion11:
            self.enable_chunked_encoding()  # and never the last chunk
        else:  # no chunks in HTTP/1.0: a length the bytes sent fall short of
            self.headers[hdrs.CONTENT_LENGTH] = str(len(relayed.body) + 1)

    async def write_eof(self, data: bytes = b"") -> None:
        body = self.body
        if isinstance(body, bytes) and body:
            await self.write(body)
        transport = self._client.transport
        if transport is not None:
            transport.close()  # a FIN once the bytes are flushed: what the upstream did


def _log_cut(
    request: web.Request, route: RouteDeclaration, upstream: Upstream, relayed: Relayed
) -> None:
    """Said in the log, so the cut is not taken for svc-stub's (never the path: it may hold a
    key)."""
    log.warning(
        "%s %s: the upstream %s cut its answer short after %d bytes (status %d); relayed cut, "
        "as it came",
        request.method,
        route.name or "(a path no route serves)",
        upstream.shown,
        len(relayed.body),
        relayed.status,
    )


def _client_gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


def _forwarded_headers(request: web.Request, control_token: str | None) -> CIMultiDict[str]:
    """The client's headers less those for this hop alone (the standard ones and those its
    `Connection` names), svc-stub's own, and an `Authorization` that carries the control
    token (whatever its scheme's case or spacing)."""
    dropped = _NOT_FORWARDED | _connection_named(request.headers)
    return CIMultiDict(
        (name, value)
        for name, value in request.headers.items()
        if name.lower() not in dropped
        and not name.lower().startswith(_OWN_HEADER_PREFIXES)
        and not _carries_token(name, value, control_token)
    )


def _connection_named(headers: CIMultiDictProxy[str]) -> frozenset[str]:
    """The headers a `Connection` header names: hop-by-hop too (RFC 9110, 7.6.1)."""
    values = headers.getall("Connection", [])
    return frozenset(
        token.strip().lower() for value in values for token in value.split(",") if token.strip()
    )


def _carries_token(name: str, value: str, control_token: str | None) -> bool:
    if control_token is None or name.lower() != "authorization":
        return False
    words = value.split()
    return bool(words) and hmac.compare_digest(words[-1].encode(), control_token.encode())


def _forwarded_query(request: web.Request) -> str:
    """The query as sent (byte for byte), less a per-request fault's parameters."""
    raw = request.rel_url.raw_query_string
    if FAULT_QUERY not in request.query:
        return raw
    return "&".join(
        part
        for part in raw.split("&")
        if urllib.parse.unquote_plus(part.partition("=")[0]) not in FAULT_QUERY_PARAMETERS
    )


def _relayed(answer: aiohttp.ClientResponse) -> CIMultiDict[str]:
    """The upstream's headers, less hop-by-hop ones (those its `Connection` names too) and its
    CORS answer: the page talks to the stub, which answers CORS itself (stub/http/pipeline.py)."""
    dropped = _NOT_RELAYED | _connection_named(answer.headers)
    return CIMultiDict(
        (name, value)
        for name, value in answer.headers.items()
        if name.lower() not in dropped and not name.lower().startswith("access-control-")
    )


def _document(body: bytes) -> dict[str, Any]:
    """The body as the route's declaration reads it; {} where it is no JSON object (the
    upstream will say so)."""
    try:
        return json_object(body, "application/json")
    except ApiError:
        return {}


def upstream_session(upstream: Upstream) -> Callable[[web.Application], AsyncIterator[None]]:
    """For `app.cleanup_ctx`: the session opens with the app and closes with it."""

    async def opened(app: web.Application) -> AsyncIterator[None]:
        async with session(upstream) as client:
            app[UPSTREAM_SESSION] = client
            yield

    return opened
