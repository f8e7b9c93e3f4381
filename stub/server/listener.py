"""The app on a socket: listening, a quick stop on a signal, and JSON even for requests that
aiohttp cannot parse (a 64 KB header, an 8 KB request line), which never reach a route."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import re
import signal
from collections.abc import Callable
from http import HTTPStatus

import orjson
from aiohttp import web
from aiohttp.http_parser import RawRequestMessage
from aiohttp.web_protocol import RequestHandler, RequestPayloadError

from stub.server.access_log import RedactingAccessLogger
from stub.wire import JSON

# In-flight requests (a 10 s delay fault, say) must not hold up a stop: tests wait on it.
# aiohttp waits this long twice (for handlers to finish, then after cancelling them), so a stop
# with a request in flight takes about two of these.
SHUTDOWN_GRACE_S = 0.3
log = logging.getLogger("stub")
_QUOTED = re.compile(r":\s*(?:b'|b\"|bytearray\(|\n)")
# Room for a burst of a thousand connections before the kernel starts refusing them.
BACKLOG = 1024


_IN_USE = (
    "; another process holds the port: pick a free one with --port N, or --port 0 for any "
    "(the ready line names it)"
)


class ListenError(Exception):
    """The socket could not be bound (port in use, address not available)."""


async def serve(
    app: web.Application,
    host: str,
    port: int,
    *,
    on_ready: Callable[[int], None],
    access_log: logging.Logger | None = None,
) -> None:
    """Serve until SIGINT or SIGTERM; `on_ready(port)` runs once the socket accepts."""
    runner = web.AppRunner(
        app,
        handle_signals=False,
        shutdown_timeout=SHUTDOWN_GRACE_S,
        access_log=access_log,
        access_log_class=RedactingAccessLogger,
    )
    await runner.setup()
    stopped = _stop_event()  # before on_ready: a parent may signal as soon as it hears
    listener: asyncio.Server | None = None
    try:
        assert runner.server is not None
        loop = asyncio.get_running_loop()
        try:
            listener = await loop.create_server(
                _json_parse_errors(runner.server), host, port, backlog=BACKLOG
            )
        except OSError as exc:
            reason = os.strerror(exc.errno) if exc.errno else str(exc)
            hint = _IN_USE if exc.errno == errno.EADDRINUSE else ""
            raise ListenError(f"cannot listen on {host}:{port}: {reason}{hint}") from None
        on_ready(listener.sockets[0].getsockname()[1])
        await stopped.wait()
    finally:
        if listener is not None:
            listener.close()
        await runner.cleanup()


class _JsonErrorHandler(RequestHandler):
    """aiohttp's connection handler, answering unparseable requests in JSON, not text/plain."""

    __slots__ = ()  # the same layout, so a handler can become one (see _json_parse_errors)

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
        text/plain HTTPException; answer them in JSON like everything else."""
        if isinstance(resp, web.HTTPException) and resp.status >= 400:
            phrase = HTTPStatus(resp.status).phrase
            body = {"ok": False, "error": f"HTTP_{resp.status}", "message": f"request: {phrase}"}
            answer = web.Response(status=resp.status, body=orjson.dumps(body), content_type=JSON)
            if "Allow" in resp.headers:
                answer.headers["Allow"] = resp.headers["Allow"]
            resp = answer
        return await super().finish_response(request, resp, start_time)


def _describe(exc: BaseException | None, message: str | None, status: int) -> str:
    """aiohttp's words for what was wrong, without the request bytes it quotes after them (an
    oversized header could be an Authorization header, and no key is ever echoed)."""
    said = str(getattr(exc, "message", None) or message or HTTPStatus(status).phrase)
    return _QUOTED.split(said, maxsplit=1)[0].strip().rstrip(".:")[:200]


def _json_parse_errors(server: web.Server) -> Callable[[], RequestHandler]:
    """aiohttp builds each connection's handler in `Server.__call__` and offers no hook for
    the class; a handler is given the subclass's class once made (the layouts are the same)."""

    def handler() -> RequestHandler:
        made = server()
        made.__class__ = _JsonErrorHandler
        return made

    return handler


def _stop_event() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    return stop
