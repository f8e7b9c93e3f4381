"""The door to aiohttp's internals (stub/http/connection.py), and what the journal may say.

The door checks at start-up that this aiohttp has every private part svc-stub reads, on a
release the direct lane was tested on; anything else turns the lane off with one warning, and
every request then takes its route: slower, never wrong. Whichever lane answers, a request's
journal entry says 200 only when its answer was handed to the transport."""

from __future__ import annotations

import asyncio
import asyncio.selector_events
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient

from conftest import AUTH, AiohttpClient
from stub import StubConfig, create_app
from stub.http import connection, pipeline
from stub.http.connection import TESTED, door
from stub.http.lane import DirectLane
from stub.namespaces import NAMESPACES

SOCKET_TRANSPORT: Any = vars(asyncio.selector_events)["_SelectorSocketTransport"]
"""asyncio's socket transport, which every connection of an in-process stub writes through
(private to asyncio; only these tests time its writes)."""
EVALUATE = b'{"targetingKey":"user-1","flagKeys":["checkout-v2"]}'
EVENTS = b'{"events":[{"event":"$exposure","targetingKey":"user-1"}]}'


@pytest.fixture
def fresh_door() -> Iterator[None]:
    """The door checked again for this test, and again for the next: it is cached per
    process, and a test here changes what it finds."""
    door.cache_clear()
    yield
    door.cache_clear()


Serve = Callable[[], Awaitable[tuple[TestClient[Any, Any], list[str]]]]


@pytest.fixture
def serve(
    fresh_door: None, caplog: pytest.LogCaptureFixture, aiohttp_client: AiohttpClient
) -> Serve:
    """Serves a stub in process, the door checked afresh: its client, and every line about
    aiohttp the stub has warned so far."""

    async def served() -> tuple[TestClient[Any, Any], list[str]]:
        with caplog.at_level(logging.WARNING, logger="stub"):
            client = await aiohttp_client(create_app(StubConfig()))
        said = [record.getMessage() for record in caplog.records]
        return client, [line for line in said if "aiohttp" in line]

    return served


@pytest.fixture
def offered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of every request offered to the lane."""
    paths: list[str] = []
    answer = DirectLane.answer

    def counted(self: DirectLane, message: Any, *args: Any) -> Any:
        paths.append(message.path)
        return answer(self, message, *args)

    monkeypatch.setattr(DirectLane, "answer", counted)
    return paths


def post(path: str, body: bytes, *, close: bool = False) -> bytes:
    """A runtime POST as raw bytes."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: stub\r\nAuthorization: {AUTH['Authorization']}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    )
    if close:
        head += "Connection: close\r\n"
    return f"{head}\r\n".encode() + body


async def one_connection(client: TestClient[Any, Any], requests: list[bytes]) -> list[bytes]:
    """Each request in turn on one kept-alive connection, each answer read whole before the
    next is sent."""
    assert client.server.port is not None
    reader, writer = await asyncio.open_connection("127.0.0.1", client.server.port)
    answers = []
    try:
        for request in requests:
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            answers.append(head + await reader.readexactly(length))
    finally:
        writer.close()
    return answers


async def journal(client: TestClient[Any, Any]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = (await (await client.get("/_test/requests")).json())["requests"]
    return entries


class TestTheDoor:
    def test_the_lane_is_on_exactly_where_every_part_is_there_on_a_tested_release(
        self, fresh_door: None
    ) -> None:
        version = tuple(int(part) for part in aiohttp.__version__.split(".")[:3])
        found = door()
        assert found.version == aiohttp.__version__
        assert found.lane == (TESTED[0] <= version <= TESTED[1])
        assert (found.problem is None) == found.lane

    @pytest.mark.parametrize("version", ["3.14.0", "3.14.3", "3.15.0", "4.0.0a1"])
    async def test_an_aiohttp_it_was_not_tested_on_turns_the_lane_off_with_one_warning(
        self, version: str, serve: Serve, offered: list[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(aiohttp, "__version__", version)
        for needs in ("LANE_NEEDS", "PARSER_NEEDS"):  # on the lowest aiohttp, some are missing
            monkeypatch.setattr(connection, needs, ())
        client, _ = await serve()
        _, warned = await serve()  # a second app: no second warning
        assert len(warned) == 1
        assert f"aiohttp {version} is not one svc-stub's direct lane was tested on" in warned[0]
        assert "(3.14.4 to 3.14.5): the direct lane is off" in warned[0]
        await self.assert_every_answer_by_its_route(client, offered)

    async def test_a_part_the_lane_reads_missing_turns_it_off_and_is_named(
        self, serve: Serve, offered: list[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(connection, "TESTED", ((0, 0, 0), (99, 0, 0)))
        monkeypatch.setattr(connection, "LANE_NEEDS", (*connection.LANE_NEEDS, "_gone_in_3_15"))
        client, (warned,) = await serve()
        assert warned.startswith(f"aiohttp {aiohttp.__version__} lacks ")
        assert "_gone_in_3_15" in warned
        await self.assert_every_answer_by_its_route(client, offered)

    async def test_without_the_parts_its_handler_reads_connections_get_aiohttps_own(
        self, serve: Serve, offered: list[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(connection, "HANDLER_NEEDS", ("_gone_in_3_15",))
        client, (warned,) = await serve()
        assert "the direct lane and JSON parse errors are off" in warned
        await self.assert_every_answer_by_its_route(client, offered)

    @staticmethod
    async def assert_every_answer_by_its_route(
        client: TestClient[Any, Any], offered: list[str]
    ) -> None:
        """A kept-alive client gets every answer, the route gives each, and each is recorded
        once."""
        requests = [post("/v1/flags/evaluate", EVALUATE), post("/v1/capture", EVENTS)] * 3
        answers = await one_connection(client, requests)
        assert [answer.split(b"\r\n", 1)[0] for answer in answers] == [b"HTTP/1.1 200 OK"] * 6
        assert b'"decisions":[{"flagKey":"checkout-v2"' in answers[0]
        assert answers[1].endswith(b'{"ok":true,"accepted":1}')
        assert offered == []
        entries = await journal(client)
        assert [entry["status"] for entry in entries] == [200] * 6
        assert len((await (await client.get("/_test/events")).json())["svcEvents"]) == 3

    async def test_without_the_request_factory_the_stub_says_why_it_cannot_start(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(connection, "REQUEST_FACTORY", "_make_request_renamed")
        with pytest.raises(RuntimeError, match=r"aiohttp .* has no Application\._make_request"):
            create_app(StubConfig())


class TestTheLaneLeavesToTheRouteWhatItCannotSend:
    async def test_a_failure_before_the_answer_is_written_leaves_the_request_untouched(
        self, monkeypatch: pytest.MonkeyPatch, aiohttp_client: AiohttpClient
    ) -> None:
        """Whatever fails in the lane before its answer is written, the route answers the
        request as if the lane had never seen it: one answer, one entry, the event kept
        once."""

        def broken_clock() -> str:
            raise RuntimeError("a bug in the lane")

        monkeypatch.setattr("stub.http.lane.rfc822_formatted_time", broken_clock)
        client = await aiohttp_client(create_app(StubConfig()))
        (answer,) = await one_connection(client, [post("/v1/capture", EVENTS)])
        assert answer.startswith(b"HTTP/1.1 200 OK")
        assert answer.endswith(b'{"ok":true,"accepted":1}')
        (entry,) = await journal(client)
        assert (entry["route"], entry["status"]) == ("capture", 200)
        events = (await (await client.get("/_test/events")).json())["svcEvents"]
        assert len(events) == 1


HALF_CLOSED = {
    "evaluate (the lane's)": ("/v1/flags/evaluate", EVALUATE),
    "register (a route's)": ("/v1/targets/register", b'{"targetingKey":"user-1"}'),
    "an unknown path": ("/v1/flags/evaluat", EVALUATE),
}


class TestTheJournalSaysOnlyWhatWasSent:
    @pytest.mark.parametrize(("path", "body"), HALF_CLOSED.values(), ids=HALF_CLOSED.keys())
    async def test_a_client_that_half_closes_after_its_request_is_recorded_as_it_was_answered(
        self, path: str, body: bytes, client: TestClient[Any, Any]
    ) -> None:
        """A client that shuts its write side once its request is sent: whether its answer
        still reaches it depends on when the stub reads that end of the stream, but the
        journal says 200 for each that got an answer and no status for each that did not."""
        assert client.server.port is not None
        answered = 0
        for _ in range(20):
            reader, writer = await asyncio.open_connection("127.0.0.1", client.server.port)
            writer.write(post(path, body))
            writer.write_eof()
            received = await reader.read()  # to the stub's end of the stream
            writer.close()
            answered += received.startswith(b"HTTP/1.1 ")
        entries = await journal(client)
        assert len(entries) == 20
        statuses = [entry["status"] for entry in entries]
        assert len([status for status in statuses if status is not None]) == answered
        unanswered = [entry for entry in entries if entry["status"] is None]
        assert all(entry["clientGone"] for entry in unanswered)


class TestAnAnswersTimeIsReadBeforeItGoesOut:
    """A client counts a Retry-After from when it got the answer: the journal's end of a
    request (`arrivedMs + durationMs`) is read just before its bytes are handed over, so no
    client can have had them sooner, however late the stub runs again after its write (a busy
    machine's scheduler, played here by a sleep after the write)."""

    @pytest.fixture
    def written_at(self, monkeypatch: pytest.MonkeyPatch) -> list[float]:
        """When each answer's first bytes were handed to a transport."""
        written: list[float] = []
        write = SOCKET_TRANSPORT.write

        def timed(transport: Any, data: Any) -> None:
            if bytes(data[:9]) == b"HTTP/1.1 ":
                written.append(time.perf_counter())
            write(transport, data)

        monkeypatch.setattr(SOCKET_TRANSPORT, "write", timed)
        return written

    @staticmethod
    def descheduled(monkeypatch: pytest.MonkeyPatch) -> None:
        """The stub runs again only a while after each write, as when its machine is busy."""
        sent, lane_sent = pipeline._sent, DirectLane.sent

        async def routed(request: Any, response: Any) -> Any:
            answered = await sent(request, response)
            time.sleep(0.005)
            return answered

        def direct(lane: DirectLane) -> None:
            time.sleep(0.005)
            lane_sent(lane)

        monkeypatch.setattr(pipeline, "_sent", routed)
        monkeypatch.setattr(DirectLane, "sent", direct)

    @pytest.mark.parametrize(
        ("path", "body"),
        [("/v1/targets/register", b'{"targetingKey":"user-1"}'), ("/v1/flags/evaluate", EVALUATE)],
        ids=["routed", "direct"],
    )
    async def test_no_client_has_the_answer_before_the_journal_says_it_was_answered(
        self,
        path: str,
        body: bytes,
        written_at: list[float],
        monkeypatch: pytest.MonkeyPatch,
        aiohttp_client: AiohttpClient,
    ) -> None:
        self.descheduled(monkeypatch)
        app = create_app(StubConfig())
        client = await aiohttp_client(app)
        (answer,) = await one_connection(client, [post(path, body)])
        assert answer.startswith(b"HTTP/1.1 200 OK")
        (entry,) = await journal(client)
        answered_ms = entry["arrivedMs"] + entry["durationMs"]
        written_ms = (written_at[0] - app[NAMESPACES].started) * 1000
        assert answered_ms <= written_ms + 0.001  # the journal's milliseconds keep three places
