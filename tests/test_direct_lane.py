"""The direct lane (stub/http/lane.py): a plain evaluate or capture answered as its request is
parsed, with the very bytes and journal entry its route gives, and everything else left to the
route.

A client cannot tell the lanes apart, which is the point; these tests tell them apart by
counting what the lane answered, and compare what a client reads from each. On an aiohttp the
door (stub/http/connection.py) turns the lane off for, the lane is offered nothing and every
comparison holds with the route on both sides: CI runs them so on the lowest aiohttp."""

from __future__ import annotations

import asyncio
import gzip
import json
import re
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from conftest import AUTH, HANG_GUARD_S, AiohttpClient
from stub import StubConfig, create_app
from stub.http.connection import door
from stub.http.lane import DirectLane

EVALUATE = "/v1/flags/evaluate"
CAPTURE = "/v1/capture"
BODY = b'{"targetingKey":"user-1","flagKeys":["checkout-v2"]}'
EVENTS = b'{"events":[{"event":"$exposure","targetingKey":"user-1","properties":{"flag":"a"}}]}'


def offered(answers: list[bool]) -> list[bool]:
    """What the lane is offered and answers, where this aiohttp has it: nothing where not."""
    return answers if door().lane else []


@pytest.fixture
def lane_answers(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether the lane answered each client request it was offered, in order (a control
    request, offered too, is never answered there)."""
    offered: list[bool] = []
    answer = DirectLane.answer

    def counted(self: DirectLane, message: Any, *args: Any) -> Any:
        result = answer(self, message, *args)
        if "/v1/" in message.path:
            offered.append(result[0] is not None)
        return result

    monkeypatch.setattr(DirectLane, "answer", counted)
    return offered


def request(
    path: str = EVALUATE,
    headers: dict[str, str] | None = None,
    body: bytes = BODY,
    version: str = "1.1",
) -> bytes:
    fields = {"Host": "stub", **AUTH, "Content-Type": "application/json", **(headers or {})}
    fields["Content-Length"] = str(len(body))
    head = "".join(f"{name}: {value}\r\n" for name, value in fields.items())
    return f"POST {path} HTTP/{version}\r\n{head}\r\n".encode() + body


async def exchange(client: TestClient[Any, Any], *parts: bytes, answers: int = 1) -> list[bytes]:
    """`parts` written in turn on one connection, a pause between them (so a body split in two
    arrives after its head was parsed); `answers` whole answers read back."""
    assert client.server.port is not None
    reader, writer = await asyncio.open_connection("127.0.0.1", client.server.port)
    try:
        for index, part in enumerate(parts):
            if index:
                await asyncio.sleep(0.05)
            writer.write(part)
            await writer.drain()
        return [await _one_answer(reader) for _ in range(answers)]
    finally:
        writer.close()


async def _one_answer(reader: asyncio.StreamReader) -> bytes:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HANG_GUARD_S)
    length = int(re.search(rb"Content-Length: (\d+)", head)[1])  # type: ignore[index]
    return head + await reader.readexactly(length)


def split(whole: bytes) -> tuple[bytes, bytes]:
    """A request in two writes: all but the last five bytes of its body, then those."""
    return whole[:-5], whole[-5:]


def same_but_for_time_and_seq(answer: bytes) -> bytes:
    answer = re.sub(rb"Date: [^\r]*", b"Date: -", answer)
    return re.sub(rb"-8000-\d{12}", b"-8000-<seq>", answer)


async def journal(client: TestClient[Any, Any], prefix: str = "") -> list[dict[str, Any]]:
    response = await client.get(f"{prefix}/_test/requests?bodies=true")
    entries: list[dict[str, Any]] = (await response.json())["requests"]
    return [_without_time_and_seq(entry) for entry in entries]


def _without_time_and_seq(entry: dict[str, Any]) -> dict[str, Any]:
    for name in ("seq", "arrivedMs", "durationMs"):
        del entry[name]
    # the two requests may fall either side of a second's boundary
    entry["answer"]["headers"].pop("Date", None)
    return dict(json.loads(same_but_for_time_and_seq(json.dumps(entry).encode())))


VARIANTS = {
    "plain": request(),
    "a trailing slash": request(EVALUATE + "/"),
    "a page on another origin": request(headers={"Origin": "http://localhost:5173"}),
    "x-api-key": request(headers={"Authorization": "", "x-api-key": "k-1"}),
    "a namespace by prefix": request("/ns/lane-1" + EVALUATE),
    "a namespace by header": request(headers={"X-Svc-Test-Namespace": "lane-2"}),
    "a first question": request(body=b'{"targetingKey":"user-9"}'),
    "capture": request(CAPTURE, body=EVENTS),
    "capture, a page on another origin": request(
        CAPTURE, body=EVENTS, headers={"Origin": "http://localhost:5173"}
    ),
    "capture, a namespace by prefix": request("/ns/lane-3" + CAPTURE, body=EVENTS),
}


class TestTheSameAnswerEitherWay:
    @pytest.mark.parametrize("sent", VARIANTS.values(), ids=VARIANTS)
    async def test_the_lane_answers_what_the_route_answers_byte_for_byte(
        self, client: TestClient[Any, Any], lane_answers: list[bool], sent: bytes
    ) -> None:
        (by_route,) = await exchange(client, *split(sent))
        (by_lane,) = await exchange(client, sent)
        assert lane_answers == offered([False, True])  # the split body was not there to answer
        assert by_lane.startswith(b"HTTP/1.1 200 OK\r\n")
        assert same_but_for_time_and_seq(by_lane) == same_but_for_time_and_seq(by_route)

    @pytest.mark.parametrize("sent", VARIANTS.values(), ids=VARIANTS)
    async def test_the_journal_holds_the_same_entry_either_way(
        self, client: TestClient[Any, Any], lane_answers: list[bool], sent: bytes
    ) -> None:
        await exchange(client, *split(sent))
        await exchange(client, sent)
        assert lane_answers == offered([False, True])
        namespace = re.search(rb"/ns/([^/]+)/|X-Svc-Test-Namespace: ([^\r]+)", sent)
        name = next((group for group in namespace.groups() if group), b"") if namespace else b""
        entries = await journal(client, f"/ns/{name.decode()}" if name else "")
        assert len(entries) == 2
        assert entries[0] == entries[1]
        assert entries[1]["route"] in ("evaluate", "capture")
        assert entries[1]["answer"]["headers"]["Content-Length"] == str(entries[1]["answerBytes"])

    async def test_capture_keeps_the_same_events_either_way(
        self, client: TestClient[Any, Any], lane_answers: list[bool]
    ) -> None:
        sent = request(CAPTURE, body=EVENTS)
        await exchange(client, *split(sent))
        await exchange(client, sent)
        assert lane_answers == offered([False, True])
        kept = (await (await client.get("/_test/events")).json())["svcEvents"]
        assert kept == [json.loads(EVENTS)["events"][0]] * 2

    async def test_request_ids_follow_the_journal_across_the_lanes(
        self, client: TestClient[Any, Any], lane_answers: list[bool]
    ) -> None:
        answers = [*await exchange(client, request()), *await exchange(client, *split(request()))]
        answers += await exchange(client, request())
        ids = [json.loads(answer.partition(b"\r\n\r\n")[2])["requestId"] for answer in answers]
        seqs = [
            entry["seq"]
            for entry in (await (await client.get("/_test/requests")).json())["requests"]
        ]
        assert [int(one.rsplit("-", 1)[1]) for one in ids] == seqs
        assert lane_answers == offered([True, False, True])


ROUTE_ONLY = {
    "a fault asked for in the query": (request(EVALUATE + "?fault=500"), 500),
    "a fault asked for in a header": (request(headers={"X-Svc-Test-Fault": "429"}), 429),
    "no key": (request(headers={"Authorization": ""}), 401),
    "a body that is not JSON": (request(body=b"{not json"), 400),
    "an empty body": (request(body=b""), 400),
    "a gzip body": (
        request(body=gzip.compress(BODY), headers={"Content-Encoding": "gzip"}),
        200,
    ),
    "HTTP/1.0": (request(version="1.0"), 200),
    "Connection: close": (request(headers={"Connection": "close"}), 200),
    "a bad namespace prefix": (request("/ns/-bad" + EVALUATE), 400),
    "a bad namespace header": (request(headers={"X-Svc-Test-Namespace": "-bad"}), 400),
    "a capture that is not a batch": (request(CAPTURE, body=b'{"events":{}}'), 400),
    "a query": (request(CAPTURE + "?x=1", body=EVENTS), 200),
    "a route that declares no direct answer": (
        request("/v1/targets/register", body=b'{"targetingKey":"u"}'),
        200,
    ),
}


class TestLeftToTheRoute:
    @pytest.mark.parametrize(("sent", "status"), ROUTE_ONLY.values(), ids=ROUTE_ONLY)
    async def test_what_only_the_route_answers_gets_the_routes_answer(
        self, client: TestClient[Any, Any], lane_answers: list[bool], sent: bytes, status: int
    ) -> None:
        (answer,) = await exchange(client, sent)
        assert answer.startswith(b"HTTP/1.")
        assert int(answer.split(b" ", 2)[1]) == status, answer
        assert lane_answers in ([], offered([False]))

    async def test_a_refused_body_reaches_the_route_and_the_journal_whole(
        self, client: TestClient[Any, Any], lane_answers: list[bool]
    ) -> None:
        (answer,) = await exchange(client, request(body=b'{"targetingKey": 7}'))
        assert b"targetingKey: expected a non-empty string, got a number" in answer
        (entry,) = await journal(client)
        assert entry["body"]["text"] == '{"targetingKey": 7}'
        assert lane_answers == offered([False])

    async def test_an_armed_fault_fires_and_the_lane_answers_once_it_is_spent(
        self, client: TestClient[Any, Any], lane_answers: list[bool]
    ) -> None:
        armed = await client.post("/_test/fault", json={"mode": "500", "ttlRequests": 1})
        assert armed.status == 200
        (first,) = await exchange(client, request())
        (second,) = await exchange(client, request())
        assert first.startswith(b"HTTP/1.1 500 ")
        assert second.startswith(b"HTTP/1.1 200 ")
        assert lane_answers == offered([False, True])

    async def test_a_misused_key_is_served_with_the_routes_warning(
        self, client: TestClient[Any, Any], lane_answers: list[bool]
    ) -> None:
        (answer,) = await exchange(client, request(headers={"Authorization": "Bearer phc_abc"}))
        assert answer.startswith(b"HTTP/1.1 200 ")
        assert b"X-Svc-Stub-Warning: an analytics-vendor key" in answer
        assert lane_answers == offered([False])

    async def test_a_body_over_the_limit_is_the_routes_413(
        self, aiohttp_client: AiohttpClient, lane_answers: list[bool]
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(max_body_bytes=len(BODY) - 1)))
        (answer,) = await exchange(client, request())
        assert answer.startswith(b"HTTP/1.1 413 ")
        assert lane_answers == offered([False])

    async def test_a_configured_key_list_refuses_others_on_the_route(
        self, aiohttp_client: AiohttpClient, lane_answers: list[bool]
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(api_keys=frozenset({"k-1"}))))
        (refused,) = await exchange(client, request())
        (served,) = await exchange(client, request(headers={"Authorization": "Bearer k-1"}))
        assert refused.startswith(b"HTTP/1.1 401 ")
        assert served.startswith(b"HTTP/1.1 200 ")
        assert lane_answers == offered([False, True])

    async def test_a_rate_limit_is_charged_on_the_route(
        self, aiohttp_client: AiohttpClient, lane_answers: list[bool]
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(rate_limit=1)))
        answers = await exchange(client, request() * 3, answers=3)
        assert [answer.split(b" ", 2)[1] for answer in answers].count(b"429") >= 1
        assert lane_answers == offered([False])  # the rest queued behind it

    async def test_bound_keys_choose_the_namespace_on_the_route(
        self, client: TestClient[Any, Any], lane_answers: list[bool]
    ) -> None:
        made = await client.post("/_test/namespaces", json={"name": "owned", "keys": ["k-9"]})
        assert made.status in (200, 201), await made.text()
        await exchange(client, request(headers={"Authorization": "Bearer k-9"}))
        (entry,) = await journal(client, "/ns/owned")
        assert entry["route"] == "evaluate"
        assert lane_answers == offered([False])


class TestOneConnection:
    async def test_pipelined_requests_are_answered_in_order_whichever_lane_takes_them(
        self, client: TestClient[Any, Any], lane_answers: list[bool]
    ) -> None:
        faulted = request(EVALUATE + "?fault=500")
        sent = request() + request() + faulted + request() + request("/v1/capture", body=b"{}")
        answers = await exchange(client, sent, answers=5)
        statuses = [int(answer.split(b" ", 2)[1]) for answer in answers]
        assert statuses == [200, 200, 500, 200, 400]
        entries = (await (await client.get("/_test/requests")).json())["requests"]
        assert [entry["status"] for entry in entries] == statuses
        assert lane_answers[:2] == offered(
            [True, True]
        )  # the lane stops at the fault: the route's turn

    async def test_a_client_that_never_reads_is_held_back_not_buffered_for(
        self, client: TestClient[Any, Any]
    ) -> None:
        """Its answers stop at what the transport holds; the route's backpressure takes over."""
        assert client.server.port is not None
        count = 20_000
        reader, writer = await asyncio.open_connection("127.0.0.1", client.server.port)
        try:
            writer.write(request() * count)
            await asyncio.sleep(1)  # the server takes what it can, then stops reading
            log = await (await client.get("/_test/requests")).json()
            assert (await client.get("/health")).status == 200
            assert len(log["requests"]) + log["dropped"] < count
            answers = [await _one_answer(reader) for _ in range(count)]
        finally:
            writer.close()
        assert all(answer.startswith(b"HTTP/1.1 200 ") for answer in answers)
        ids = [json.loads(answer.partition(b"\r\n\r\n")[2])["requestId"] for answer in answers]
        assert ids == sorted(ids)
