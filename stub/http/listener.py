"""The app on a socket: listening, and a quick stop on a signal."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import signal
from collections.abc import Callable

from aiohttp import web

from stub.http.access_log import RedactingAccessLogger
from stub.http.connection import StubRunner
from stub.process import is_running

# In-flight requests (a 10 s delay fault, say) must not hold up a stop: tests wait on it.
# aiohttp waits this long twice (for handlers to finish, then after cancelling them), so a stop
# with a request in flight takes about two of these.
SHUTDOWN_GRACE_S = 0.3
# Room for a burst of a thousand connections before the kernel starts refusing them.
BACKLOG = 1024
# How often a stub started with --stop-with looks for its process: a test run's end is noticed
# within this, and looking costs one system call.
WATCH_INTERVAL_S = 0.2


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
    stop_with: int | None = None,
) -> None:
    """Serve until SIGINT or SIGTERM, or until process `stop_with` is gone; `on_ready(port)`
    runs once the socket accepts."""
    runner = StubRunner(
        app,
        handle_signals=False,
        shutdown_timeout=SHUTDOWN_GRACE_S,
        access_log=access_log,
        access_log_class=RedactingAccessLogger,
    )
    await runner.setup()
    stopped = _stop_event()  # before on_ready: a parent may signal as soon as it hears
    watching = None if stop_with is None else asyncio.create_task(_watch(stop_with, stopped))
    listener: asyncio.Server | None = None
    try:
        assert runner.server is not None
        loop = asyncio.get_running_loop()
        try:
            listener = await loop.create_server(runner.server, host, port, backlog=BACKLOG)
        except OSError as exc:
            reason = os.strerror(exc.errno) if exc.errno else str(exc)
            hint = _IN_USE if exc.errno == errno.EADDRINUSE else ""
            raise ListenError(f"cannot listen on {host}:{port}: {reason}{hint}") from None
        on_ready(listener.sockets[0].getsockname()[1])
        await stopped.wait()
    finally:
        if watching is not None:
            watching.cancel()
        if listener is not None:
            listener.close()
        await runner.cleanup()


def _stop_event() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    return stop


async def _watch(pid: int, stop: asyncio.Event) -> None:
    """Stops the stub once process `pid` (the test run it serves) is gone, however it ended:
    a run killed outright leaves no stub behind."""
    parent = os.getppid()
    while is_running(pid) and not (pid == parent and os.getppid() != parent):
        await asyncio.sleep(WATCH_INTERVAL_S)
    stop.set()
