"""The door to aiohttp's internals: every private part of aiohttp svc-stub reads lives here,
and is checked once, at start-up, against the versions the suite ran on (`TESTED`).

What it holds: the connection handler (a subclass of aiohttp's, which answers in JSON what
aiohttp cannot parse, and plain evaluates the moment they are parsed: the direct lane, see
lane.py), the runner and server that give a connection that
handler, the request factory that takes a namespace prefix off before routing (target.py), and
where a request keeps the body it read.

On an aiohttp the check does not know (another version, or a part missing) the direct lane is
off, with one warning line: every request then takes its route, slower, never wrong. Without
the parts the handler itself needs, connections get aiohttp's own handler (text/plain for what
it cannot parse). Without the request factory, namespace prefixes cannot work: the stub does
not start, and says why.

The `svc-stub` command imports aiohttp's server side without its client side (`defer_client`,
stub/http/client_side.py): on a release the suite did not run on, the check runs the package's
`__init__` before the stub serves, as a plain `import aiohttp` would have.
"""

from __future__ import annotations

import functools
import itertools
import logging
import re
from http import HTTPStatus
from typing import Any, NamedTuple

import aiohttp
import orjson
from aiohttp import hdrs, web
from aiohttp.http import HttpRequestParser
from aiohttp.http_parser import RawRequestMessage
from aiohttp.web_protocol import RequestHandler, RequestPayloadError

from stub.http.client_side import complete_package
from stub.http.lane import ANSWERED_DIRECTLY, MAY_BE_DIRECT, DirectLane
from stub.http.target import prefix_aware
from stub.namespaces import NAMESPACES
from stub.packaged import install_source
from stub.wire import JSON

log = logging.getLogger("stub")
_QUOTED = re.compile(r":\s*(?:b'|b\"|bytearray\(|\n)")

TESTED = ((3, 14, 4), (3, 14, 5))
"""The aiohttp releases the direct lane was tested on, lowest and highest (CI runs both):
3.14.0 has no `message_consumed` on its parser, 3.14.1 to 3.14.3 no `_buffer_paused`. On any
other, the command's deferred client side (client_side.py) is imported before it serves."""
HANDLER_NEEDS = ("_current_request", "_messages")
"""What `ConnectionHandler` reads on every connection (a body that does not decode)."""
LANE_NEEDS = (
    "_waiter", "_loop", "_buffer_paused", "_resume_reading_for_buffer", "_parser", "_keepalive",
    "_keepalive_timeout", "_next_keepalive_close_time", "_keepalive_handle", "_process_keepalive",
)  # fmt: skip
"""What the direct lane reads of aiohttp's `RequestHandler`, besides `HANDLER_NEEDS`."""
PARSER_NEEDS = ("message_consumed",)
"""What the direct lane calls on aiohttp's request parser (C or pure Python)."""
REQUEST_FACTORY = "_make_request"
"""An application's request factory, the only code aiohttp runs on a request before routing
it. aiohttp offers no public way to rewrite a path before routing: a sub-application's prefix
is static; a middleware sees the request after routing."""
READ_BYTES = "_read_bytes"
"""Where `BaseRequest.read()` keeps the body it read (since aiohttp 1.0)."""


class Door(NamedTuple):
    """What this aiohttp lets svc-stub use, found once at start-up."""

    version: str
    handler: bool
    """`ConnectionHandler` has what it reads."""
    lane: bool
    """The direct lane has what it reads, on a version it was tested on."""
    problem: str | None
    """The one line to warn with, when either is off."""


@functools.cache
def door() -> Door:
    """The check, once per process; its warning is logged once, too."""
    version = aiohttp.__version__
    missing = [name for name in HANDLER_NEEDS if not hasattr(RequestHandler, name)]
    handler = not missing
    missing += [name for name in LANE_NEEDS if not hasattr(RequestHandler, name)]
    missing += [f"parser.{name}" for name in PARSER_NEEDS if not hasattr(HttpRequestParser, name)]
    tested = TESTED[0] <= _release(version) <= TESTED[1]
    if not tested:  # its server side may need what its `__init__` does: run it now
        complete_package()
    problem = None
    if missing or not tested:
        low, high = (".".join(map(str, release)) for release in TESTED)
        if missing:
            why = f"lacks {', '.join(missing)}, which svc-stub reads"
        else:
            why = f"is not one svc-stub's direct lane was tested on ({low} to {high})"
        off = (
            "the direct lane is off" if handler else "the direct lane and JSON parse errors are off"
        )
        problem = (
            f"aiohttp {version} {why}: {off}; every request takes its route (slower, never wrong)"
        )
        log.warning("%s", problem)
    return Door(version, handler, handler and not missing and tested, problem)


def _release(version: str) -> tuple[int, ...]:
    """`3.14.5` -> (3, 14, 5); a pre-release or local suffix counts as its release."""
    return tuple(
        int("".join(itertools.takewhile(str.isdigit, part)) or 0) for part in version.split(".")[:3]
    )


def install_prefix_aware_factory(app: web.Application) -> None:
    """Every request the app makes loses its `/ns/{name}` prefix before it is routed (see
    target.py); object.__setattr__: aiohttp's debug mode warns on any attribute set on an
    application."""
    factory = getattr(app, REQUEST_FACTORY, None)
    if factory is None:
        raise RuntimeError(
            f"aiohttp {aiohttp.__version__} has no Application.{REQUEST_FACTORY}, which namespace "
            f"prefixes need: install the aiohttp svc-stub declares (pip install {install_source()})"
        )
    object.__setattr__(app, REQUEST_FACTORY, prefix_aware(factory))


def body_read(request: web.BaseRequest) -> bytes | None:
    """The body a request read (None: never read), without reading it."""
    body: bytes | None = getattr(request, READ_BYTES, None)
    return body


class StubRunner(web.AppRunner):
    """aiohttp's runner, its server making `ConnectionHandler`s that know the app's direct
    lane; `access_log` as aiohttp's (the lane is off while it logs)."""

    def __init__(
        self, app: web.Application, *, access_log: logging.Logger | None = None, **kwargs: Any
    ) -> None:
        super().__init__(app, access_log=access_log, **kwargs)
        self._logs_access = access_log is not None

    async def setup(self) -> None:
        await super().setup()
        assert self.server is not None
        if not door().handler:  # aiohttp's own handler: no part of ours it lacks is read
            return
        direct = _direct_lane(self.app, self._logs_access) if door().lane else None
        handler = type(
            "StubConnectionHandler", (ConnectionHandler,), {"__slots__": (), "direct": direct}
        )
        self.server.__class__ = type("StubServer", (StubServer,), {"handler": handler})


class StubServer(web.Server):
    """aiohttp builds each connection's handler in `Server.__call__` and offers no hook for
    its class: a handler is given `handler` as its class once made (the layouts are the
    same)."""

    handler: type[ConnectionHandler]

    def __call__(self) -> RequestHandler:
        made = super().__call__()
        made.__class__ = self.handler
        return made


def _direct_lane(app: web.Application, logs_access: bool) -> DirectLane | None:
    """The app's direct lane; none for an app with no route to answer directly (one that is
    not a stub's, or a stub in proxy mode, where the service answers) or with the access log
    on (it logs what aiohttp's task handles)."""
    routes = app.get(ANSWERED_DIRECTLY)
    if not routes or logs_access:
        return None
    namespaces = app[NAMESPACES]
    return DirectLane(namespaces, namespaces.config.max_body_bytes, routes)


class ConnectionHandler(RequestHandler):
    """aiohttp's connection handler, answering unparseable requests in JSON, not text/plain,
    and plain evaluates and captures the moment they are parsed (`direct`, see lane.py)."""

    __slots__ = ()  # the same layout, so a handler can become one (see StubServer)
    direct: DirectLane | None = None
    """Set on the subclass each app is served with; None: every request goes to its route."""

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if request.writer.output_size > 0:  # as aiohttp does: too late for another answer
            raise ConnectionError("response already started; cannot send an error answer")
        problem = _describe(exc, message, status)
        log.debug("unparseable request from %s: %s", request.remote, problem)
        code = "INTERNAL" if status == 500 else f"HTTP_{status}"
        body = {"ok": False, "error": code, "message": f"request: {problem}"}
        response = web.Response(status=status, body=orjson.dumps(body), content_type=JSON)
        response.force_close()
        return response

    def data_received(self, data: bytes) -> None:
        """Requests parsed from `data` are answered by the direct lane, in order, while it can
        and while this connection is idle (its task waiting for a request, nothing queued, its
        transport taking writes); the rest go to aiohttp's task as usual."""
        lane = self.direct
        if lane is None:
            self._parsed(data)
            return
        waiter = self._waiter
        if waiter is None or waiter.done() or self._messages:
            self._parsed(data)
            return
        if not data.startswith(MAY_BE_DIRECT) or self.writing_paused:
            self._parsed(data)
            return
        self._waiter = None  # parsing must not wake the task for what the lane answers
        try:
            self._parsed(data)
            while self._answered_directly(lane) and self._buffer_paused:
                self._parsed(b"")  # what the parser held back while its queue was full
        finally:
            self._waiter = waiter
        if self._messages:
            waiter.set_result(None)
        elif self._buffer_paused:  # as aiohttp's task once it drained the queue
            self._resume_reading_for_buffer()

    def _answered_directly(self, lane: DirectLane) -> bool:
        """What aiohttp's task does for each request it takes from the queue, the lane
        answering; whether it answered every one (and at least one)."""
        messages = self._messages
        transport = self.transport
        if transport is None:  # the connection is gone: the route records its requests so
            return False
        answered = False
        while messages and not self.writing_paused:
            message, payload = messages[0]
            if not isinstance(message, RawRequestMessage):
                return False
            answer, payload = lane.answer(message, payload, self)
            if answer is None:
                messages[0] = (message, payload)
                return False
            messages.popleft()
            if self._parser is not None:
                self._parser.message_consumed()
            transport.write(answer)
            lane.sent()  # handed to the transport: now kept and recorded
            self._kept_alive()
            answered = True
        return answered and not messages

    def _kept_alive(self) -> None:
        """As aiohttp's task after an answer kept alive: the idle timer starts again."""
        self._keepalive = True
        close_time = self._loop.time() + self._keepalive_timeout
        self._next_keepalive_close_time = close_time
        if self._keepalive_handle is None:
            self._keepalive_handle = self._loop.call_at(close_time, self._process_keepalive)

    def _parsed(self, data: bytes) -> None:
        """aiohttp's C parser reports a body whose encoding fails at its very end (a bad
        deflate stream) as a new parse error, and leaves the body of the request already being
        handled open: its handler, or a fault draining it, would wait until the client gave up.
        End that body with the error instead, so the request is answered and the connection
        then closes (see wire.read_body). It reads two of the handler's own attributes, which
        aiohttp declares in its slots; a test pins the behaviour."""
        handling = self._current_request
        queued = len(self._messages)
        super().data_received(data)
        if handling is None or len(self._messages) <= queued:
            return
        message, _ = self._messages[-1]
        payload = handling.content
        still_open = payload.exception() is None and not payload.is_eof()
        if not isinstance(message, RawRequestMessage) and still_open:
            payload.set_exception(RequestPayloadError("the body does not decode"))

    async def finish_response(
        self, request: web.BaseRequest, resp: web.StreamResponse, start_time: float | None
    ) -> tuple[web.StreamResponse, bool]:
        """The router's own refusals (a CONNECT target no route can match) come as aiohttp's
        text/plain HTTPException; answer them in JSON like everything else. A CONNECT's
        connection then closes: the stub is no proxy, and aiohttp's pure-Python parser would
        read it as a tunnel and keep it open for ten seconds of lingering."""
        if isinstance(resp, web.HTTPException) and resp.status >= 400:
            phrase = HTTPStatus(resp.status).phrase
            body = {"ok": False, "error": f"HTTP_{resp.status}", "message": f"request: {phrase}"}
            answer = web.Response(status=resp.status, body=orjson.dumps(body), content_type=JSON)
            if "Allow" in resp.headers:
                answer.headers["Allow"] = resp.headers["Allow"]
            resp = answer
        finished = await super().finish_response(request, resp, start_time)
        if request.method == hdrs.METH_CONNECT:
            self.force_close()
        return finished


def _describe(exc: BaseException | None, message: str | None, status: int) -> str:
    """aiohttp's words for what was wrong, without the request bytes it quotes after them (an
    oversized header could be an Authorization header, and no key is ever echoed)."""
    said = str(getattr(exc, "message", None) or message or HTTPStatus(status).phrase)
    return _QUOTED.split(said, maxsplit=1)[0].strip().rstrip(".:")[:200]
