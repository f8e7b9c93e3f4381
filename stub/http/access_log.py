"""The debug access log: one line per request, with key-bearing query values redacted."""

from __future__ import annotations

from aiohttp.abc import AbstractAccessLogger
from aiohttp.web import BaseRequest, StreamResponse

from stub.keys import redacted, redacted_path
from stub.namespaces import PREFIX, PREFIXED
from stub.wire import SECRET_QUERY_KEYS, presented_key, request_value


class RedactingAccessLogger(AbstractAccessLogger):
    """Never logs headers (they carry keys), and hides secret query values and a key in the
    path (a client that put its key in its URL)."""

    def log(self, request: BaseRequest, response: StreamResponse, time: float) -> None:
        query = "&".join(
            f"{name}={redacted(value) if name.lower() in SECRET_QUERY_KEYS else value}"
            for name, value in request.query.items()
        )
        namespace = request_value(request, PREFIXED)  # its prefix came off before routing
        path = redacted_path(request.path, [presented_key(request)])
        path = path if namespace is None else f"{PREFIX}{namespace}{path}"
        target = f"{path}?{query}" if query else path
        self.logger.debug(
            "%s %s %s %d %.2fms",
            request.remote,
            request.method,
            target,
            response.status,
            time * 1000,
        )
