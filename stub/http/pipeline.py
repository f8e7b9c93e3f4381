"""The pipeline every routed request walks: its namespace, a fault, admission and the answer
(composed once per route: `admission.admitting`), the error envelope, a key's warning, CORS
for a page, the answer sent, and then its journal entry, once (`exchange.record`).

Wrapped around each route once, when the app is built, rather than as aiohttp middleware:
the per-request middleware chain cost a fifth of the CPU of an evaluate request.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from aiohttp import web
from aiohttp.http import HttpVersion11
from aiohttp.typedefs import Handler

from stub.cors import ORIGIN, PREFLIGHT, allow_any_origin
from stub.faults.arming import Fired, request_fault
from stub.faults.modes import FAULTS, Hit
from stub.http import exchange
from stub.http.admission import RateLimited
from stub.http.connection import body_read
from stub.namespaces import PREFIXED, Namespaces
from stub.state import REQUEST_STATE, UPSTREAMED, StubState
from stub.wire import (
    REQUEST_SEQ,
    ApiError,
    ClientGone,
    ErrorBody,
    body_broken,
    request_value,
    runtime_error_body,
)

log = logging.getLogger("stub")

INTERNAL = ApiError(500, "INTERNAL", "unexpected error in the stub (see its log)")


def client_route(
    namespaces: Namespaces,
    handler: Handler,
    *,
    name: str | None,
    selector: str | None = None,
    error_body: ErrorBody = runtime_error_body,
    forwarded: bool = False,
    cors: bool = False,
) -> Handler:
    """A client route of any plane, or an unknown path (`name` None), served in the request's
    namespace: faults fire first, then `handler` (the route's answer behind its admission:
    admission.admitting), errors become JSON in the plane's envelope, the answer is sent, and
    the request is recorded once, under `name`. `selector` is what arming calls the route
    (`projects` for `projects.create`); by default the name itself. `forwarded`: the handler
    relays the real service's answer (proxy mode), which the damaging faults then damage.
    `cors`: every answer to a request from a page (one with an `Origin`) is readable by that
    page, whatever gave it."""
    selector = selector or name

    async def route(request: web.Request) -> web.StreamResponse:
        try:
            state = namespaces.resolve(
                request_value(request, PREFIXED), request.headers, request
            ) or await namespaces.resolve_by_body(request)
        except ApiError as error:  # no namespace to record it in: the log says it
            log.warning("%s %s: %s", request.method, request.path, error.message)
            refused = error.to_response(error_body)
            if cors and ORIGIN in request.headers:
                allow_any_origin(refused.headers)
            return refused
        request[REQUEST_STATE] = state
        return await served(request, state)

    async def served(request: web.Request, state: StubState) -> web.StreamResponse:
        seq = request[REQUEST_SEQ] = state.next_seq()
        generation = state.generation
        started = time.perf_counter()
        turn = _Turn()
        state.in_flight += 1  # no bound evicts a namespace while it serves a request
        try:
            response = await answered(request, state, turn, generation, started)
            if state.key_warnings:
                turn.warning = state.key_warnings.pop(seq, None)
            if turn.warning is not None:
                _warn(request, response, turn.warning)
            if cors and ORIGIN in request.headers:
                _readable_by_page(response)
            if turn.status is not None and not turn.recorded:
                turn.ended = time.perf_counter()  # before a byte goes: no client has it sooner
                turn.sent = await _sent(request, response)
                turn.gone = turn.sent is None
            return response
        finally:  # also when the client went away mid-request; never into the next test's log
            state.in_flight -= 1
            if turn.warning is None and state.key_warnings:  # cancelled before it was said
                turn.warning = state.key_warnings.pop(seq, None)
            if not turn.recorded:
                sent = turn.sent
                status = None if sent is None else turn.status
                ended = time.perf_counter() if sent is None else turn.ended
                _record(
                    state, generation, request, name, started, ended, status, turn.fired,
                    turn.warning, turn.gone, sent,
                )  # fmt: skip

    async def answered(
        request: web.Request, state: StubState, turn: _Turn, generation: int, started: float
    ) -> web.StreamResponse:
        """The answer: a fault's, the handler's, or an error's in the plane's envelope; what
        happened on the way goes into `turn`."""
        try:
            fired = turn.fired = _fault_for(request, state, selector)
            if fired is None or fired.spec is None or selector is None:
                response = await handler(request)
            else:

                def sending(answer: web.StreamResponse, body: bytes) -> None:
                    """A fault writing its own answer: recorded before its first byte."""
                    if cors and ORIGIN in request.headers:
                        allow_any_origin(answer.headers)
                    if not turn.recorded:
                        turn.recorded = True
                        _record(
                            state, generation, request, name, started, time.perf_counter(),
                            answer.status, fired, answer=answer, answer_body=body,
                        )  # fmt: skip

                flags = tuple(state.served.fixtures.flags)
                hit = Hit(request, selector, handler, error_body, flags, sending, forwarded)
                response = await _fault(hit, fired)
            turn.status = None if isinstance(response, _NoAnswer) else response.status
            if body_broken(request):  # a fault answered before noticing: the stream is lost
                response.force_close()
            return response
        except ClientGone as error:
            turn.gone = True
            log.info("%s %s: %s (recorded, not answered)", request.method, request.path, error)
            return error.to_response(error_body)  # for aiohttp to drop: nobody is there
        except ApiError as error:
            turn.status = error.status
            if isinstance(error, RateLimited):
                turn.fired = error.fired
            return error.to_response(error_body)
        except Exception:
            turn.status = INTERNAL.status
            log.exception("unexpected error on %s %s", request.method, request.path)
            return INTERNAL.to_response(error_body)

    return route


@dataclass(slots=True)
class _Turn:
    """What happened to one routed request, for its journal entry."""

    fired: Fired | None = None
    status: int | None = None
    """The answer's status; None: there is none to send (a fault dealt with the connection,
    or the client went away)."""
    warning: str | None = None
    gone: bool = False
    sent: web.StreamResponse | None = None
    """The answer handed to the transport; None: it was not."""
    ended: float = 0.0
    """`time.perf_counter()` just before the answer was sent."""
    recorded: bool = False
    """A fault writing its own answer recorded the request before its first byte."""


def preflight_route(
    namespaces: Namespaces, answer: Callable[[web.Request], web.Response]
) -> Handler:
    """A browser's preflight: answered whatever its namespace (an evicted one's 410 must reach
    the page with the request that follows), recorded in it as `preflight` where it can tell
    which, and never faulted, charged to a key or forwarded: it is the browser's, not the
    client's."""

    async def route(request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        response = answer(request)
        try:
            state = namespaces.resolve_preflight(request)
        except ApiError:
            return response
        if state is None:
            return response
        generation = state.generation
        request[REQUEST_SEQ] = state.next_seq()
        ended = time.perf_counter()  # before a byte goes: no client has it sooner
        sent = await _sent(request, response)
        status = None if sent is None else sent.status
        _record(
            state, generation, request, PREFLIGHT, started, ended, status, None, None,
            sent is None, sent,
        )  # fmt: skip
        return response

    return route


async def _sent(request: web.Request, response: web.StreamResponse) -> web.StreamResponse | None:
    """`response`, sent now rather than by aiohttp once the handler returns, so that what the
    journal records was handed to the transport; None when the client is gone and it could not
    be (aiohttp then finds it sent, or its connection closed, and sends nothing more)."""
    if response.prepared:  # a fault's own, already on its way
        return response
    try:
        await response.prepare(request)
        await response.write_eof()
    except ConnectionError:
        return None
    return response


def _readable_by_page(response: web.StreamResponse) -> None:
    """The answer to a page's request, readable by that page (a prepared one is a fault's
    own, which `sending` marked before its first byte)."""
    if not response.prepared:
        allow_any_origin(response.headers)


def _record(
    state: StubState,
    generation: int,
    request: web.Request,
    name: str | None,
    started: float,
    ended: float,
    status: int | None,
    fired: Fired | None,
    warning: str | None = None,
    gone: bool = False,
    answer: web.StreamResponse | None = None,
    answer_body: bytes | None = None,
) -> None:
    """A routed request's journal entry. `answer`: what was sent (None: nothing), its body
    `answer_body` if it is streamed, else its own; its headers are the very mapping aiohttp
    sent."""
    answer_headers = None
    if answer is not None:
        answer_headers = answer.headers
        if answer_body is None and isinstance(answer, web.Response):
            kept = answer.body
            answer_body = kept if type(kept) is bytes else None  # not a streamed payload
    exchange.record(
        state, generation, request[REQUEST_SEQ], request.method, request.raw_path, name,
        started, ended, status, fired, warning, request.raw_headers, gone,
        request_value(request, UPSTREAMED), body_read(request), answer_headers, answer_body,
    )  # fmt: skip


WARNING_HEADER = "X-Svc-Stub-Warning"


def _warn(request: web.Request, response: web.StreamResponse | None, warning: str) -> None:
    """Served anyway: say so on the answer and in the log, in words (never the key)."""
    log.warning(
        "%s %s: %s (served; --strict-keys refuses it)", request.method, request.path, warning
    )
    if response is not None and not response.prepared:
        response.headers[WARNING_HEADER] = warning


def in_namespace(namespaces: Namespaces, handler: Handler, *, creates: bool = True) -> Handler:
    """A control route that acts on the namespace the request names (prefix or header),
    made on first use; or, not `creates`, only one that exists (to watch it)."""

    async def route(request: web.Request) -> web.StreamResponse:
        prefixed = request_value(request, PREFIXED)
        state = namespaces.resolve(prefixed, request.headers, create=creates)
        assert state is not None  # keys never choose a control request's: it names one
        request[REQUEST_STATE] = state
        state.in_flight += 1  # a long-poll keeps its namespace from eviction
        try:
            return await handler(request)
        finally:
            state.in_flight -= 1

    return route


def control_route(handler: Handler) -> Handler:
    """A control-plane route: errors become JSON; nothing is recorded or faulted; no answer
    is kept by a browser's cache (a page that kept a 410 would never see its namespace made
    again)."""

    async def route(request: web.Request) -> web.StreamResponse:
        response = await _answered(request)
        if not response.prepared:
            response.headers.setdefault("Cache-Control", "no-store")
        return response

    async def _answered(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except ClientGone as error:
            log.info("%s %s: %s (not answered)", request.method, request.path, error)
            return error.to_response()
        except ApiError as error:
            return error.to_response()
        except Exception:
            log.exception("unexpected error on %s %s", request.method, request.path)
            return INTERNAL.to_response()

    return route


def guarded(token: str, handler: Handler) -> Handler:
    """Off loopback, `/_test/*` answers only to `Authorization: Bearer <control token>`."""
    expected = f"Bearer {token}".encode()

    async def route(request: web.Request) -> web.StreamResponse:
        presented = request.headers.get("Authorization", "").encode()
        if not hmac.compare_digest(presented, expected):
            raise ApiError(
                401, "UNAUTHORIZED", "control routes need 'Authorization: Bearer <control token>'"
            )
        return await handler(request)

    return route


def unmatched(
    allowed: Callable[[str], Iterable[str]], closest: Callable[[str], str | None]
) -> Handler:
    """Every path and method no route claims: a JSON 404 (naming the route it most resembles,
    if one is close), or a 405 that names what is allowed."""

    async def route(request: web.Request) -> web.StreamResponse:
        methods = sorted(allowed(request.path))
        if methods:
            allow = ", ".join(methods)
            message = f"{request.method} is not allowed on {request.path} (allowed: {allow})"
            raise ApiError(405, "METHOD_NOT_ALLOWED", message, {"Allow": allow})
        message = f"no route {request.method} {request.path}"
        bare = request.path.rstrip("/")
        if bare != request.path and bare and any(allowed(bare)):
            message += f": {bare} is served without the trailing slash (an id left empty?)"
        elif "{" in request.path or "}" in request.path:
            message += ": no segment holds '{' or '}' (a placeholder left unfilled?)"
        elif (near := closest(request.path)) is not None:
            message += f": did you mean {near}?"
        raise ApiError(404, "NOT_FOUND", message)

    return route


async def expect_continue(request: web.Request) -> None:
    """`Expect: 100-continue` is honoured as aiohttp does; any other expectation is ignored
    (aiohttp answers it with a text/plain 417, and a non-ASCII one with a 500)."""
    asks = request.headers.get("Expect", "").lower() == "100-continue"
    if asks and request.version == HttpVersion11:
        await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        request.writer.output_size = 0  # the answer proper has not started


class _NoAnswer(web.Response):
    """What a handler returns when a fault already dealt with the connection."""


def _fault_for(request: web.Request, state: StubState, selector: str | None) -> Fired | None:
    """Header > query > armed; unknown paths are never faulted."""
    if selector is None:
        return None
    fired = request_fault(request)
    if fired is None and state.faults:
        fired = state.faults.take(selector)
    return fired


async def _fault(hit: Hit, fired: Fired) -> web.StreamResponse:
    assert fired.spec is not None
    response = await FAULTS[fired.spec.mode](hit, fired.spec)
    # None: the connection is gone; aiohttp's attempt to send this fails quietly
    return _NoAnswer() if response is None else response
