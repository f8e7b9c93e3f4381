"""The fault vocabulary: one small function per fault, named by what the client observes.

Counts, schedules and probability are not here: `arming.py` decides *whether* a fault fires,
once, centrally; a function here only decides *how* it looks on the wire.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Awaitable, Callable, Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Any, NamedTuple

import orjson
from aiohttp import web
from aiohttp.typedefs import Handler

from stub.wire import (
    JSON,
    ApiError,
    ClientGone,
    ErrorBody,
    encoded_response,
    json_response,
    read_body,
    request_id,
)


class FaultMode(StrEnum):
    DELAY = "delay"
    UNAUTHORIZED = "401"
    RATE_LIMITED = "429"
    SERVER_ERROR = "500"
    INVALID_JSON = "invalid_json"
    TRUNCATED = "truncated"
    QUOTA_LIMITED = "quota_limited"
    STATUS = "status"
    RESET = "reset"
    EMPTY_RESPONSE = "empty_response"
    SLOW_BODY = "slow_body"
    HANG = "hang"


DEFAULT_DELAY_MS = 10_000  # longer than every client's 3000 ms timeout, so `delay` times out
DEFAULT_RETRY_AFTER_S = 1
RETRY_LATER = frozenset({429, 503})
"""The statuses that tell a client when to come back: a `status` fault of either says when in
`Retry-After`, as the `429` mode does."""


class FaultParameter(StrEnum):
    """What an arming may give a fault besides its mode, by its name on the wire."""

    DELAY_MS = "delayMs"
    STATUS = "status"
    BODY = "body"
    RETRY_AFTER = "retryAfter"


_OWN_ANSWER = (FaultParameter.STATUS, FaultParameter.BODY)
"""What a mode that makes its own answer lets an arming replace: its status and its body."""

MODE_PARAMETERS: Mapping[FaultMode, tuple[FaultParameter, ...]] = MappingProxyType(
    {
        FaultMode.DELAY: (FaultParameter.DELAY_MS,),
        FaultMode.UNAUTHORIZED: _OWN_ANSWER,
        FaultMode.RATE_LIMITED: (*_OWN_ANSWER, FaultParameter.RETRY_AFTER),
        FaultMode.SERVER_ERROR: _OWN_ANSWER,
        FaultMode.INVALID_JSON: _OWN_ANSWER,
        FaultMode.TRUNCATED: _OWN_ANSWER,
        FaultMode.QUOTA_LIMITED: _OWN_ANSWER,
        FaultMode.STATUS: (*_OWN_ANSWER, FaultParameter.RETRY_AFTER),
        FaultMode.RESET: (),
        FaultMode.EMPTY_RESPONSE: (),
        FaultMode.SLOW_BODY: (FaultParameter.DELAY_MS,),
        FaultMode.HANG: (),
    }
)
"""The parameters each mode's function below reads, and so the only ones the record of an
armed fault carries: an arming may give any parameter to any mode, but a 500 listed with
`delayMs` 10000 reads as a delayed 500. `status` carries `retryAfter` only when its status
is 429 or 503 (`FaultSpec.retry_after`)."""


class FaultSpec(NamedTuple):
    """One fault and its parameters; `body` None means the mode's own body."""

    mode: FaultMode
    delay_ms: int = DEFAULT_DELAY_MS
    status: int | None = None
    body: Any = None
    retry_after_s: int = DEFAULT_RETRY_AFTER_S

    def to_json(self) -> dict[str, Any]:
        """The mode and the parameters it uses (`status` and `body` null: the mode's own)."""
        values = {
            FaultParameter.DELAY_MS: self.delay_ms,
            FaultParameter.STATUS: self.status,
            FaultParameter.BODY: self.body,
            FaultParameter.RETRY_AFTER: self.retry_after(),
        }
        described: dict[str, Any] = {"mode": self.mode.value}
        for name in MODE_PARAMETERS[self.mode]:
            if name is not FaultParameter.RETRY_AFTER or values[name] is not None:
                described[name.value] = values[name]  # orjson takes only a plain str as a key
        return described

    def retry_after(self) -> int | None:
        """The `Retry-After` its answer carries, in seconds (None: it carries none)."""
        if FaultParameter.RETRY_AFTER not in MODE_PARAMETERS[self.mode]:
            return None
        if self.mode is FaultMode.STATUS and self.status not in RETRY_LATER:
            return None
        return self.retry_after_s


class Hit(NamedTuple):
    """The request a fault fires on: its route name and the handler that would answer it."""

    request: web.Request
    route: str
    """Its fault selector: `evaluate`, `flags`, `projects`, ..."""
    serve: Handler
    error_body: ErrorBody
    """The envelope of the route's plane, for the errors a fault answers with."""
    flag_keys: tuple[str, ...] = ()
    """Every served flag key: what evaluate answers for when the request names none."""
    sent: Callable[[web.StreamResponse, bytes], None] = lambda answer, body: None
    """A fault that writes its own answer calls this before the first byte (with the answer
    and the body it will send), so the request is recorded before the client can have any
    of it."""
    forwarded: bool = False
    """`serve` relays the real service (proxy mode): `truncated` and `invalid_json` damage its
    answer rather than answer with their own."""


FaultFunction = Callable[[Hit, FaultSpec], Awaitable[web.StreamResponse | None]]
"""Answers the request, or returns None when no HTTP answer was (or will be) given."""

# A body a client must not be able to parse once cut short; long enough to cut in half.
_TRUNCATED_BODY = orjson.dumps(
    {"ok": True, "note": "svc-stub cut this answer short on purpose: a client must not parse it"}
)
# How soon a waiting fault notices that its client left (aiohttp does not cancel the handler).
_DISCONNECT_POLL_S = 0.25


async def delay(hit: Hit, spec: FaultSpec) -> web.StreamResponse | None:
    # The body first, as the route would read it (kept for it: a refusal too), so that the
    # journal has what the client sent even if it gives up before the answer.
    await _drain(hit.request)
    if not await _wait_while_connected(hit.request, spec.delay_ms / 1000):
        # it gave up: recorded as gone, unanswered (serving now would record what it re-sends)
        raise ClientGone("while the delay held its answer")
    return await hit.serve(hit.request)


async def unauthorized(hit: Hit, spec: FaultSpec) -> web.StreamResponse | None:
    await _drain(hit.request)
    return _error(
        hit, spec, 401, "UNAUTHORIZED", type="authentication_error", code="invalid_api_key"
    )


async def rate_limited(hit: Hit, spec: FaultSpec) -> web.StreamResponse | None:
    await _drain(hit.request)
    response = _error(hit, spec, 429, "RATE_LIMITED", type="throttled_error", code="throttled")
    response.headers["Retry-After"] = str(spec.retry_after_s)
    return response


async def server_error(hit: Hit, spec: FaultSpec) -> web.StreamResponse | None:
    await _drain(hit.request)
    return _error(hit, spec, 500, "INTERNAL")


async def status(hit: Hit, spec: FaultSpec) -> web.StreamResponse | None:
    await _drain(hit.request)
    code = spec.status or 500
    response = _error(hit, spec, code, f"HTTP_{code}")
    retry_after = spec.retry_after()
    if retry_after is not None:
        response.headers["Retry-After"] = str(retry_after)
    return response


async def invalid_json(hit: Hit, spec: FaultSpec) -> web.StreamResponse | None:
    """`{not-json`, or in proxy mode the real answer with that in front of it."""
    if hit.forwarded and spec.body is None:
        real = await _real_answer(hit)
        body = b"{not-json " + real.body if isinstance(real.body, bytes) else b"{not-json"
        spoilt = web.Response(body=body, status=spec.status or real.status, content_type=JSON)
        spoilt.headers.extend(_kept_headers(real))
        return spoilt
    await _drain(hit.request)
    body_text = spec.body if isinstance(spec.body, str) else "{not-json"
    return web.Response(body=body_text.encode(), status=spec.status or 200, content_type=JSON)


async def truncated(hit: Hit, spec: FaultSpec) -> web.StreamResponse | None:
    """Status line, headers with the full Content-Length, about half the body, a clean close;
    in proxy mode, of the real answer."""
    status = spec.status or 200
    body = _body_bytes(spec)
    kept: list[tuple[str, str]] = []
    if body is None and hit.forwarded:
        real = await _real_answer(hit)
        if isinstance(real.body, bytes) and real.body:
            body, status, kept = real.body, spec.status or real.status, _kept_headers(real)
    else:
        await _drain(hit.request)
    body = body or _TRUNCATED_BODY
    response = _streamed(status, len(body))
    response.headers.extend(kept)
    half = body[: max(1, len(body) // 2)]
    hit.sent(response, half)
    await response.prepare(hit.request)
    await response.write(half)
    _transport(hit.request).close()  # FIN once the half is flushed; never a reset
    return response


async def quota_limited(hit: Hit, spec: FaultSpec) -> web.StreamResponse | None:
    """What the real service says per route family when the project is over its quota."""
    if hit.route == "evaluate":
        return await _quota_limited_decisions(hit)
    await _drain(hit.request)
    if hit.route == "flags":
        return json_response(
            {
                "flags": {},
                "quotaLimited": ["feature_flags"],
                "errorsWhileComputingFlags": False,
                "requestId": request_id(hit.request),
            }
        )
    # Definitions polls get 402 from the real vendor. For capture, batch and register a 402 is
    # an answer a client can tell apart from success: fireweave keeps its batch and re-sends
    # it, posthog-python drops it (it retries only 408, 429 and 5xx). The management plane
    # has no quota protocol of its own: a 402 in its envelope.
    return _error(hit, spec, 402, "QUOTA_LIMITED")


async def reset(hit: Hit, spec: FaultSpec) -> web.StreamResponse | None:
    """A TCP reset and no response at all."""
    await _drain(hit.request)
    transport = _transport(hit.request)
    sock = transport.get_extra_info("socket")
    if sock is not None:  # linger 0 turns the close into an RST
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
    return None


async def empty_response(hit: Hit, spec: FaultSpec) -> web.StreamResponse | None:
    """The connection closes cleanly before a single byte of response."""
    await _drain(hit.request)
    _transport(hit.request).close()
    return None


async def slow_body(hit: Hit, spec: FaultSpec) -> web.StreamResponse | None:
    """The normal answer, its body dribbled out over `delayMs`."""
    normal = await hit.serve(hit.request)
    body = normal.body if isinstance(normal, web.Response) else None
    if not isinstance(body, bytes) or not body:
        return normal
    response = _streamed(normal.status, len(body))
    response.headers.update((k, v) for k, v in normal.headers.items() if k.lower() == "retry-after")
    pieces = min(len(body), 20)
    step = -(-len(body) // pieces)
    pause = spec.delay_ms / 1000 / pieces
    hit.sent(response, body)
    try:
        await response.prepare(hit.request)
        for start in range(0, len(body), step):
            await asyncio.sleep(pause)
            await response.write(body[start : start + step])
    except ConnectionError:  # the client gave up part way: that is the point of the fault
        return None
    return response


async def hang(hit: Hit, spec: FaultSpec) -> web.StreamResponse | None:
    """No answer until the client gives up or the stub stops."""
    await _drain(hit.request)
    await _wait_while_connected(hit.request, float("inf"))
    raise ClientGone("while the stub hung")  # the only way out but the stub's stop


FAULTS: Mapping[FaultMode, FaultFunction] = MappingProxyType(
    {
        FaultMode.DELAY: delay,
        FaultMode.UNAUTHORIZED: unauthorized,
        FaultMode.RATE_LIMITED: rate_limited,
        FaultMode.SERVER_ERROR: server_error,
        FaultMode.INVALID_JSON: invalid_json,
        FaultMode.TRUNCATED: truncated,
        FaultMode.QUOTA_LIMITED: quota_limited,
        FaultMode.STATUS: status,
        FaultMode.RESET: reset,
        FaultMode.EMPTY_RESPONSE: empty_response,
        FaultMode.SLOW_BODY: slow_body,
        FaultMode.HANG: hang,
    }
)


async def _quota_limited_decisions(hit: Hit) -> web.Response:
    """200, every requested key not found, `quotaLimited: true` (a boolean, as clients need)."""
    try:
        document = orjson.loads(await read_body(hit.request))
    except ClientGone:
        raise  # nobody left to answer: recorded as gone
    except Exception:  # the fault fires before the body is validated; a bad one means all keys
        document = None
    keys = document.get("flagKeys") if isinstance(document, dict) else None
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
        keys = list(hit.flag_keys)
    decisions = [{"flagKey": k, "found": False, "value": None, "reason": "ERROR"} for k in keys]
    return encoded_response(
        orjson.dumps(
            {"decisions": decisions, "requestId": request_id(hit.request), "quotaLimited": True}
        )
    )


def _error(
    hit: Hit, spec: FaultSpec, default_status: int, error: str, **vendor: str
) -> web.Response:
    """An error answer in the plane's envelope (the runtime one adds the vendor's fields),
    unless the armed fault gives its own body."""
    body = _body_bytes(spec)
    if body is None:
        message = f"svc-stub fault: {spec.mode.value}"
        body = orjson.dumps(hit.error_body(error, message, vendor))
    return encoded_response(body, status=spec.status or default_status)


def _body_bytes(spec: FaultSpec) -> bytes | None:
    """An armed body: a string is sent as it is, anything else as JSON."""
    if spec.body is None:
        return None
    return spec.body.encode() if isinstance(spec.body, str) else orjson.dumps(spec.body)


def _streamed(status_code: int, length: int) -> web.StreamResponse:
    response = web.StreamResponse(status=status_code)
    response.content_type = JSON
    response.content_length = length
    return response


def _kept_headers(real: web.Response) -> list[tuple[str, str]]:
    """The real answer's headers that a damaged copy of it keeps (ETag, Retry-After, ...)."""
    framing = ("content-type", "content-length", "transfer-encoding")
    return [(k, v) for k, v in real.headers.items() if k.lower() not in framing]


async def _real_answer(hit: Hit) -> web.Response:
    """What the route would answer (in proxy mode: the upstream's), to damage."""
    answer = await hit.serve(hit.request)
    assert isinstance(answer, web.Response)
    return answer


async def _drain(request: web.Request) -> None:
    """Read the request body so the connection ends cleanly rather than with a reset."""
    try:
        await read_body(request)
    except ClientGone:
        raise  # nobody left to answer: recorded as gone, not as the fault's answer
    except ApiError:
        pass  # too large or undecodable: the fault answers anyway


def _transport(request: web.Request) -> asyncio.Transport:
    transport = request.transport
    if transport is None:
        raise ConnectionResetError("the client went away")
    assert isinstance(transport, asyncio.Transport)
    return transport


async def _wait_while_connected(request: web.Request, seconds: float) -> bool:
    """Sleep up to `seconds`; False as soon as the client is gone."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not _client_gone(request):
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0:
            return True
        await asyncio.sleep(min(remaining, _DISCONNECT_POLL_S))
    return False


def _client_gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()
