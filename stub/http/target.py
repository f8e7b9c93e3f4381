"""The request's target before routing: a `/ns/{name}` prefix taken off its path, so routing,
faults, recording and every handler see the path a client without namespaces sends, and the
name kept (under `PREFIXED`) for the namespace resolver. The same for both lanes: the fast
lane calls `unprefixed`, the routed one gets it from `prefix_aware` (installed by the door,
connection.py)."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.http_parser import RawRequestMessage
from aiohttp.streams import StreamReader
from aiohttp.web_protocol import RequestHandler
from yarl import URL

from stub.namespaces import PREFIX, PREFIXED, is_name

RequestFactory = Callable[..., web.Request]


def prefix_aware(make_request: RequestFactory) -> RequestFactory:
    """Wrap an application's request factory so `/ns/{name}/rest` becomes a request for
    `/rest` that remembers `name` (under PREFIXED): routing, faults, recording and every
    handler then see the path a client without namespaces sends. A bad name is left in the
    path, for the route that explains the rule."""

    def make(
        message: RawRequestMessage,
        payload: StreamReader,
        protocol: RequestHandler,
        writer: AbstractStreamWriter,
        task: Any,
        _cls: type[web.Request] = web.Request,
    ) -> web.Request:
        name = None
        if PREFIX in message.path:  # "in": an absolute-form target starts with its scheme
            name, message = unprefixed(message)
        request = make_request(message, payload, protocol, writer, task, _cls)
        if name is not None:
            request[PREFIXED] = name
        return request

    return make


def unprefixed(message: RawRequestMessage) -> tuple[str | None, RawRequestMessage]:
    """The namespace a request's `/ns/{name}` prefix names, and the request without it; (None,
    the request) when it has none or a bad one."""
    url = message.url
    if not url.raw_path.startswith(PREFIX):
        return None, message
    segment, slash, rest = url.raw_path[len(PREFIX) :].partition("/")
    name = urllib.parse.unquote(segment)
    if "/" in name or not is_name(name):
        return None, message
    path = slash + rest or "/"
    query = url.raw_query_string
    if url.absolute:  # `GET http://host/ns/t-1/health`: keep where it was sent
        stripped = URL.build(
            scheme=url.scheme,
            authority=url.raw_authority,
            path=path,
            query_string=query,
            encoded=True,
        )
        target = str(stripped)
    else:
        stripped = URL.build(path=path, query_string=query, encoded=True)
        target = f"{path}?{query}" if query else path
    return name, message._replace(path=target, url=stripped)
