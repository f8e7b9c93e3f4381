"""The direct lane: a plain request answered the moment it is parsed, for the routes that
declare how (`RouteDeclaration.direct`: evaluate and capture), when nothing but the plain route
would answer it.

aiohttp hands every request to a task of its own, with a request object, routing and a
response object: about a third of an evaluate's instructions, more than everything svc-stub
does for it. A plain request (no fault asked for or armed, an accepted key that needs no
warning, no rate limit, a body in hand that the route accepts) is answered from the fixtures
and the body alone, so the connection's handler answers it as soon as the parser hands it
over, with the bytes aiohttp would have sent, and records it as its route does. Anything else
(or a connection already busy with a request) goes the usual way, which the lane's tests hold
byte for byte against it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Mapping

from aiohttp import HttpVersion11, hdrs, web
from aiohttp.base_protocol import BaseProtocol
from aiohttp.helpers import rfc822_formatted_time
from aiohttp.http import SERVER_SOFTWARE
from aiohttp.http_parser import RawRequestMessage
from aiohttp.streams import StreamReader

from stub.cors import ORIGIN, READABLE_BY_ANY_PAGE
from stub.faults.arming import FAULT_HEADER
from stub.http.pipeline import admits_quietly
from stub.http.route import RouteDeclaration
from stub.namespaces import PREFIX, Namespaces, named_in, unprefixed
from stub.state import RequestRecord, StubState, bounded_headers
from stub.wire import JSON, ApiError, presented_key_in

ANSWERED_DIRECTLY = web.AppKey("answered_directly", dict[str, RouteDeclaration])
"""The paths (every spelling served) of an app's runtime routes that declare a direct answer;
set by the app, read by the runner that serves it."""
MAY_BE_DIRECT = (b"POST /v1/", b"POST " + PREFIX.encode())
"""How the bytes of a request the lane may answer start: others go straight to aiohttp (a
prefix compared is cheaper than a request parsed twice)."""
_LEFT_TO_THE_ROUTE = (FAULT_HEADER, hdrs.EXPECT, hdrs.CONTENT_ENCODING, hdrs.TRANSFER_ENCODING)
"""Headers whose request the route answers: a fault, `Expect`, a body to decode or unchunk."""
READ_BUFFER_BYTES = 2**16
"""aiohttp's default read buffer, which its parser gives each request's payload."""
_STATUS_LINE = b"HTTP/1.1 200 OK\r\nContent-Type: " + JSON.encode() + b"\r\n"
_READABLE_BY_ANY_PAGE = "".join(
    f"{name}: {value}\r\n" for name, value in READABLE_BY_ANY_PAGE.items()
).encode()
"""`cors.allow_any_origin`'s headers, as aiohttp writes them, in its place."""
_SENT = b"Content-Length: %d\r\nDate: %b\r\nServer: " + SERVER_SOFTWARE.encode() + b"\r\n\r\n"


class DirectLane:
    """Answers the plain requests of one app's `routes` (by path; see the module)."""

    __slots__ = ("_max_body_bytes", "_namespaces", "_routes")

    def __init__(
        self, namespaces: Namespaces, max_body_bytes: int, routes: Mapping[str, RouteDeclaration]
    ) -> None:
        self._namespaces = namespaces
        self._max_body_bytes = max_body_bytes
        self._routes = routes

    def answer(
        self, message: RawRequestMessage, payload: StreamReader, protocol: BaseProtocol
    ) -> tuple[bytes | None, StreamReader]:
        """The whole answer to send, the request recorded, or None for the route to answer it;
        and the payload the route then reads (`payload`, or its body given back to a new one
        when the lane read it before leaving it to the route)."""
        if message.method != hdrs.METH_POST:
            return None, payload
        prefixed = None
        if message.path.startswith(PREFIX):
            prefixed, message = unprefixed(message)
            if prefixed is None:  # a bad prefix: the route explains it
                return None, payload
        route = self._routes.get(message.path)  # with a query, it is none of them
        if route is None or route.direct is None or not self._plain(message, payload):
            return None, payload
        started = time.perf_counter()
        headers = message.headers
        if any(name in headers for name in _LEFT_TO_THE_ROUTE):
            return None, payload
        state = self._state(prefixed, headers)
        if state is None or state.faults:
            return None, payload
        if not admits_quietly(state, presented_key_in(headers), "runtime"):
            return None, payload
        raw = payload.read_nowait(-1)
        try:
            answer_to = route.direct(state, raw)
        except Exception:  # a 400, or a bug: the route answers it, in its own words
            return None, _given_back(raw, protocol)
        seq = state.next_seq()
        body = answer_to(seq)
        head = _STATUS_LINE
        if ORIGIN in headers:
            head += _READABLE_BY_ANY_PAGE
        head += _SENT % (len(body), rfc822_formatted_time().encode())
        record = RequestRecord(  # by position, as serving._record builds it
            seq,
            hdrs.METH_POST,
            message.path,
            route.name,
            200,
            None,
            started,
            time.perf_counter() - started,
            None,
            bounded_headers(message.raw_headers),
            False,
            None,
            raw,
            SentHeaders(head),
            body,
            len(raw) + len(body),
        )
        state.requests.append(record)
        return head + body, payload

    def _plain(self, message: RawRequestMessage, payload: StreamReader) -> bool:
        """HTTP/1.1 kept alive, its body all here, undamaged and within --max-body-bytes."""
        return (
            message.version == HttpVersion11
            and not message.should_close
            and not message.upgrade
            and message.compression is None
            and payload.is_eof()
            and payload.exception() is None
            and payload.total_bytes <= self._max_body_bytes
        )

    def _state(self, prefixed: str | None, headers: Mapping[str, str]) -> StubState | None:
        """The request's namespace as `Namespaces.pick` finds it; None where the route must
        say why there is none (a bad name, an evicted one) or a bound key may choose it."""
        namespaces = self._namespaces
        try:
            name = named_in(prefixed, headers)
            if name is not None:
                return namespaces.named(name)
        except ApiError:
            return None
        return None if namespaces.keyed else namespaces.default


def _given_back(raw: bytes, protocol: BaseProtocol) -> StreamReader:
    """A body the lane read, in a stream of its own for the route to read."""
    payload = StreamReader(protocol, READ_BUFFER_BYTES, loop=asyncio.get_running_loop())
    payload.feed_data(raw)
    payload.feed_eof()
    return payload


class SentHeaders(Mapping[str, str]):
    """An answer's headers as the journal reads them, from the very bytes sent: read when a
    test or the inspector asks, not on the request's way out."""

    __slots__ = ("_head",)

    def __init__(self, head: bytes) -> None:
        self._head = head

    def _pairs(self) -> Iterator[tuple[str, str]]:
        for line in self._head.decode("latin-1").split("\r\n")[1:]:
            if line:
                name, _, value = line.partition(": ")
                yield name, value

    def __getitem__(self, name: str) -> str:
        for one, value in self._pairs():
            if one.lower() == name.lower():
                return value
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self._pairs())

    def __len__(self) -> int:
        return sum(1 for _ in self._pairs())
