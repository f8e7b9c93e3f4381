"""One stub shared by many suites, some of them buggy: no fixture document takes it down, no
bound evicts a namespace in use, a deleted namespace's waits end at once, and a client that
abandons its upload is recorded as gone, not as an error of the stub's."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import json
import select
import socket
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from conftest import (
    AUTH,
    HANG_GUARD_S,
    AiohttpClient,
    SpawnedStub,
    one_line,
    run_stub,
    spawn_stub,
)
from stub import StubConfig, create_app
from stub.client import StubClient
from stub.fixtures import collection_paused
from stub.namespaces import NAMESPACES
from stub.wire import MAX_WAIT_MS

Client = TestClient[Any, Any]
YAML = {"Content-Type": "application/yaml"}
CAPTURE = {"events": [{"type": "signal", "targetingKey": "u1", "name": "n"}]}
EVALUATE = {"targetingKey": "u1", "flagKeys": ["new-checkout"]}
DELAYED = {**AUTH, "X-Svc-Test-Fault": "delay", "X-Svc-Test-Delay-Ms": "300"}


def alias_document(values: int, uses: int, flags: int, value: str = "1") -> str:
    """`values` values under one anchor, a list that uses it `uses` times under another, and
    `flags` flags whose value holds that list: a few KB that aliases expand many times over."""
    base = f"&a [{', '.join([value] * values)}]"
    wide = f"&b [{', '.join(['*a'] * uses)}]"
    first = f"  f0: {{type: object, value: {{base: {base}, w: {wide}}}}}\n"
    rows = "".join(f"  f{n}: {{type: object, value: {{w: *b}}}}\n" for n in range(1, flags))
    return f"flags:\n{first}{rows}"


LARGE_DOCUMENT = (
    "flags:\n"
    + "".join(
        f"  flag-{n}: {{type: object, value: {{a: [1, 2, 3, 'text {n}'], b: {{c: x}}}}}}\n"
        for n in range(20_000)
    )
).encode()
"""About 1.5 MB of YAML: a second or more of parsing."""

ALIAS_BOMB = alias_document(values=1000, uses=1000, flags=40)
"""The document of the report: 8 KB that once grew the stub by 320 MB and answered every
evaluate with 80 MB."""


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as refused:
        with refused:
            return refused.code, json.load(refused)


async def json_of(client: Client, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
    async with client.request(method, path, **kwargs) as answer:
        return answer.status, await answer.json()


def held_in_flight(client: Client, namespace: str) -> asyncio.Future[tuple[int, Any]]:
    """A capture in `namespace` that the stub holds for 300 ms (a delay fault)."""
    path = f"/ns/{namespace}/v1/capture"
    return asyncio.ensure_future(json_of(client, "POST", path, json=CAPTURE, headers=DELAYED))


async def serving(client: Client, namespace: str) -> None:
    """Returns once the in-process stub is serving a request in `namespace`, or holding a
    long poll of it: what a test of a namespace in use waits for, rather than a sleep a busy
    machine can outlast. `HANG_GUARD_S` guards a request that never arrives; it is not a
    speed budget."""
    namespaces = client.app[NAMESPACES]
    deadline = time.monotonic() + HANG_GUARD_S
    while (state := namespaces._named.get(namespace)) is None or not (
        state.in_flight or state.recorded._waiters
    ):
        assert time.monotonic() < deadline, f"nothing in flight in {namespace!r}"
        await asyncio.sleep(0.01)


LONG_WAIT_MS = MAX_WAIT_MS
"""A long poll's `waitMs`, the longest the stub takes, that no test waits out."""
LONG_POLL_GUARD_S = LONG_WAIT_MS / 1000 / 2
"""How long a test awaits a long poll that something it did must end: a guard against a
hang (a poll that waits out its `waitMs`), well below that wait and not a speed budget."""


async def names(client: Client) -> list[str]:
    _, listed = await json_of(client, "GET", "/_test/namespaces")
    return [namespace["name"] for namespace in listed["namespaces"]]


class TestFixtureDocumentBounds:
    def test_the_reported_document_is_8_kb_that_expands_past_the_bound(self) -> None:
        assert 8_000 < len(ALIAS_BOMB) < 9_000

    @pytest.mark.parametrize("path", ["/_test/fixtures", "/_test/management", "/_test/namespaces"])
    async def test_every_route_that_takes_a_document_refuses_it_with_a_413(
        self, client: Client, path: str
    ) -> None:
        status, body = await json_of(client, "POST", path, data=ALIAS_BOMB, headers=YAML)
        assert (status, body["error"]) == (413, "FIXTURES_TOO_LARGE")
        assert body["message"].startswith("body: its aliases expand it to about ")
        assert "over the bound of 136,464 (16 times the text, at least 64 KiB)" in body["message"]
        assert "write the repeated values out" in body["message"]
        _, served = await json_of(client, "GET", "/_test/fixtures")
        assert "new-checkout" in served["flags"]  # nothing changed
        assert await names(client) == ["default"]

    def test_a_file_is_refused_at_start_in_one_line(self, tmp_path: Path) -> None:
        path = tmp_path / "bomb.yaml"
        path.write_text(ALIAS_BOMB, encoding="utf-8")
        line = one_line(run_stub("--port", "0", "--fixtures", str(path)))
        assert line.startswith(f"svc-stub: error: {path}: its aliases expand it to about ")

    def test_a_watched_file_is_not_reloaded_and_the_reason_is_served(self, tmp_path: Path) -> None:
        path = tmp_path / "flags.yaml"
        path.write_text("flags: {kept: {type: boolean, value: true}}", encoding="utf-8")
        with spawn_stub("--fixtures", str(path), "--watch", read_log=False) as stub:
            path.write_text(ALIAS_BOMB, encoding="utf-8")
            deadline = time.monotonic() + HANG_GUARD_S  # guards a hang, not speed
            while (served := stub.get("/_test/fixtures"))["reloadError"] is None:
                assert time.monotonic() < deadline, f"no reload error within {HANG_GUARD_S} s"
                time.sleep(0.05)
            assert "its aliases expand it" in served["reloadError"]
            assert served["flags"] == ["kept"]

    def test_a_document_costs_what_its_text_does(self) -> None:
        """The bomb is refused for next to nothing; a document aliased up to the bound is
        served, and costs a few MB."""
        within = alias_document(values=20, uses=20, flags=9, value='"xxxxxxx"')
        assert len(within) < 10_000
        with spawn_stub(read_log=False) as stub:
            pid = stub.process.pid
            before = rss_mb(pid)
            status, body = post(stub.url + "/_test/fixtures", ALIAS_BOMB.encode(), YAML)
            assert (status, body["error"]) == (413, "FIXTURES_TOO_LARGE")
            assert rss_mb(pid) - before < 5
            status, body = post(stub.url + "/_test/fixtures", within.encode(), YAML)
            assert (status, len(body["flags"])) == (200, 9)
            status, answer = post(stub.url + "/v1/flags/evaluate", b'{"targetingKey": "u"}', AUTH)
            assert (status, len(answer["decisions"])) == (200, 9)
            assert 30_000 < len(json.dumps(answer)) < 70_000
            assert rss_mb(pid) - before < 8

    def test_a_value_too_deep_to_answer_is_a_400_and_a_file_one_line(self, tmp_path: Path) -> None:
        deep = "flags: {f: {type: object, value: " + "[" * 254 + "]" * 254 + "}}"
        with spawn_stub(read_log=False) as stub:
            status, body = post(stub.url + "/_test/fixtures", deep.encode(), YAML)
            assert (status, body["error"]) == (400, "INVALID_FIXTURES")
            assert "nests too deep to be written inside an answer" in body["message"]
            assert stub.get("/health") == {"ok": True}
        path = tmp_path / "deep.yaml"
        path.write_text(deep, encoding="utf-8")
        line = one_line(run_stub("--port", "0", "--fixtures", str(path)))
        assert "nests too deep" in line

    def test_a_stop_does_not_wait_for_documents_being_parsed(self) -> None:
        """Eight large documents, parsed one at a time, would take a dozen seconds or more;
        the stop comes before they are all parsed, however loaded the machine."""
        # The claim: the stub exits before it has answered every upload, which it would have had it
        # waited for them. HANG_GUARD_S guards a stop that hangs; it is not a speed budget.
        with (
            spawn_stub("--max-body-bytes", str(4 << 20), read_log=False) as stub,
            contextlib.ExitStack() as uploads,
        ):
            connections = [
                uploads.enter_context(open_upload(stub.url, "/_test/fixtures", LARGE_DOCUMENT))
                for _ in range(8)
            ]
            time.sleep(0.3)  # the stub is reading them (if not yet, this proves less)
            stub.process.terminate()
            assert stub.process.wait(timeout=HANG_GUARD_S) == 0
            answered = [connection for connection in connections if answer_of(connection)]
            assert len(answered) < len(connections), "the stop waited for every document"

    def test_other_requests_are_answered_while_a_large_document_is_parsed(self) -> None:
        document = LARGE_DOCUMENT
        with spawn_stub("--max-body-bytes", str(4 << 20), read_log=False) as stub:
            with open_upload(stub.url, "/_test/fixtures", document) as upload:
                assert stub.get("/health") == {"ok": True}
                answered, _, _ = select.select([upload], [], [], 0)
                assert not answered, "the document was parsed before /health was answered"
                reply = b""
                while chunk := upload.recv(65536):
                    reply += chunk
            assert reply.startswith(b"HTTP/1.1 200")
            assert len(stub.get("/_test/fixtures")["flags"]) == 20_000


def open_upload(url: str, path: str, document: bytes) -> socket.socket:
    """A connection that has sent a whole YAML document to `path` and not read the answer."""
    host, port = url.removeprefix("http://").split(":")
    connection = socket.create_connection((host, int(port)), timeout=60)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/yaml\r\n"
        f"Content-Length: {len(document)}\r\nConnection: close\r\n\r\n"
    )
    connection.sendall(head.encode() + document)
    return connection


def answer_of(connection: socket.socket) -> bytes:
    """What an upload's connection was answered, read once the stub has exited: an answer's
    first bytes, or nothing for a connection closed (or reset) unanswered."""
    try:
        return connection.recv(65536)
    except OSError:
        return b""


class TestCollectorPausedWhileADocumentIsBuilt:
    @pytest.mark.parametrize("document", ["flags: {a: {type: boolean, value: true}}", ALIAS_BOMB])
    async def test_it_is_back_on_after_a_document_is_read_or_refused(
        self, client: Client, document: str
    ) -> None:
        assert gc.isenabled()
        async with client.post("/_test/fixtures", data=document, headers=YAML) as answer:
            assert answer.status in (200, 413)
        assert gc.isenabled()

    def test_overlapping_pauses_turn_it_on_when_the_last_ends(self) -> None:
        with collection_paused():
            with collection_paused():
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert gc.isenabled()

    def test_a_collector_that_was_off_stays_off(self) -> None:
        gc.disable()  # as the entry point has it while the stub starts
        try:
            with collection_paused():
                pass
            assert not gc.isenabled()
        finally:
            gc.enable()


class TestEvictionSparesNamespacesInUse:
    async def test_a_long_polled_namespace_outlives_the_count_bound(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(max_namespaces=2)))
        polled = asyncio.ensure_future(
            json_of(client, "GET", f"/ns/polled/_test/events?minSvcEvents=1&waitMs={LONG_WAIT_MS}")
        )
        await serving(client, "polled")
        for name in ("a", "b", "c"):  # each creation is over the bound of 2
            async with client.post(f"/ns/{name}/v1/flags/evaluate", json=EVALUATE, headers=AUTH):
                pass
        assert "polled" in await names(client)
        async with client.post("/ns/polled/v1/capture", json=CAPTURE, headers=AUTH) as answer:
            assert answer.status == 200
        status, body = await asyncio.wait_for(polled, LONG_POLL_GUARD_S)
        assert (status, body["svcEvents"]) == (200, CAPTURE["events"])

    async def test_a_namespace_serving_a_request_outlives_the_count_bound(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(max_namespaces=2)))
        capture = held_in_flight(client, "busy")
        await serving(client, "busy")
        for name in ("a", "b", "c"):
            async with client.post(f"/ns/{name}/v1/flags/evaluate", json=EVALUATE, headers=AUTH):
                pass
        assert (await capture)[0] == 200
        status, body = await json_of(client, "GET", "/ns/busy/_test/events")
        assert (status, body["svcEvents"]) == (200, CAPTURE["events"])
        _, log = await json_of(client, "GET", "/ns/busy/_test/requests")
        assert [(r["route"], r["status"]) for r in log["requests"]] == [("capture", 200)]

    async def test_with_every_namespace_in_use_the_count_passes_the_bound_until_one_is_idle(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(max_namespaces=1)))
        capture = held_in_flight(client, "one")
        await serving(client, "one")
        async with client.post("/ns/two/v1/flags/evaluate", json=EVALUATE, headers=AUTH):
            pass
        assert await names(client) == ["default", "one", "two"]
        assert (await capture)[0] == 200
        async with client.post("/ns/three/v1/flags/evaluate", json=EVALUATE, headers=AUTH):
            pass
        _, listed = await json_of(client, "GET", "/_test/namespaces")
        assert [n["name"] for n in listed["namespaces"]] == ["default", "three"]
        assert (listed["count"], listed["evicted"]) == (1, 2)

    async def test_a_namespace_serving_a_request_outlives_the_recording_bound(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(max_recorded_in_namespaces=3)))
        three = {"events": CAPTURE["events"] * 3}
        async with client.post("/ns/busy/v1/capture", json=three, headers=AUTH):
            pass  # four entries: over the bound of 3
        capture = held_in_flight(client, "busy")
        await serving(client, "busy")
        async with client.post("/ns/other/v1/flags/evaluate", json=EVALUATE, headers=AUTH):
            pass
        assert (await capture)[0] == 200
        status, body = await json_of(client, "GET", "/ns/busy/_test/events")
        assert (status, len(body["svcEvents"])) == (200, 4)


class TestDeletingANamespaceEndsItsWaits:
    @pytest.mark.parametrize(
        "deletion", ["/_test/namespaces/t-1", "/_test/namespaces"], ids=["one", "all"]
    )
    @pytest.mark.parametrize(
        "wait",
        [
            f"/_test/events?minSvcEvents=1&waitMs={LONG_WAIT_MS}",
            f"/_test/requests?min=1&waitMs={LONG_WAIT_MS}",
        ],
        ids=["events", "requests"],
    )
    async def test_its_long_polls_end_at_once_with_a_410_that_says_so(
        self, client: Client, deletion: str, wait: str
    ) -> None:
        await json_of(client, "POST", "/_test/namespaces", json={"name": "t-1"})
        # The wait is the longest the stub takes and must end within half of it: proof that the
        # deletion ended it, yet no machine is too slow for it.
        waiting = asyncio.ensure_future(json_of(client, "GET", "/ns/t-1" + wait))
        await serving(client, "t-1")
        assert (await json_of(client, "DELETE", deletion))[0] == 200
        status, body = await asyncio.wait_for(waiting, LONG_POLL_GUARD_S)  # not its whole wait
        assert (status, body["error"]) == (410, "NAMESPACE_GONE")
        assert body["message"] == (
            f"namespace 't-1' was deleted (DELETE {deletion}) while this request waited"
        )


BODY_ROUTES = [
    ("/v1/flags/evaluate", AUTH),
    ("/v1/capture", AUTH),
    ("/v1/capture", {**AUTH, "X-Svc-Test-Fault": "500"}),
    ("/v1/flags/evaluate", {**AUTH, "X-Svc-Test-Fault": "quota_limited"}),
    ("/v1/targets/register", AUTH),
    ("/flags/?v=2", {}),
    ("/batch/", {}),
    ("/v1/projects", {"Authorization": "Bearer svc_org_default"}),
]
"""Every kind of route that reads a body, a faulted one among them."""


def abandon(url: str, path: str, headers: dict[str, str]) -> None:
    """Promise 1,000 bytes of body, send a few, and close the connection."""
    host, port = url.removeprefix("http://").split(":")
    lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    head = f"POST {path} HTTP/1.1\r\nHost: {host}\r\n{lines}Content-Length: 1000\r\n\r\n"
    with socket.create_connection((host, int(port)), timeout=HANG_GUARD_S) as connection:
        connection.sendall(head.encode() + b'{"events": [')
        time.sleep(0.05)  # the stub is reading the body when the client goes


class TestDeletedWhileItsDocumentIsParsed:
    async def test_the_document_is_refused_with_a_410(self, aiohttp_client: AiohttpClient) -> None:
        client = await aiohttp_client(create_app(StubConfig(max_body_bytes=4 << 20)))
        posting = asyncio.ensure_future(
            json_of(
                client,
                "POST",
                "/ns/z/_test/fixtures",
                data=io.BytesIO(LARGE_DOCUMENT),  # aiohttp warns of large raw bytes
                headers=YAML,
            )
        )
        # The DELETE comes once the upload is under way (after a sleep, on a busy machine it could
        # come before namespace z existed).
        await serving(client, "z")
        assert (await json_of(client, "DELETE", "/_test/namespaces/z"))[0] == 200
        status, body = await asyncio.wait_for(posting, HANG_GUARD_S)
        assert (status, body["error"]) == (410, "NAMESPACE_GONE")
        assert await names(client) == ["default"]


class TestAbandonedUploads:
    def test_each_is_recorded_once_as_gone_and_logged_in_one_quiet_line(self) -> None:
        with spawn_stub() as stub:
            control = StubClient(stub.url)
            for count, (path, headers) in enumerate(BODY_ROUTES, start=1):
                abandon(stub.url, path, headers)
                recorded = control.wait_for_requests(count, timeout=HANG_GUARD_S)
                assert [(r.status, r.client_gone) for r in recorded][-1] == (None, True), path
            abandon(stub.url, "/_test/fixtures", {})
            assert stub.post("/_test/fixtures", {"flags": {}}) == {"ok": True, "flags": []}
            assert len(control.requests()) == len(BODY_ROUTES)  # each once, none twice
            stub.process.terminate()
            stub.process.wait(HANG_GUARD_S)
            assert stub.process.stderr is not None
            log = stub.process.stderr.read()
        assert "Traceback" not in log
        assert "ERROR" not in log
        gone = [line for line in log.splitlines() if "the client went away" in line]
        assert len(gone) == len(BODY_ROUTES) + 1
        assert all(line.startswith("svc-stub INFO POST /") for line in gone)
        assert "the client went away after 12 of 1000 bytes of its body" in gone[0]

    def test_a_served_request_is_not_gone(self, live_stub: SpawnedStub) -> None:
        assert post(live_stub.url + "/v1/capture", json.dumps(CAPTURE).encode(), AUTH)[0] == 200
        (recorded,) = StubClient(live_stub.url).requests()
        assert (recorded.status, recorded.client_gone) == (200, False)


class TestAClientThatLeavesAHeldRequest:
    @pytest.mark.parametrize("arming", [{"mode": "delay", "delayMs": 60_000}, {"mode": "hang"}])
    def test_it_is_recorded_as_gone_unanswered(
        self, live_stub: SpawnedStub, arming: dict[str, Any]
    ) -> None:
        """A client that gives up on a request a fault holds is gone before its answer could
        be sent: `clientGone`, no status, and the body it sent kept."""
        live_stub.post("/_test/fault", {**arming, "applyTo": ["evaluate"]})
        body = json.dumps(EVALUATE).encode()
        with socket.create_connection(_address(live_stub.url), timeout=HANG_GUARD_S) as held:
            held.sendall(
                b"POST /v1/flags/evaluate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                % (len(body), body)
            )
            guard = time.monotonic() + HANG_GUARD_S
            while live_stub.get("/_test/fault")["armed"][0]["fired"] == 0:  # it arrived
                assert time.monotonic() < guard, "the request never reached the fault"
        waited = f"/_test/requests?min=1&waitMs={HANG_GUARD_S * 1000}"
        (entry,) = live_stub.get(waited)["requests"]
        assert (entry["route"], entry["status"], entry["clientGone"]) == ("evaluate", None, True)
        assert entry["bodyBytes"] == len(body)  # what it sent is kept


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)
