"""The direct lane: a plain request answered the moment it is parsed, for the routes that
declare how (`RouteDeclaration.direct`: evaluate and capture), when nothing but the plain route
would answer it.

aiohttp hands every request to a task of its own, with a request object, routing and a
response object: about a third of an evaluate's instructions, more than everything svc-stub
does for it. A plain request (no fault asked for or armed, an accepted key that needs no
warning, no rate limit, a body in hand that the route accepts) is answered from the fixtures
and the body alone, so the connection's handler answers it as soon as the parser hands it
over, with the bytes aiohttp would have sent. It takes the same stages as the route: the
target (target.py), the namespace (`Namespaces`), admission (admission.py) and the journal
entry (exchange.py), once the answer was handed to the transport. Anything else (or a
connection already busy with a request), and anything that raises before the answer is
written, goes to the route untouched, which the lane's tests hold byte for byte against it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

from aiohttp import hdrs, web
from aiohttp.base_protocol import BaseProtocol
from aiohttp.helpers import rfc822_formatted_time
from aiohttp.http import SERVER_SOFTWARE, HttpVersion11
from aiohttp.http_parser import RawRequestMessage
from aiohttp.streams import StreamReader

from stub.cors import ORIGIN, READABLE_BY_ANY_PAGE
from stub.faults.arming import FAULT_HEADER
from stub.http import exchange
from stub.http.admission import admit
from stub.http.exchange import SentHeaders
from stub.http.route import RouteDeclaration
from stub.http.target import unprefixed
from stub.namespaces import PREFIX, Namespaces
from stub.state import Json, StubState
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


_Sending = tuple[
    StubState, int, int, RawRequestMessage, RouteDeclaration, float, float, bytes, bytes,
    bytes, list[Json] | None,
]  # fmt: skip
"""An answer the lane made and handed over to be written: its namespace and the journal's
generation, the request's number, message, route, arrival and the moment before its answer
went out, its body, the answer's head and body, and what it keeps once written. A plain
tuple: one is made per lane request."""


class DirectLane:
    """Answers the plain requests of one app's `routes` (by path; see the module)."""

    __slots__ = ("_max_body_bytes", "_namespaces", "_routes", "_sending")

    def __init__(
        self, namespaces: Namespaces, max_body_bytes: int, routes: Mapping[str, RouteDeclaration]
    ) -> None:
        self._namespaces = namespaces
        self._max_body_bytes = max_body_bytes
        self._routes = routes
        self._sending: _Sending | None = None
        """What the last answer made keeps and records, once it is written (`sent`)."""

    def answer(
        self, message: RawRequestMessage, payload: StreamReader, protocol: BaseProtocol
    ) -> tuple[bytes | None, StreamReader]:
        """The whole answer to write, or None for the route to answer it; and the payload the
        route then reads (`payload`, or its body given back to a new one when the lane read it
        before leaving it to the route). Once the answer is written, `sent()`."""
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
        for name in _LEFT_TO_THE_ROUTE:  # a loop, not any(): no generator per request
            if name in headers:
                return None, payload
        namespaces = self._namespaces
        try:  # a bound key may choose it, or the route must say why there is none: the route's
            state = None if namespaces.keyed else namespaces.resolve(prefixed, headers)
        except ApiError:
            return None, payload
        if state is None or state.faults or state.limiter.active:
            return None, payload
        try:  # no limiter to charge: admitting changes nothing, whatever it decides
            if admit(state, presented_key_in(headers), "runtime") is not None:
                return None, payload  # a warning to say: the route says it
        except ApiError:
            return None, payload
        raw = payload.read_nowait(-1)
        try:
            answer_of, kept = route.direct(state, raw)
            seq = state.next_seq()
            answer = answer_of(seq)
            head = _STATUS_LINE
            if ORIGIN in headers:
                head += _READABLE_BY_ANY_PAGE
            head += _SENT % (len(answer), rfc822_formatted_time().encode())
        except Exception:  # a 400, or a bug: the route answers it, in its own words
            return None, _given_back(raw, protocol)
        ended = time.perf_counter()  # before a byte goes: no client has it sooner
        self._sending = (
            state, state.generation, seq, message, route, started, ended, raw, head, answer, kept,
        )  # fmt: skip
        return head + answer, payload

    def sent(self) -> None:
        """The answer `answer` made last went to the transport: what its request keeps is
        kept, and it is recorded, as the route records it."""
        sending = self._sending
        assert sending is not None
        self._sending = None
        state, generation, seq, message, route, started, ended, raw, head, answer, kept = sending
        if kept:
            route.kept_in(state).extend(kept)
        exchange.record(
            state, generation, seq, hdrs.METH_POST, message.path, route.name, started, ended,
            200, None, None, message.raw_headers, False, None, raw, SentHeaders(head), answer,
        )  # fmt: skip

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


def _given_back(raw: bytes, protocol: BaseProtocol) -> StreamReader:
    """A body the lane read, in a stream of its own for the route to read."""
    payload = StreamReader(protocol, READ_BUFFER_BYTES, loop=asyncio.get_running_loop())
    payload.feed_data(raw)
    payload.feed_eof()
    return payload
