"""Proxy mode (`svc-stub --upstream URL`): every client-plane request is forwarded to the real
service and its answer relayed, with svc-stub's faults on top and everything recorded as usual.

The forwarder is the handler of every client route, so the route wrappers (serving.py) apply
faults, pick namespaces and record exactly as they do for fixtures: a fault that replaces the
answer never forwards, `delay` waits and then forwards, `truncated`, `invalid_json` and
`slow_body` damage the real answer.
"""

from __future__ import annotations

import asyncio
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.typedefs import Handler
from multidict import CIMultiDict

from stub.serving import RateLimited
from stub.state import UPSTREAMED, StubState, Upstreamed, state_of
from stub.upstream.client import (
    MAX_ANSWER_BYTES,
    Upstream,
    dot_segments,
    failure_reason,
    session,
)
from stub.wire import ApiError, ClientGone, invalid_body, json_object, presented_key, read_body

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
FAULT_QUERY = ("fault", "delayMs", "status", "retryAfter")
"""A per-request fault's query parameters, taken off before forwarding."""


Forwarding = Callable[[str | None, bool], Handler]
"""The forwarder of a route, by name (None: an unknown path), and whether its key is charged
against the rate limit (runtime and vendor routes, as against fixtures)."""


def forwarding(upstream: Upstream, control_token: str | None) -> Forwarding:
    def for_route(route: str | None, rate_limited: bool) -> Handler:
        recorder = _RECORDERS.get(route or "")
        charged_key = _CHARGED_KEYS.get(route or "", _header_key) if rate_limited else None

        async def forward(request: web.Request) -> web.StreamResponse:
            if dot_segments(request.raw_path):
                raise invalid_body(
                    "path: a '.' or '..' segment is not forwarded (the upstream could resolve "
                    "it to a path that was never asked for); send the path it stands for"
                )
            state = state_of(request)
            body = await read_body(request)
            if charged_key is not None:
                _charge(state, charged_key(request, body))
            status, headers, payload = await _sent_upstream(request, upstream, control_token, body)
            if recorder is not None and 200 <= status < 300:
                recorder(state, body)
            return web.Response(status=status, body=payload, headers=headers)

        return forward

    return for_route


Relayed = tuple[int, CIMultiDict[str], bytes]
"""The upstream's status, the headers relayed, and its body (decoded)."""


async def _sent_upstream(
    request: web.Request, upstream: Upstream, control_token: str | None, body: bytes
) -> Relayed:
    """The exchange with the upstream, abandoned (and the client recorded as gone) as soon as
    the client goes away: its connection to the upstream is not held for nobody."""
    started = time.perf_counter()
    exchange = asyncio.ensure_future(_exchange(request, upstream, control_token, body))
    try:
        while not exchange.done():
            await asyncio.wait([exchange], timeout=_DISCONNECT_POLL_S)
            if not exchange.done() and _client_gone(request):
                raise ClientGone("while the upstream answered")
        relayed = exchange.result()
    except (aiohttp.ClientError, TimeoutError) as error:
        raise ApiError(
            502,
            "UPSTREAM_UNREACHABLE",
            f"the upstream {upstream.shown} did not answer ({failure_reason(error)}): check "
            "--upstream, that the service is up, and that this machine can reach it",
        ) from None
    finally:
        exchange.cancel()
    request[UPSTREAMED] = Upstreamed(relayed[0], time.perf_counter() - started)
    return relayed


async def _exchange(
    request: web.Request, upstream: Upstream, control_token: str | None, body: bytes
) -> Relayed:
    address = upstream.address(request.raw_path.partition("?")[0], _forwarded_query(request))
    async with request.app[UPSTREAM_SESSION].request(
        request.method,
        address,
        headers=_forwarded_headers(request, control_token),
        data=body or None,
        allow_redirects=False,
    ) as answer:
        payload = bytearray()
        async for chunk in answer.content.iter_chunked(1 << 16):
            payload += chunk
            if len(payload) > MAX_ANSWER_BYTES:
                raise ApiError(
                    502,
                    "UPSTREAM_TOO_LARGE",
                    f"the upstream {upstream.shown} answered more than {MAX_ANSWER_BYTES:,} "
                    "bytes, more than svc-stub relays",
                )
        return answer.status, _relayed(answer), bytes(payload)


def _client_gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


def _forwarded_headers(request: web.Request, control_token: str | None) -> CIMultiDict[str]:
    token = f"Bearer {control_token}" if control_token else None
    return CIMultiDict(
        (name, value)
        for name, value in request.headers.items()
        if name.lower() not in _NOT_FORWARDED
        and not name.lower().startswith(_OWN_HEADER_PREFIXES)
        and not (name.lower() == "authorization" and value == token)
    )


def _forwarded_query(request: web.Request) -> str:
    """The query as sent (byte for byte), less a per-request fault's parameters."""
    raw = request.rel_url.raw_query_string
    if "fault" not in request.query:
        return raw
    return "&".join(
        part
        for part in raw.split("&")
        if urllib.parse.unquote_plus(part.partition("=")[0]) not in FAULT_QUERY
    )


def _relayed(answer: aiohttp.ClientResponse) -> CIMultiDict[str]:
    """The upstream's headers, less hop-by-hop ones and its CORS answer: the page talks to the
    stub, which answers CORS itself (serving.py)."""
    return CIMultiDict(
        (name, value)
        for name, value in answer.headers.items()
        if name.lower() not in _NOT_RELAYED and not name.lower().startswith("access-control-")
    )


def _charge(state: StubState, key: str) -> None:
    """The key's rate limit, as for fixtures, before anything is forwarded."""
    if state.limiter.active and key.strip():
        retry_after_s = state.limiter.take(key.strip())
        if retry_after_s is not None:
            raise RateLimited(retry_after_s)


def _header_key(request: web.Request, body: bytes) -> str:
    return presented_key(request)


def _token_key(request: web.Request, body: bytes) -> str:
    return request.query.get("token", "")


def _body_key_of(request: web.Request, body: bytes) -> str:
    return _body_key(body)


_CHARGED_KEYS: dict[str, Callable[[web.Request, bytes], str]] = {
    "definitions": _token_key,
    "flags": _body_key_of,
    "batch": _body_key_of,
}
"""The key each route charges, as its handler does against fixtures (by default the one in the
headers): the definitions poll the project key in `?token=`, `/flags` and `/batch` the one in
the body."""


def _body_key(body: bytes) -> str:
    document = _document(body)
    for field in ("api_key", "token"):
        if isinstance(document.get(field), str):
            return str(document[field])
    return ""


def _document(body: bytes) -> dict[str, Any]:
    try:
        return json_object(body, "application/json")
    except ApiError:
        return {}


def _record_capture(state: StubState, body: bytes) -> None:
    events = _document(body).get("events")
    if isinstance(events, list):
        state.svc_events.extend(event for event in events if isinstance(event, dict))


def _record_batch(state: StubState, body: bytes) -> None:
    items = _document(body).get("batch")
    if isinstance(items, list):
        state.events.extend(item for item in items if isinstance(item, dict))


def _record_target(state: StubState, body: bytes) -> None:
    document = _document(body)
    if document:
        state.targets.append(document)


_RECORDERS: dict[str, Callable[[StubState, bytes], None]] = {
    "capture": _record_capture,
    "batch": _record_batch,
    "register": _record_target,
}
"""What a forwarded request the upstream accepted leaves in the journal besides itself: the
events, vendor events and targets, as for fixtures (once, and only if accepted)."""


def upstream_session(upstream: Upstream) -> Callable[[web.Application], AsyncIterator[None]]:
    """For `app.cleanup_ctx`: the session opens with the app and closes with it."""

    async def opened(app: web.Application) -> AsyncIterator[None]:
        async with session(upstream) as client:
            app[UPSTREAM_SESSION] = client
            yield

    return opened
