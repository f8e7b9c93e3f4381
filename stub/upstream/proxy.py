"""Proxy mode (`svc-stub --upstream URL`): every client-plane request is forwarded to the real
service and its answer relayed, with svc-stub's faults on top and everything recorded as usual.

The forwarder is the handler of every client route, so the route wrappers (serving.py) apply
faults, pick namespaces and record exactly as they do for fixtures: a fault that replaces the
answer never forwards, `delay` waits and then forwards, `truncated`, `invalid_json` and
`slow_body` damage the real answer.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.typedefs import Handler
from multidict import CIMultiDict

from stub.serving import RateLimited
from stub.state import UPSTREAMED, StubState, Upstreamed, state_of
from stub.upstream.client import Upstream, failure_reason, session
from stub.wire import ApiError, json_object, presented_key, read_body

UPSTREAM_SESSION = web.AppKey("upstream_session", aiohttp.ClientSession)

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
_NOT_FORWARDED = _HOP_BY_HOP | {"host", "content-length", "content-encoding", "expect"}
"""Besides the hop-by-hop headers: the body is forwarded as read (decompressed), and the
connection to the upstream is the session's own."""
_NOT_RELAYED = _HOP_BY_HOP | {"content-length", "content-encoding", "date", "server"}
_OWN_HEADER_PREFIXES = ("x-svc-test-", "x-svc-stub-")
"""svc-stub's own headers (faults, namespaces, warnings) are for svc-stub, never the service."""
FAULT_QUERY = ("fault", "delayMs", "status", "retryAfter")
"""A per-request fault's query parameters, taken off before forwarding."""


def forwarding(upstream: Upstream, control_token: str | None) -> Callable[[str | None], Handler]:
    """A handler factory: the forwarder of the route named so (None: an unknown path)."""

    def for_route(route: str | None) -> Handler:
        recorder = _RECORDERS.get(route or "")

        async def forward(request: web.Request) -> web.StreamResponse:
            state = state_of(request)
            body = await read_body(request)
            _charge(request, state, body)
            answer, payload = await _sent_upstream(request, upstream, control_token, body)
            if recorder is not None and 200 <= answer.status < 300:
                recorder(state, body)
            return web.Response(status=answer.status, body=payload, headers=_relayed(answer))

        return forward

    return for_route


async def _sent_upstream(
    request: web.Request, upstream: Upstream, control_token: str | None, body: bytes
) -> tuple[aiohttp.ClientResponse, bytes]:
    address = upstream.address(request.raw_path.partition("?")[0], _forwarded_query(request))
    started = time.perf_counter()
    try:
        async with request.app[UPSTREAM_SESSION].request(
            request.method,
            address,
            headers=_forwarded_headers(request, control_token),
            data=body or None,
            allow_redirects=False,
        ) as answer:
            payload = await answer.read()
    except (aiohttp.ClientError, TimeoutError) as error:
        raise ApiError(
            502,
            "UPSTREAM_UNREACHABLE",
            f"the upstream {upstream.shown} did not answer ({failure_reason(error)}): check "
            "--upstream, that the service is up, and that this machine can reach it",
        ) from None
    request[UPSTREAMED] = Upstreamed(answer.status, time.perf_counter() - started)
    return answer, payload


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
    """The query as sent, less a per-request fault's parameters."""
    if "fault" not in request.query:
        return request.query_string
    kept = [(k, v) for k, v in request.query.items() if k not in FAULT_QUERY]
    return str(request.rel_url.with_query(kept).raw_query_string)


def _relayed(answer: aiohttp.ClientResponse) -> CIMultiDict[str]:
    return CIMultiDict(
        (name, value) for name, value in answer.headers.items() if name.lower() not in _NOT_RELAYED
    )


def _charge(request: web.Request, state: StubState, body: bytes) -> None:
    """The key's rate limit, as for fixtures, before anything is forwarded."""
    if not state.limiter.active:
        return
    key = presented_key(request) or request.query.get("token", "") or _body_key(body)
    if key:
        retry_after_s = state.limiter.take(key.strip())
        if retry_after_s is not None:
            raise RateLimited(retry_after_s)


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


__all__ = ["UPSTREAM_SESSION", "forwarding", "upstream_session"]
