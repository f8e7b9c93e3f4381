"""What happens around every handler: request recording, JSON errors, the control token."""

from __future__ import annotations

import hmac
import logging
import time
from dataclasses import dataclass
from http import HTTPStatus
from typing import Literal

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from stub.arming import Fired, request_fault
from stub.faults import FAULTS, Hit
from stub.http import REQUEST_SEQ, ApiError, json_response, redacted_query
from stub.state import STATE

log = logging.getLogger("stub")

Plane = Literal["runtime", "vendor", "control"]


@dataclass(frozen=True, slots=True)
class RoutePlace:
    """Which plane a path belongs to and the route name that fault selectors use."""

    plane: Plane
    name: str


ROUTE_PLACES = web.AppKey("route_places", dict[str, RoutePlace])
FIRED = web.RequestKey("fired", Fired)
"""The fault decision for a request, when there was one: its provenance in `/_test/requests`."""
UNANSWERED = web.RequestKey("unanswered", bool)
"""Set when a fault gave no HTTP answer (reset, empty response, hang, a client that left)."""

_ERROR_CODES = {
    400: "BAD_REQUEST",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "PAYLOAD_TOO_LARGE",
}


@web.middleware
async def record_requests(request: web.Request, handler: Handler) -> web.StreamResponse:
    """One `/_test/requests` entry per runtime, vendor or unknown-path request; never secrets."""
    place = request.app[ROUTE_PLACES].get(request.path)
    if (place is not None and place.plane == "control") or request.path.startswith("/_test/"):
        return await handler(request)  # the control plane (its id routes too) is not recorded
    state = request.app[STATE]
    seq = request[REQUEST_SEQ] = state.next_seq()
    generation = state.generation
    started = time.perf_counter()
    status: int | None = None
    try:
        response = await handler(request)
        status = None if request.get(UNANSWERED) else response.status
        return response
    finally:  # also when the client went away mid-request: status stays null then
        fired = request.get(FIRED)
        if state.generation == generation:
            state.requests.append(
                {
                    "seq": seq,
                    "method": request.method,
                    "path": request.path,
                    "query": redacted_query(request),
                    "route": place.name if place else None,
                    "status": status,
                    "fault": fired.to_json() if fired else None,
                    "durationMs": round((time.perf_counter() - started) * 1000, 3),
                }
            )


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every error is JSON: ours, aiohttp's own 404/405/413, and anything unexpected."""
    try:
        return await handler(request)
    except ApiError as exc:
        return exc.to_response()
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return _http_error(request, exc)
    except Exception:
        log.exception("unexpected error on %s %s", request.method, request.path)
        return ApiError(500, "INTERNAL", "unexpected error in the stub (see its log)").to_response()


@web.middleware
async def inject_faults(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Before auth and body parsing: the request's own fault (header > query), else an armed one."""
    place = request.app[ROUTE_PLACES].get(request.path)
    if place is None or place.plane == "control":
        return await handler(request)
    state = request.app[STATE]
    fired = request_fault(request)
    if fired is None and state.faults:
        fired = state.faults.take(place.name)
    if fired is None:
        return await handler(request)
    request[FIRED] = fired
    if fired.spec is None:  # an explicit `none`, or a sequence step that lets one through
        return await handler(request)
    hit = Hit(request, place.name, handler, tuple(state.served.fixtures.flags))
    response = await FAULTS[fired.spec.mode](hit, fired.spec)
    if response is None:
        request[UNANSWERED] = True
        return web.Response()  # never reaches the client: its connection is already gone
    return response


def control_guard(token: str) -> Middleware:
    """Off loopback, `/_test/*` answers only to `Authorization: Bearer <control token>`."""
    expected = f"Bearer {token}".encode()

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path.startswith("/_test/"):
            presented = request.headers.get("Authorization", "").encode()
            if not hmac.compare_digest(presented, expected):
                raise ApiError(
                    401,
                    "UNAUTHORIZED",
                    "control routes need 'Authorization: Bearer <control token>'",
                )
        return await handler(request)

    return guard


def _http_error(request: web.Request, exc: web.HTTPException) -> web.Response:
    if exc.status == 404:
        message = f"no route {request.method} {request.path}"
    elif exc.status == 405:
        allowed = exc.headers.get("Allow", "")
        message = f"{request.method} is not allowed on {request.path} (allowed: {allowed})"
    else:
        message = HTTPStatus(exc.status).phrase
    code = _ERROR_CODES.get(exc.status, HTTPStatus(exc.status).name)
    headers = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
    return json_response(
        {"ok": False, "error": code, "message": message}, status=exc.status, headers=headers
    )
