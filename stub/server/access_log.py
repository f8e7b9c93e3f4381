"""The debug access log: one line per request, with key-bearing query values redacted."""

from __future__ import annotations

from aiohttp.abc import AbstractAccessLogger
from aiohttp.web import BaseRequest, StreamResponse

from stub.wire import REDACTED, SECRET_QUERY_KEYS


class RedactingAccessLogger(AbstractAccessLogger):
    """Never logs headers (they carry keys), and hides secret query values."""

    def log(self, request: BaseRequest, response: StreamResponse, time: float) -> None:
        query = "&".join(
            f"{name}={REDACTED if name.lower() in SECRET_QUERY_KEYS else value}"
            for name, value in request.query.items()
        )
        target = f"{request.path}?{query}" if query else request.path
        self.logger.debug(
            "%s %s %s %d %.2fms",
            request.remote,
            request.method,
            target,
            response.status,
            time * 1000,
        )
