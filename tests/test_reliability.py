"""Reliability and security: bad input, abuse, concurrency, bounded memory, secrets, shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import io
import json
import resource
import signal
import socket
import threading
import time
import urllib.error
import urllib.request
import zlib
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient
from click.testing import CliRunner

from conftest import AUTH, HANG_GUARD_S, AiohttpClient, SpawnedStub, spawn_stub
from stub import StubConfig, create_app
from stub import cli as cli_module
from stub.namespaces import NAMESPACES

EVALUATE = "/v1/flags/evaluate"
# Every route that takes a JSON body, with a body it accepts.
JSON_ROUTES = {
    "/v1/flags/evaluate": {"targetingKey": "u"},
    "/v1/capture": {"events": []},
    "/v1/targets/register": {"targetingKey": "u"},
    "/flags/?v=2": {"api_key": "phc"},
    "/batch/": {"api_key": "phc", "batch": []},
    "/_test/fault": {"mode": "500", "applyTo": "batch"},
    "/_test/fixtures": {"flags": {}},
    "/_test/flags": {"flags": {}},
}
BAD_BODIES = {
    "not-json": b"{not json",
    "array": b"[1, 2, 3]",
    "string": b'"just a string"',
    "deeply-nested": b"[" * 10_000 + b"]" * 10_000,
    "invalid-utf8": b'{"targetingKey": "\xff\xfe"}',
    "empty": b"",
}


def raise_fd_limit() -> None:
    """A thousand concurrent clients need a thousand sockets in this process too."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))


def raw(stub: SpawnedStub, data: bytes, timeout: float = HANG_GUARD_S) -> tuple[bytes, Any]:
    """Send bytes as they are; answer the status line and the parsed JSON body."""
    host, port = stub.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    assert b"content-type: application/json" in head.lower(), head
    return head.split(b"\r\n", 1)[0], json.loads(body)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


async def state_of(client: TestClient[Any, Any]) -> tuple[Any, Any, Any]:
    """Everything a bad request must leave as it was."""
    events = await (await client.get("/_test/events")).json()
    armed = await (await client.get("/_test/fault")).json()
    decision = await client.post(
        EVALUATE, json={"targetingKey": "u", "flagKeys": ["new-checkout"]}, headers=AUTH
    )
    return events, armed, (await decision.json())["decisions"]


class TestBadInputOnEveryRoute:
    @pytest.mark.parametrize("bad", list(BAD_BODIES))
    @pytest.mark.parametrize("path", list(JSON_ROUTES))
    async def test_a_bad_body_is_a_json_400_naming_the_body_and_changes_nothing(
        self, client: TestClient[Any, Any], path: str, bad: str
    ) -> None:
        await client.post("/v1/capture", json={"events": [{"n": 1}]}, headers=AUTH)
        await client.post("/_test/fault", json={"mode": "429", "applyTo": "definitions"})
        before = await state_of(client)

        response = await client.post(path, data=BAD_BODIES[bad], headers=AUTH)

        assert response.status == 400, await response.text()
        assert response.content_type == "application/json"
        body = await response.json()
        assert body["ok"] is False
        assert body["message"].startswith("body")
        assert (await client.get("/health")).status == 200
        assert await state_of(client) == before

    @pytest.mark.parametrize(
        ("path", "body", "field"),
        [
            (EVALUATE, {"targetingKey": ["u"]}, "targetingKey"),
            (EVALUATE, {"targetingKey": "u", "flagKeys": {"a": 1}}, "flagKeys"),
            (EVALUATE, {"targetingKey": "u", "attributes": "plan=pro"}, "attributes"),
            ("/v1/capture", {"events": "e"}, "events"),
            ("/v1/capture", {"events": [None]}, "events[0]"),
            ("/v1/targets/register", {"targetingKey": "u", "kind": 1}, "kind"),
            ("/flags", {"api_key": "k", "flag_keys_to_evaluate": 3}, "flag_keys_to_evaluate"),
            ("/flags", {"api_key": "k", "person_properties": [1]}, "person_properties"),
            ("/batch", {"api_key": "k", "batch": {}}, "batch"),
            ("/_test/fault", {"mode": 500}, "mode"),
            ("/_test/fault", {"mode": "500", "ttlRequests": -3}, "ttlRequests"),
            ("/_test/fault", {"mode": "delay", "delayMs": "ten"}, "delayMs"),
            ("/_test/fault", {"mode": "500", "applyTo": ["evaluate", 7]}, "applyTo"),
            (
                "/_test/fixtures",
                {"flags": {"x": {"type": "number", "value": "1"}}},
                "body: flags.x.value",
            ),
            ("/_test/flags", {"flags": {"x": {"enabled": "yes"}}}, "flags.x.enabled"),
        ],
    )
    async def test_wrong_shapes_and_types_are_a_400_that_names_the_field(
        self, client: TestClient[Any, Any], path: str, body: dict[str, Any], field: str
    ) -> None:
        response = await client.post(path, json=body, headers=AUTH)
        assert response.status == 400
        assert (await response.json())["message"].startswith(field)

    async def test_json_sent_as_another_content_type_is_accepted(
        self, client: TestClient[Any, Any]
    ) -> None:
        # curl -d sends form encoding; a stub used by hand must not refuse valid JSON for it
        response = await client.post(
            EVALUATE,
            data=b'{"targetingKey": "u"}',
            headers={**AUTH, "Content-Type": "application/x-www-form-urlencoded"},
        )
        assert response.status == 200

    async def test_a_non_json_body_says_how_it_was_sent(self, client: TestClient[Any, Any]) -> None:
        response = await client.post(
            EVALUATE, data=b"targetingKey=u", headers={**AUTH, "Content-Type": "text/plain"}
        )
        message = (await response.json())["message"]
        assert message.startswith("body: not valid JSON")
        assert message.endswith(
            "(it was sent as text/plain; every body is read as JSON, whatever its type)"
        )

    async def test_malformed_json_says_where_it_broke_and_nothing_of_content_type(
        self, client: TestClient[Any, Any]
    ) -> None:
        response = await client.post(
            EVALUATE,
            data=b'{"targetingKey": "u",\n "flagKeys": [1,]}',
            headers={**AUTH, "Content-Type": "application/json"},
        )
        message = (await response.json())["message"]
        assert response.status == 400
        assert message.startswith("body: not valid JSON (")
        assert "line 2 column" in message
        assert "sent as" not in message
        assert "application/json" not in message

    async def test_deeply_nested_yaml_fixtures_are_a_400(
        self, client: TestClient[Any, Any]
    ) -> None:
        response = await client.post(
            "/_test/fixtures", data="[" * 10_000, headers={"Content-Type": "application/yaml"}
        )
        assert response.status == 400
        assert (await response.json())["error"] == "INVALID_FIXTURES"

    async def test_a_missing_project_token_on_definitions_is_a_json_401(
        self, client: TestClient[Any, Any]
    ) -> None:
        response = await client.get("/flags/definitions", headers={"Authorization": "Bearer s"})
        assert (response.status, response.content_type) == (401, "application/json")


class TestAbuse:
    async def test_a_5_mb_body_is_a_json_413(self, client: TestClient[Any, Any]) -> None:
        big = io.BytesIO(b"x" * 5_000_000)  # aiohttp's client warns about raw bytes this large
        response = await client.post("/v1/capture", data=big, headers=AUTH)
        assert (response.status, (await response.json())["error"]) == (413, "PAYLOAD_TOO_LARGE")
        assert (await client.get("/health")).status == 200

    def test_a_gzip_bomb_is_refused_without_the_memory_it_asks_for(
        self, live_stub: SpawnedStub
    ) -> None:
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip stream
        zeros = bytes(1 << 20)
        bomb = b"".join(packer.compress(zeros) for _ in range(1024)) + packer.flush()
        assert len(bomb) < 1_100_000  # about a megabyte that expands to a gigabyte
        before = rss_mb(live_stub.process.pid)
        request = urllib.request.Request(
            live_stub.url + "/v1/capture",
            data=bomb,
            headers={"Content-Encoding": "gzip", "Authorization": "Bearer k"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=HANG_GUARD_S)
        assert refused.value.code == 413
        assert json.load(refused.value)["error"] == "PAYLOAD_TOO_LARGE"
        refused.value.close()
        assert rss_mb(live_stub.process.pid) - before < 200
        assert live_stub.get("/health") == {"ok": True}

    def test_a_64_kb_header_is_a_json_400_that_echoes_nothing(self, live_stub: SpawnedStub) -> None:
        secret = b"sk_live_" + b"s" * 65_536
        status, body = raw(
            live_stub,
            b"GET /health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + secret + b"\r\n\r\n",
        )
        assert status.endswith(b"400 Bad Request")
        assert body["message"] == "request: Got more than 8190 bytes when reading"
        assert live_stub.get("/health") == {"ok": True}

    def test_10_000_query_parameters_are_a_json_400(self, live_stub: SpawnedStub) -> None:
        query = b"&".join(b"p%d=%d" % (n, n) for n in range(10_000))
        status, body = raw(
            live_stub, b"GET /flags/definitions?" + query + b" HTTP/1.1\r\nHost: x\r\n\r\n"
        )
        assert status.endswith(b"400 Bad Request")
        assert body["ok"] is False
        assert live_stub.get("/health") == {"ok": True}

    @pytest.mark.parametrize("asked", [None, "429"])
    def test_a_bad_deflate_body_sent_after_its_headers_is_answered(
        self, live_stub: SpawnedStub, asked: str | None
    ) -> None:
        """Headers first, the body a moment later: the request is being handled when the body
        fails to decode, and must still be answered (it used to wait for the client to leave)."""
        body = b"[" * 700 + b"]" * 700
        fault_header = f"X-Svc-Test-Fault: {asked}\r\n" if asked else ""
        host, port = live_stub.url.removeprefix("http://").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=HANG_GUARD_S) as connection:
            connection.sendall(
                f"POST /v1/flags/evaluate HTTP/1.1\r\nHost: {host}\r\n"
                f"Authorization: Bearer k\r\n{fault_header}Content-Encoding: deflate\r\n"
                f"Content-Length: {len(body)}\r\n\r\n".encode()
            )
            time.sleep(0.3)  # the handler starts on the headers alone
            connection.sendall(body)
            answer = connection.recv(65536)
        head, _, payload = answer.partition(b"\r\n\r\n")
        expected = b" 429 " if asked else b" 400 "
        assert expected in head.split(b"\r\n")[0], answer
        assert json.loads(payload)["ok"] is False
        assert live_stub.get("/health") == {"ok": True}

    @pytest.mark.parametrize("fault", [None, "500", "429"])
    def test_a_body_that_is_not_its_gzip_closes_the_connection_cleanly(
        self, fault: str | None
    ) -> None:
        with spawn_stub() as stub:
            host, port = stub.url.removeprefix("http://").rsplit(":", 1)
            body = b'{"api_key": "k", "batch": []}'
            extra = f"X-Svc-Test-Fault: {fault}\r\n".encode() if fault else b""
            with socket.create_connection((host, int(port)), timeout=HANG_GUARD_S) as sock:
                sock.sendall(
                    b"POST /batch/ HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\n"
                    + extra
                    + b"Content-Length: %d\r\n\r\n" % len(body)
                    + body
                )
                received = b""
                while chunk := sock.recv(65536):
                    received += chunk
            head = received.partition(b"\r\n\r\n")[0].lower()
            assert b"connection: close" in head  # the client knows not to reuse it
            assert stub.get("/health") == {"ok": True}
            stub.process.terminate()
            stub.process.wait(HANG_GUARD_S)
            assert stub.process.stderr is not None
            assert "Traceback" not in stub.process.stderr.read()

    def test_a_path_with_a_newline_is_a_recorded_json_404(self, live_stub: SpawnedStub) -> None:
        status, body = raw(
            live_stub,
            b"POST /v1/x%0Ay HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        )
        assert (status.endswith(b"404 Not Found"), body["error"]) == (True, "NOT_FOUND")
        (entry,) = live_stub.get("/_test/requests")["requests"]
        assert (entry["path"], entry["status"]) == ("/v1/x\ny", 404)

    def test_a_connect_request_gets_json(self, live_stub: SpawnedStub) -> None:
        status, body = raw(
            live_stub,
            b"CONNECT example.com:443 HTTP/1.1\r\n"
            b"Host: example.com:443\r\nConnection: close\r\n\r\n",
        )
        assert status.split(b" ")[1].startswith(b"4")
        assert body["ok"] is False

    @pytest.mark.parametrize("expect", ["foo", "\u00e9t\u00e9"])
    def test_an_unknown_expectation_is_ignored_not_a_text_417_or_a_500(
        self, live_stub: SpawnedStub, expect: str
    ) -> None:
        status, body = raw(
            live_stub,
            b"GET /health HTTP/1.1\r\nHost: x\r\nExpect: "
            + expect.encode()
            + b"\r\nConnection: close\r\n\r\n",
        )
        assert (status, body) == (b"HTTP/1.1 200 OK", {"ok": True})

    async def test_expect_100_continue_is_honoured(self, client: TestClient[Any, Any]) -> None:
        response = await client.post(
            EVALUATE, json={"targetingKey": "u"}, headers=AUTH, expect100=True
        )
        assert response.status == 200

    def test_http_1_0_is_served(self, live_stub: SpawnedStub) -> None:
        status, body = raw(live_stub, b"GET /health HTTP/1.0\r\n\r\n")
        assert (status, body) == (b"HTTP/1.0 200 OK", {"ok": True})

    def test_http_1_1_without_host_is_a_json_400(self, live_stub: SpawnedStub) -> None:
        status, body = raw(live_stub, b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n")
        assert status.endswith(b"400 Bad Request")
        assert body["message"] == "request: Missing 'Host' header in request"

    @pytest.mark.parametrize(
        ("method", "path", "allow"),
        [
            ("PUT", EVALUATE, "POST"),
            ("DELETE", "/batch/", "POST"),
            ("POST", "/flags/definitions", "GET"),
            ("POST", "/health", "GET"),
            ("PUT", "/_test/reset", "POST"),
            ("PATCH", "/_test/fault", "DELETE, GET, POST"),
            ("POST", "/_test/fault/3", "DELETE"),
        ],
    )
    async def test_methods_not_allowed_are_a_json_405_with_allow(
        self, client: TestClient[Any, Any], method: str, path: str, allow: str
    ) -> None:
        response = await client.request(method, path)
        assert (response.status, response.headers["Allow"]) == (405, allow)
        assert (await response.json())["error"] == "METHOD_NOT_ALLOWED"

    def test_a_slowloris_does_not_hold_up_other_clients(self, live_stub: SpawnedStub) -> None:
        host, port = live_stub.url.removeprefix("http://").rsplit(":", 1)
        slow = [socket.create_connection((host, int(port))) for _ in range(100)]
        stop = threading.Event()

        def trickle() -> None:  # a header byte every 50 ms on every connection, never finished
            while not stop.is_set():
                for sock in slow:
                    sock.sendall(b"X")
                time.sleep(0.05)

        for sock in slow:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        dripper = threading.Thread(target=trickle)
        dripper.start()
        try:
            # The slow connections never end while they trickle (the stub has no header timeout
            # to end them), so a stub they held up would never answer: live_stub.get's
            # HANG_GUARD_S catches that.
            for _ in range(20):
                assert live_stub.get("/health") == {"ok": True}
        finally:
            stop.set()
            dripper.join()
            for sock in slow:
                sock.close()


class TestConcurrencyIntegrity:
    async def test_64_clients_times_50_captures_record_exactly_3200_events(
        self, client: TestClient[Any, Any]
    ) -> None:
        async def one_client(client_id: int) -> None:
            for n in range(50):
                events = [{"type": "event", "id": f"{client_id}-{n}"}]
                response = await client.post("/v1/capture", json={"events": events}, headers=AUTH)
                assert response.status == 200

        await asyncio.gather(*(one_client(c) for c in range(64)))
        recorded = (await (await client.get("/_test/events")).json())["svcEvents"]
        ids = [event["id"] for event in recorded]
        assert len(ids) == 3200
        assert set(ids) == {f"{c}-{n}" for c in range(64) for n in range(50)}

    async def test_ttl_100_under_400_concurrent_requests_faults_exactly_100(
        self, client: TestClient[Any, Any]
    ) -> None:
        await client.post("/_test/fault", json={"mode": "500", "ttlRequests": 100})

        async def status() -> int:
            response = await client.post(EVALUATE, json={"targetingKey": "u"}, headers=AUTH)
            await response.read()
            return response.status

        statuses = await asyncio.gather(*(status() for _ in range(400)))
        assert (statuses.count(500), statuses.count(200)) == (100, 300)

    async def test_1000_concurrent_delayed_requests_are_all_answered(
        self, live_stub: SpawnedStub
    ) -> None:
        raise_fd_limit()
        live_stub.post("/_test/fault", {"mode": "delay", "delayMs": 200, "applyTo": "evaluate"})
        connector = aiohttp.TCPConnector(limit=0)
        try:
            async with aiohttp.ClientSession(connector=connector) as session:

                async def one() -> int:
                    async with session.post(
                        live_stub.url + EVALUATE, json={"targetingKey": "u"}, headers=AUTH
                    ) as response:
                        await response.read()
                        return response.status

                statuses = await asyncio.gather(*(one() for _ in range(1000)))
        finally:
            live_stub.post("/_test/reset")
        assert statuses == [200] * 1000

    async def test_200_concurrent_delayed_requests_are_recorded_before_each_answer(
        self, live_stub: SpawnedStub
    ) -> None:
        """Read-after-response over real sockets: 200 captures at once, each delayed 0-57 ms
        by its own header (so answers finish in a different order than they began); as each
        client gets its answer it reads the log and the events and finds its own there."""
        raise_fd_limit()
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def one(n: int) -> tuple[bool, bool]:
                event = {"type": "signal", "targetingKey": f"user-{n}", "name": "read-after"}
                headers = {
                    **AUTH,
                    "X-Svc-Test-Fault": "delay",
                    "X-Svc-Test-Delay-Ms": str(n % 20 * 3),
                }
                async with session.post(
                    f"{live_stub.url}/v1/capture?n={n}", json={"events": [event]}, headers=headers
                ) as answer:
                    assert answer.status == 200
                    await answer.read()
                async with session.get(live_stub.url + "/_test/requests?route=capture") as log:
                    logged = {r["query"].get("n") for r in (await log.json())["requests"]}
                async with session.get(live_stub.url + "/_test/events") as events:
                    keys = {e["targetingKey"] for e in (await events.json())["svcEvents"]}
                return str(n) in logged, f"user-{n}" in keys

            seen = await asyncio.gather(*(one(n) for n in range(200)))
        assert [n for n, (logged, _) in enumerate(seen) if not logged] == []
        assert [n for n, (_, evented) in enumerate(seen) if not evented] == []
        assert len(live_stub.get("/_test/events")["svcEvents"]) == 200  # and each once


class TestBoundedMemory:
    def test_20000_events_keep_1000_count_the_rest_and_memory_stays_flat(self) -> None:
        with spawn_stub("--max-recorded", "1000") as stub:

            def send(batches: int) -> None:
                for b in range(batches):
                    events = [
                        {"type": "event", "pad": "x" * 200, "n": b * 200 + n} for n in range(200)
                    ]
                    request = urllib.request.Request(
                        stub.url + "/v1/capture",
                        data=json.dumps({"events": events}).encode(),
                        headers={"Authorization": "Bearer k"},
                    )
                    urllib.request.urlopen(request, timeout=HANG_GUARD_S).close()

            send(50)
            halfway = rss_mb(stub.process.pid)
            send(50)
            recorded = stub.get("/_test/events")
            assert len(recorded["svcEvents"]) == 1000
            assert recorded["dropped"]["svcEvents"] == 19_000
            assert recorded["svcEvents"][-1]["n"] == 9_999
            assert rss_mb(stub.process.pid) - halfway < 5


class TestSecurityDefaults:
    def test_off_loopback_a_control_token_is_generated_required_and_printed(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        served: dict[str, Any] = {}

        async def pretend_serve(app: Any, host: str, port: int, **kwargs: Any) -> None:
            served["app"], served["host"] = app, host
            kwargs["on_ready"](4321)  # no socket is bound: tests stay on loopback

        monkeypatch.setattr(cli_module, "serve", pretend_serve)
        result = CliRunner().invoke(
            cli_module.command, ["--host", "0.0.0.0", "--allow-non-loopback"]
        )
        assert result.exit_code == 0, result.output
        ready, inspector, token_line = result.output.splitlines()
        assert ready == "svc-stub listening on http://0.0.0.0:4321"
        assert inspector == "svc-stub inspector: http://0.0.0.0:4321/_test/ui"
        token = token_line.removeprefix("svc-stub control token: ")
        assert len(token) >= 32
        assert served["app"][NAMESPACES].config.control_token == token

    def test_no_key_or_token_appears_in_answers_logs_or_the_request_log(self) -> None:
        secrets = ["sk_live_header", "phc_body_key", "phs_query_secret", "ctl_token_abc"]
        with spawn_stub(
            "--log-level", "debug", "--api-key", "good", "--control-token", "ctl_token_abc"
        ) as stub:
            answers: list[bytes] = []

            def call(path: str, body: object | None, headers: dict[str, str]) -> None:
                data = None if body is None else json.dumps(body).encode()
                request = urllib.request.Request(stub.url + path, data=data, headers=headers)
                try:
                    with urllib.request.urlopen(request, timeout=HANG_GUARD_S) as answer:
                        answers.append(answer.read())
                except urllib.error.HTTPError as error:
                    with error:
                        answers.append(error.read())

            call(EVALUATE, {"targetingKey": "u"}, {"Authorization": "Bearer sk_live_header"})
            call("/flags/?v=2", {"api_key": "phc_body_key"}, {})
            call(
                "/flags/definitions?token=phs_query_secret",
                None,
                {"Authorization": "Bearer sk_live_header"},
            )
            call("/_test/events", None, {"Authorization": "Bearer wrong"})
            call("/_test/requests", None, {"Authorization": "Bearer ctl_token_abc"})
            raw(
                stub,
                b"GET /health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                b"sk_live_header" + b"h" * 70_000 + b"\r\n\r\n",
            )
            stub.process.terminate()
            stub.process.wait(HANG_GUARD_S)
            assert stub.process.stderr is not None
            log = stub.process.stderr.read()
        everything = b"".join(answers).decode() + log
        assert "/v1/flags/evaluate" in log  # the debug log did log the requests
        for secret in secrets:
            assert secret not in everything

    @pytest.mark.parametrize(
        ("body", "content_type"),
        [
            (b'{"path": "/etc/passwd"}', "application/json"),
            (b"/etc/passwd", "application/yaml"),
            (b"flags: !!python/object/apply:os.system ['echo owned']", "application/yaml"),
            (b"!include /etc/passwd", "application/yaml"),
        ],
    )
    async def test_fixtures_are_never_read_from_a_path_a_request_names(
        self, client: TestClient[Any, Any], body: bytes, content_type: str
    ) -> None:
        response = await client.post(
            "/_test/fixtures", data=body, headers={"Content-Type": content_type}
        )
        assert response.status == 400
        assert "root" not in await response.text()


class TestLifecycle:
    def test_sigterm_with_a_delay_in_flight_exits_zero_without_waiting_it_out(self) -> None:
        # The delay is ten times the hang guard and the exit must come within the guard: proof the
        # stop does not wait the delay out, yet no machine is too slow for it.
        delay_ms = 10 * HANG_GUARD_S * 1000
        with spawn_stub() as stub:
            stub.post("/_test/fault", {"mode": "delay", "delayMs": delay_ms})

            def delayed() -> None:
                request = urllib.request.Request(
                    stub.url + EVALUATE,
                    data=b'{"targetingKey": "u"}',
                    headers={"Authorization": "Bearer k"},
                )
                # the stub stops under it: any ending is fine here
                with contextlib.suppress(urllib.error.URLError, ConnectionError, TimeoutError):
                    urllib.request.urlopen(request, timeout=2 * HANG_GUARD_S).close()

            waiter = threading.Thread(target=delayed)
            waiter.start()
            time.sleep(0.3)  # the request reaches the stub (if not yet, this proves less)
            stub.process.send_signal(signal.SIGTERM)
            assert stub.process.wait(timeout=HANG_GUARD_S) == 0
            waiter.join(timeout=HANG_GUARD_S)
            assert not waiter.is_alive()

    async def test_a_gzip_body_that_ends_early_is_a_400_not_a_crash(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig()))
        cut = gzip.compress(b'{"events": []}')[:-6]
        response = await client.post(
            "/v1/capture", data=cut, headers={**AUTH, "Content-Encoding": "gzip"}
        )
        assert response.status in (200, 400)
        assert response.content_type == "application/json"


class TestAiohttpAssumptions:
    """What the hot path reads of aiohttp beyond its documented API, pinned."""

    def test_request_value_reads_what_request_get_reads(self) -> None:
        from aiohttp.test_utils import make_mocked_request
        from aiohttp.web import RequestKey

        from stub.wire import request_value

        present, absent = RequestKey("present", str), RequestKey("absent", str)
        request = make_mocked_request("GET", "/")
        request[present] = "here"
        assert request_value(request, present) == request.get(present) == "here"
        assert request_value(request, absent) is request.get(absent) is None
        clone = request.clone()  # aiohttp copies the items into a clone
        assert request_value(clone, present) == "here"
