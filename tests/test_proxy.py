"""Proxy mode: svc-stub in front of a real service. The upstream here is a second svc-stub
serving fixtures of its own (and, for TLS, a small server of the test's own); what a client
sees through the proxy is what the upstream answers, under every fault as against fixtures."""

from __future__ import annotations

import asyncio
import http.client
import json
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import posthog
import pytest
import trustme
from aiohttp import web
from fireweave import EvaluationContext, FlagType

from conftest import (
    HANG_GUARD_S,
    SERVICE_RUNTIME_KEY,
    SERVICE_VENDOR_KEY,
    AiohttpClient,
    OpenFireweave,
    SpawnedStub,
    free_port,
    one_line,
    real_service,
    run_stub,
    spawn_stub,
)
from foreign_upstream import serving
from stub import StubConfig, create_app
from stub.client import StubClient
from stub.faults.modes import FaultMode
from stub.upstream import proxy as proxy_module
from stub.upstream.transport import upstream_of

KEY = SERVICE_RUNTIME_KEY  # the upstream's own keys: it refuses any other
VENDOR_KEY = SERVICE_VENDOR_KEY
ORG = "svc_org_default"
UPSTREAM_FIXTURES = """\
flags:
  staging-banner: {type: string, value: from-staging, variant: from-staging}
  staging-limit: {type: number, value: 42}
"""
FLAG = "staging-banner"
DEFAULT = "caller-default"
USER = EvaluationContext(targeting_key="user-1")
EVALUATE = {"targetingKey": "user-1", "flagKeys": [FLAG]}


def request(
    url: str, body: object = None, headers: dict[str, str] | None = None, method: str = "POST"
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    sent = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(sent, timeout=HANG_GUARD_S) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as refused:
        with refused:
            return refused.code, json.load(refused)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="module")
def fixtures_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("upstream") / "staging.yaml"
    path.write_text(UPSTREAM_FIXTURES, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def upstream_stub(fixtures_file: Path) -> Iterator[SpawnedStub]:
    """The "real service": only its own keys, its own flags."""
    with real_service("--fixtures", str(fixtures_file)) as stub:
        yield stub


@pytest.fixture(scope="module")
def direct_stub(fixtures_file: Path) -> Iterator[SpawnedStub]:
    """A plain stub serving the upstream's flags: what a fault does against fixtures."""
    with spawn_stub("--fixtures", str(fixtures_file), read_log=False) as stub:
        yield stub


@pytest.fixture(scope="module")
def proxy_stub(upstream_stub: SpawnedStub) -> Iterator[SpawnedStub]:
    with spawn_stub("--upstream", upstream_stub.url, read_log=False) as stub:
        yield stub


@pytest.fixture
def upstream(upstream_stub: SpawnedStub) -> SpawnedStub:
    upstream_stub.post("/_test/reset")
    return upstream_stub


@pytest.fixture
def proxy(proxy_stub: SpawnedStub, upstream: SpawnedStub) -> SpawnedStub:
    proxy_stub.post("/_test/reset")
    return proxy_stub


@pytest.fixture
def direct(direct_stub: SpawnedStub) -> SpawnedStub:
    direct_stub.post("/_test/reset")
    return direct_stub


class TestForwarding:
    def test_the_published_client_reads_the_upstreams_values(
        self, proxy: SpawnedStub, upstream: SpawnedStub, open_fireweave: OpenFireweave
    ) -> None:
        _, _, client = open_fireweave(proxy.url, KEY)
        decision = client.control_points.get_details(FLAG, FlagType.STRING, DEFAULT, USER)
        assert (decision.value, decision.variant) == ("from-staging", "from-staging")
        (through,) = StubClient(proxy.url).requests()
        (arrived,) = StubClient(upstream.url).requests()
        assert (through.route, through.status, through.upstream_status) == ("evaluate", 200, 200)
        assert through.upstream_ms is not None
        assert through.upstream_ms <= through.duration_ms
        assert (arrived.route, arrived.status) == ("evaluate", 200)

    def test_the_journal_shows_the_body_sent_and_the_upstreams_answer_in_full(
        self, proxy: SpawnedStub, upstream: SpawnedStub
    ) -> None:
        status, answered = request(proxy.url + "/v1/flags/evaluate", EVALUATE, bearer(KEY))
        (through,) = StubClient(proxy.url).requests()
        full = StubClient(proxy.url).request(through.seq)

        assert (status, full.answer_status, full.request.upstream_status) == (200, 200, 200)
        assert isinstance(full.body, str)
        assert isinstance(full.answer_body, str)
        assert json.loads(full.body) == EVALUATE
        assert json.loads(full.answer_body) == answered
        assert "from-staging" in full.answer_body

    def test_a_capture_is_forwarded_once_and_recorded_once(
        self, proxy: SpawnedStub, upstream: SpawnedStub, open_fireweave: OpenFireweave
    ) -> None:
        adapter, _, client = open_fireweave(proxy.url, KEY)
        client.exposures.record(targeting_key="user-1", flag_key=FLAG, variant="from-staging")
        client.exposures.flush()
        adapter.flush()
        recorded = StubClient(proxy.url).wait_for_svc_events(1)
        forwarded = StubClient(upstream.url).wait_for_svc_events(1)
        assert recorded == forwarded
        assert len(StubClient(proxy.url).recorded().svc_events) == 1
        assert [r.route for r in StubClient(upstream.url).requests()] == ["capture"]

    def test_posthog_reads_its_flags_and_its_batch_arrives_once(
        self, proxy: SpawnedStub, upstream: SpawnedStub
    ) -> None:
        client = posthog.Posthog(VENDOR_KEY, host=proxy.url, sync_mode=True, max_retries=0)
        try:
            assert client.evaluate_flags("user-1").get_flag(FLAG) == "from-staging"
            client.capture("signed_up", distinct_id="user-1")
            client.flush()
        finally:
            client.shutdown()
        proxied = StubClient(proxy.url).wait_for_events(2)
        arrived = StubClient(upstream.url).wait_for_events(2)
        names = ["$feature_flag_called", "signed_up"]  # each once, on both sides
        assert sorted(e["event"] for e in proxied) == sorted(e["event"] for e in arrived) == names

    def test_svc_stubs_own_headers_query_and_prefix_never_reach_the_upstream(
        self, proxy: SpawnedStub, upstream: SpawnedStub
    ) -> None:
        headers = {**bearer(KEY), "X-Svc-Test-Namespace": "t-1", "X-Svc-Test-Delay-Ms": "1"}
        url = proxy.url + "/ns/t-1/v1/flags/evaluate?fault=none&delayMs=1&keep=yes"
        assert request(url, EVALUATE, headers)[0] == 200
        (arrived,) = StubClient(upstream.url).requests()  # its default namespace, not t-1
        assert (arrived.path, arrived.query) == ("/v1/flags/evaluate", {"keep": "yes"})
        assert not [name for name in arrived.headers if name.startswith("x-svc-")]
        assert arrived.header("Authorization") == "Bearer project-api-key_[redacted]"
        assert [r.route for r in StubClient(proxy.url + "/ns/t-1").requests()] == ["evaluate"]

    def test_the_control_plane_is_the_proxys_own(
        self, proxy: SpawnedStub, upstream: SpawnedStub
    ) -> None:
        upstream.post("/_test/fault", {"mode": "500"})
        proxy.post("/_test/reset")
        assert len(upstream.get("/_test/fault")["armed"]) == 1
        assert request(proxy.url + "/v1/flags/evaluate", EVALUATE, bearer(KEY))[0] == 500

    def test_the_rate_limit_applies_before_forwarding(self, upstream: SpawnedStub) -> None:
        with spawn_stub("--upstream", upstream.url, "--rate-limit", "1", read_log=False) as proxy:
            statuses = [
                request(proxy.url + "/v1/flags/evaluate", EVALUATE, bearer(KEY))[0]
                for _ in range(2)
            ]
        assert statuses == [200, 429]
        assert len(StubClient(upstream.url).requests()) == 1

    def test_an_unknown_path_is_the_upstreams_to_answer(
        self, proxy: SpawnedStub, upstream: SpawnedStub
    ) -> None:
        status, body = request(proxy.url + "/v1/decide", {}, bearer(KEY))
        assert (status, body["error"]) == (404, "NOT_FOUND")
        (through,) = StubClient(proxy.url).requests()
        assert (through.route, through.upstream_status) == (None, 404)


def raw_request(url: str, method: str, target: str, headers: dict[str, str]) -> int:
    """A request whose target is sent byte for byte (no client normalises it)."""
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=HANG_GUARD_S)
    try:
        connection.request(method, target, body=json.dumps(EVALUATE), headers=headers)
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


class TestWhatReachesTheUpstream:
    def test_a_path_that_looks_like_another_host_stays_on_the_upstream(
        self, proxy: SpawnedStub, upstream: SpawnedStub, direct: SpawnedStub
    ) -> None:
        other = direct.url.removeprefix("http://")
        raw_request(proxy.url, "POST", f"//{other}/v1/flags/evaluate", bearer(KEY))
        assert direct.get("/_test/requests")["requests"] == []  # never the other host
        (arrived,) = StubClient(upstream.url).requests()
        assert arrived.path == f"//{other}/v1/flags/evaluate"

    @pytest.mark.parametrize("target", ["/v1/../_test/requests", "/v1/%2e%2e/_test/requests"])
    def test_a_dot_segment_is_refused_and_never_forwarded(
        self, proxy: SpawnedStub, upstream: SpawnedStub, target: str
    ) -> None:
        assert raw_request(proxy.url, "GET", target, {}) == 400
        assert StubClient(upstream.url).requests() == []

    def test_the_upstream_is_asked_only_for_encodings_svc_stub_can_undo(
        self, proxy: SpawnedStub, upstream: SpawnedStub
    ) -> None:
        headers = {**bearer(KEY), "Accept-Encoding": "br, zstd"}
        assert request(proxy.url + "/v1/flags/evaluate", EVALUATE, headers)[0] == 200
        (arrived,) = StubClient(upstream.url).requests()
        assert "br" not in (arrived.header("Accept-Encoding") or "")

    def test_the_query_is_forwarded_as_sent_less_the_fault_parameters(
        self, proxy: SpawnedStub, upstream: SpawnedStub
    ) -> None:
        target = "/v1/flags/evaluate?fault=none&a=%2F&flag&delayMs=5"
        assert raw_request(proxy.url, "POST", target, bearer(KEY)) == 200
        (arrived,) = upstream.get("/_test/requests")["requests"]
        assert arrived["query"] == {"a": "/", "flag": ""}

    def test_a_client_that_gives_up_is_recorded_as_gone_and_frees_the_upstream(
        self, proxy: SpawnedStub, upstream: SpawnedStub, open_fireweave: OpenFireweave
    ) -> None:
        upstream.post("/_test/fault", {"mode": "hang", "applyTo": "evaluate", "ttlRequests": 1})
        assert outcome(proxy.url, open_fireweave)[2] == "Timeout"
        (through,) = StubClient(proxy.url).wait_for_requests(1, timeout=HANG_GUARD_S)
        assert (through.status, through.client_gone, through.upstream_status) == (
            None,
            True,
            None,
        )

    async def test_an_answer_past_the_bound_is_a_502_that_says_so(
        self,
        upstream: SpawnedStub,
        aiohttp_client: AiohttpClient,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        monkeypatch.setattr(proxy_module, "MAX_ANSWER_BYTES", 100)
        config = StubConfig(upstream=upstream_of(upstream.url))
        client = await aiohttp_client(create_app(config))
        async with client.post("/v1/flags/evaluate", json=EVALUATE, headers=bearer(KEY)) as r:
            body = await r.json()
            assert (r.status, body["error"]) == (502, "UPSTREAM_TOO_LARGE")
        assert "answered more than 100 bytes" in body["message"]

    def test_each_route_charges_the_key_it_does_against_fixtures(
        self, upstream: SpawnedStub
    ) -> None:
        poll = "/api/feature_flag/local_evaluation?token=phc_same"
        with spawn_stub("--upstream", upstream.url, "--rate-limit", "1", read_log=False) as proxy:
            polls = [
                request(proxy.url + poll, None, bearer(f"phx_personal_{n}"), method="GET")[0]
                for n in range(2)
            ]
            management = [
                request(proxy.url + "/v1/whoami", None, bearer(ORG), method="GET")[0]
                for _ in range(2)
            ]
        assert polls[1] == 429  # the project key in ?token=, not the bearer, as against fixtures
        assert 429 not in management  # the management plane has no rate limit


def outcome(url: str, open_fireweave: OpenFireweave) -> tuple[Any, ...]:
    """What the published client reads for the flag: value, reason, error kind."""
    _, _, client = open_fireweave(url, KEY, 600)
    decision = client.control_points.get_details(FLAG, FlagType.STRING, DEFAULT, USER)
    return decision.value, decision.reason, decision.error_kind


def settle(stub: SpawnedStub) -> None:
    """A request the client gave up on is recorded once its handler ends. HANG_GUARD_S (was
    5 s) guards an entry that never comes; it is not a speed budget."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not stub.get("/_test/requests")["requests"] and time.monotonic() < deadline:
        time.sleep(0.02)


class TestFaultsOnTheRealAnswer:
    @pytest.mark.parametrize("mode", [mode.value for mode in FaultMode])
    def test_each_fault_reads_as_it_does_against_fixtures(
        self, mode: str, proxy: SpawnedStub, direct: SpawnedStub, open_fireweave: OpenFireweave
    ) -> None:
        armed = {"mode": mode, "applyTo": "evaluate", "ttlRequests": 1, "delayMs": 1000}
        if mode == "status":
            armed["status"] = 503
        seen = []
        for stub in (direct, proxy):
            stub.post("/_test/fault", armed)
            seen.append(outcome(stub.url, open_fireweave))
            settle(stub)
        assert seen[0] == seen[1]

    def test_truncated_cuts_the_real_answer(self, proxy: SpawnedStub) -> None:
        host, port = proxy.url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=HANG_GUARD_S)
        headers = {**bearer(KEY), "X-Svc-Test-Fault": "truncated"}
        connection.request("POST", "/v1/flags/evaluate", json.dumps(EVALUATE), headers)
        answer = connection.getresponse()
        with pytest.raises(http.client.IncompleteRead) as cut:
            answer.read()
        connection.close()
        assert cut.value.partial.startswith(b'{"decisions":[{"flagKey":"staging-banner"')
        assert len(cut.value.partial) < int(answer.headers["Content-Length"])

    def test_invalid_json_spoils_the_real_answer(self, proxy: SpawnedStub) -> None:
        headers = {**bearer(KEY), "X-Svc-Test-Fault": "invalid_json"}
        sent = urllib.request.Request(
            proxy.url + "/v1/flags/evaluate", json.dumps(EVALUATE).encode(), headers
        )
        with urllib.request.urlopen(sent, timeout=HANG_GUARD_S) as answer:
            body = answer.read()
        assert body.startswith(b"{not-json ")
        assert json.loads(body.removeprefix(b"{not-json "))["decisions"][0]["value"] == (
            "from-staging"
        )

    def test_delay_adds_to_the_upstreams_time(self, proxy: SpawnedStub) -> None:
        headers = {**bearer(KEY), "X-Svc-Test-Fault": "delay", "X-Svc-Test-Delay-Ms": "300"}
        assert request(proxy.url + "/v1/flags/evaluate", EVALUATE, headers)[0] == 200
        (through,) = StubClient(proxy.url).requests()
        assert through.upstream_status == 200
        assert through.duration_ms >= 300 > (through.upstream_ms or 0)


class TestUnreachableUpstream:
    def test_each_plane_answers_a_502_in_its_envelope_that_names_the_upstream(self) -> None:
        gone = f"http://127.0.0.1:{free_port()}"
        with spawn_stub("--upstream", gone + "/base", read_log=False) as proxy:
            status, body = request(proxy.url + "/v1/flags/evaluate", EVALUATE, bearer(KEY))
            assert (status, body["error"]) == (502, "UPSTREAM_UNREACHABLE")
            assert body["message"].startswith(f"the upstream {gone} did not answer (cannot ")
            assert "check --upstream" in body["message"]
            status, body = request(
                proxy.url + "/v1/projects", None, bearer("svc_org_default"), method="GET"
            )
            assert (status, body["error"]["code"]) == (502, "UPSTREAM_UNREACHABLE")
            (first, _) = StubClient(proxy.url).requests()
            assert (first.status, first.upstream_status) == (502, None)


class TestSafety:
    @pytest.mark.parametrize(
        ("arguments", "said"),
        [
            (["--upstream", "http://staging.example"], "is plain http off loopback"),
            (["--upstream", "ftp://staging.example"], "is not an http(s) address"),
            (
                ["--upstream", "staging.example.com"],
                "'staging.example.com' has no scheme; give https://staging.example.com",
            ),
            (
                ["--upstream", "localhost:3902"],
                "'localhost:3902' has no scheme; give http://localhost:3902",
            ),
            (["--upstream", "https://user:secret@staging.example"], "carries credentials"),
            (
                ["--upstream", "https://staging.example", "--upstream-ca-bundle", "/nope.pem"],
                "CA bundle /nope.pem: no such file",
            ),
            (["--allow-insecure-upstream"], "need --upstream"),
        ],
    )
    def test_a_refused_upstream_is_one_line_before_any_connection(
        self, arguments: list[str], said: str
    ) -> None:
        line = one_line(run_stub("--port", "0", *arguments))
        assert said in line
        assert "secret" not in line

    def test_plain_http_off_loopback_starts_when_allowed_by_name(self) -> None:
        arguments = ("--upstream", "http://staging.example", "--allow-insecure-upstream")
        with spawn_stub(*arguments, read_log=False) as proxy:  # nothing is sent there
            assert proxy.get("/health") == {"ok": True}

    def test_no_key_reaches_a_log_line_or_the_journal(self, upstream: SpawnedStub) -> None:
        secret = "project-api-key_TOPSECRET"
        gone = f"http://127.0.0.1:{free_port()}"
        for target in (upstream.url, gone):
            with spawn_stub("--upstream", target, "--log-level", "debug") as proxy:
                request(proxy.url + "/v1/flags/evaluate", EVALUATE, bearer(secret))
                request(proxy.url + "/batch/", {"api_key": "phc_TOPSECRET", "batch": []})
                journal = json.dumps(proxy.get("/_test/requests"))
                proxy.process.terminate()
                proxy.process.wait(5)
                assert proxy.process.stderr is not None
                log = proxy.process.stderr.read()
            assert "TOPSECRET" not in journal
            assert "TOPSECRET" not in log
            assert "POST /v1/flags/evaluate" in log


@pytest.fixture(scope="module")
def tls_upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    authority = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    bundle = tmp_path_factory.mktemp("tls") / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))

    async def evaluate(request: web.Request) -> web.Response:
        return web.json_response({"decisions": [], "requestId": "tls", "quotaLimited": False})

    app = web.Application()
    app.router.add_post("/v1/flags/evaluate", evaluate)
    with serving(app, ssl_context=context) as url:
        yield url, bundle


class TestTls:
    """The upstream over https: verified, against the system's CAs or the user's bundle."""

    def test_an_untrusted_certificate_is_a_502_that_says_so(
        self, tls_upstream: tuple[str, Path]
    ) -> None:
        address, _ = tls_upstream
        with spawn_stub("--upstream", address, read_log=False) as proxy:
            status, body = request(proxy.url + "/v1/flags/evaluate", EVALUATE, bearer(KEY))
        assert (status, body["error"]) == (502, "UPSTREAM_UNREACHABLE")
        assert "TLS certificate is not trusted" in body["message"]

    def test_the_users_ca_bundle_is_trusted(self, tls_upstream: tuple[str, Path]) -> None:
        address, bundle = tls_upstream
        arguments = ("--upstream", address, "--upstream-ca-bundle", str(bundle))
        with spawn_stub(*arguments, read_log=False) as proxy:
            status, body = request(proxy.url + "/v1/flags/evaluate", EVALUATE, bearer(KEY))
        assert (status, body["requestId"]) == (200, "tls")


class Received:
    """A request as a misbehaving upstream read it."""

    def __init__(self, head: bytes, body: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        self.method, self.target, _ = lines[0].split(" ", 2)
        self.headers = [tuple(line.split(":", 1)) for line in lines[1:] if line]
        self.body = body

    def header_names(self) -> set[str]:
        return {name.strip().lower() for name, _ in self.headers}


Behaviour = Callable[[Received, asyncio.StreamWriter], Awaitable[None]]
"""What the upstream writes back (raw bytes, at its own pace), then it closes."""


class MisbehavingUpstream:
    """A raw HTTP/1.1 server on loopback, one request a connection, answering as the test
    says: cut short, echoing what it was sent, in pieces, with odd headers."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.received: list[Received] = []
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            received = Received(head, b"")
            length = next(
                (int(v) for n, v in received.headers if n.strip().lower() == "content-length"), 0
            )
            received.body = await reader.readexactly(length)
            self.received.append(received)
            await self.behaviour(received, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the proxy gave up on this answer: nothing more to write
        finally:
            writer.close()


def head(status: str, *headers: str) -> bytes:
    return ("\r\n".join([f"HTTP/1.1 {status}", *headers]) + "\r\n\r\n").encode()


ANSWER = b'{"decisions": [], "requestId": "cut", "quotaLimited": false}'
PART = ANSWER[:21]


async def cut_with_a_length(received: Received, writer: asyncio.StreamWriter) -> None:
    """Status line, headers declaring the whole answer, a part of it, then a clean close."""
    length = f"Content-Length: {len(ANSWER)}"
    writer.write(head("200 OK", "Content-Type: application/json", length, 'ETag: "v7"') + PART)
    await writer.drain()
    await asyncio.sleep(0.05)  # the part reaches the proxy before the close does


async def cut_between_chunks(received: Received, writer: asyncio.StreamWriter) -> None:
    chunked = "Transfer-Encoding: chunked"
    writer.write(head("200 OK", "Content-Type: application/json", chunked, 'ETag: "v7"'))
    writer.write(b"%x\r\n%b\r\n" % (len(PART), PART))
    await writer.drain()
    await asyncio.sleep(0.05)


async def raw_exchange(url: str, target: str, headers: dict[str, str]) -> bytes:
    """Everything a client receives for one POST, up to the server's close."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    sent = {"Host": host, "Content-Length": str(len(json.dumps(EVALUATE))), **headers}
    lines = [f"POST {target} HTTP/1.1", *(f"{k}: {v}" for k, v in sent.items())]
    writer.write(("\r\n".join(lines) + "\r\n\r\n" + json.dumps(EVALUATE)).encode())
    try:
        return await asyncio.wait_for(reader.read(), timeout=HANG_GUARD_S)
    finally:
        writer.close()


def proxy_app(url: str, **settings: Any) -> web.Application:
    return create_app(StubConfig(upstream=upstream_of(url), **settings))


class TestAnUpstreamThatCutsItsAnswer:
    """Status line and headers sent, the body short: the client sees the same cut through
    svc-stub as from the service, not an error of svc-stub's in its place."""

    @pytest.mark.parametrize("cut", [cut_with_a_length, cut_between_chunks])
    async def test_the_client_reads_the_same_status_headers_and_cut(
        self, cut: Behaviour, aiohttp_client: AiohttpClient
    ) -> None:
        async with MisbehavingUpstream(cut) as url:
            proxy = await aiohttp_client(proxy_app(url))
            seen = []
            for base in (url, str(proxy.make_url(""))):
                async with aiohttp.ClientSession() as client:
                    post = client.post(base + "/v1/flags/evaluate", json=EVALUATE)
                    async with post as answer:
                        with pytest.raises(aiohttp.ClientPayloadError):
                            await answer.read()
                        seen.append((answer.status, answer.headers.get("ETag")))
        assert seen == [(200, '"v7"'), (200, '"v7"')]

    async def test_the_bytes_that_came_are_relayed_under_the_declared_length(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        async with MisbehavingUpstream(cut_with_a_length) as url:
            proxy = await aiohttp_client(proxy_app(url))
            direct = await raw_exchange(url, "/v1/flags/evaluate", bearer(KEY))
            through = await raw_exchange(str(proxy.make_url("")), "/v1/flags/evaluate", bearer(KEY))
        for received in (direct, through):
            status_line, _, rest = received.partition(b"\r\n")
            headers, _, body = rest.partition(b"\r\n\r\n")
            assert status_line == b"HTTP/1.1 200 OK"
            assert f"content-length: {len(ANSWER)}".encode() in headers.lower()
            assert body == PART

    async def test_the_journal_keeps_the_upstreams_status_and_the_part_it_sent(
        self, aiohttp_client: AiohttpClient, caplog: pytest.LogCaptureFixture
    ) -> None:
        async with MisbehavingUpstream(cut_with_a_length) as url:
            proxy = await aiohttp_client(proxy_app(url))
            await raw_exchange(str(proxy.make_url("")), "/v1/flags/evaluate", bearer(KEY))
            (through,) = (await (await proxy.get("/_test/requests")).json())["requests"]
            full = await (await proxy.get(f"/_test/requests/{through['seq']}")).json()
        assert (through["status"], through["upstream"]["status"]) == (200, 200)
        assert full["answer"]["body"] == {"text": PART.decode(), "bytes": len(PART)}
        assert f"cut its answer short after {len(PART)} bytes" in caplog.text


async def echo_headers(received: Received, writer: asyncio.StreamWriter) -> None:
    """The headers it was sent, as JSON, and a header of its own for its hop alone."""
    body = json.dumps(sorted(received.header_names())).encode()
    hop = ("Connection: close, X-Upstream-Hop", "X-Upstream-Hop: 1", "X-End-To-End: 1")
    length = f"Content-Length: {len(body)}"
    writer.write(head("200 OK", "Content-Type: application/json", length, *hop) + body)
    await writer.drain()


CONTROL_TOKEN = "control-token-of-the-proxy"


class TestHopByHopAndTheControlToken:
    async def test_headers_the_clients_connection_names_stay_on_its_hop(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        async with MisbehavingUpstream(echo_headers) as url:
            proxy = await aiohttp_client(proxy_app(url))
            headers = {
                **bearer(KEY),
                "Connection": "keep-alive, X-Client-Hop",
                "X-Client-Hop": "1",
                "X-End-To-End": "1",
            }
            async with proxy.post("/v1/flags/evaluate", json=EVALUATE, headers=headers) as r:
                arrived = await r.json()
                assert "X-Upstream-Hop" not in r.headers
                assert r.headers["X-End-To-End"] == "1"
        assert "x-client-hop" not in arrived
        assert "x-end-to-end" in arrived

    @pytest.mark.parametrize(
        "authorization",
        [f"Bearer {CONTROL_TOKEN}", f"bearer  {CONTROL_TOKEN}", f"BEARER {CONTROL_TOKEN} "],
    )
    async def test_the_control_token_never_reaches_the_upstream_however_written(
        self, authorization: str, aiohttp_client: AiohttpClient
    ) -> None:
        async with MisbehavingUpstream(echo_headers) as url:
            proxy = await aiohttp_client(proxy_app(url, control_token=CONTROL_TOKEN))
            headers = {"Authorization": authorization, "x-api-key": KEY}
            async with proxy.post("/v1/flags/evaluate", json=EVALUATE, headers=headers) as r:
                arrived = await r.json()
        assert "authorization" not in arrived
        assert "x-api-key" in arrived


class LargeAnswers:
    """Answers of `size` bytes, each sent in two halves with a pause between, the second
    half only once every answer asked for has sent its first: they are in flight together."""

    def __init__(self, size: int, together: int) -> None:
        self.size, self.together = size, together
        self.first_halves_sent = 0
        self.all_started = asyncio.Event()

    async def __call__(self, received: Received, writer: asyncio.StreamWriter) -> None:
        body = json.dumps({"filler": "x" * (self.size - 14)}).encode()
        length = f"Content-Length: {len(body)}"
        writer.write(head("200 OK", "Content-Type: application/json", length) + body[:-400])
        await writer.drain()
        self.first_halves_sent += 1
        if self.first_halves_sent == self.together:
            self.all_started.set()
        await asyncio.wait_for(self.all_started.wait(), HANG_GUARD_S)
        await asyncio.sleep(0.2)  # the proxy has read every first half by now
        writer.write(body[-400:])
        await writer.drain()


class TestAnswersInFlightTogether:
    async def test_past_the_bound_one_answer_is_a_502_that_names_the_option(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        """Each answer fits the bound alone, the two together do not."""
        async with MisbehavingUpstream(LargeAnswers(1000, together=2)) as url:
            proxy = await aiohttp_client(proxy_app(url, max_upstream_in_flight_bytes=1500))

            async def evaluate() -> tuple[int, Any]:
                async with proxy.post(
                    "/v1/flags/evaluate", json=EVALUATE, headers=bearer(KEY)
                ) as r:
                    return r.status, await r.json()

            answers = sorted(await asyncio.gather(evaluate(), evaluate()), key=lambda a: a[0])
            assert [status for status, _ in answers] == [200, 502]
            refused = answers[1][1]
            assert (refused["ok"], refused["error"]) == (False, "UPSTREAM_IN_FLIGHT_TOO_LARGE")
            assert "more than 1,500 bytes together" in refused["message"]
            assert "--max-upstream-in-flight-bytes" in refused["message"]
            assert KEY not in json.dumps(refused)

    async def test_the_bound_is_given_back_as_answers_end(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        async with MisbehavingUpstream(LargeAnswers(1000, together=1)) as url:
            proxy = await aiohttp_client(proxy_app(url, max_upstream_in_flight_bytes=1500))
            for _ in range(3):  # one after another, each alone in flight
                async with proxy.post(
                    "/v1/flags/evaluate", json=EVALUATE, headers=bearer(KEY)
                ) as r:
                    assert r.status == 200


class TestOneDeclarationPerRoute:
    """The forwarder charges and records what the route's handler does, from one declaration."""

    def test_a_blank_api_key_falls_back_to_the_token_as_the_handler_does(
        self, upstream: SpawnedStub
    ) -> None:
        flags = {"api_key": " ", "token": VENDOR_KEY, "distinct_id": "user-1"}
        seen = []
        for target in (None, upstream.url):
            upstreamed = ("--upstream", target) if target else ()
            with spawn_stub(*upstreamed, "--rate-limit", "1", read_log=False) as stub:
                seen.append([request(stub.url + "/flags?v=2", flags)[0] for _ in range(2)])
        assert seen == [[200, 429], [200, 429]]

    def test_a_proxied_registration_is_recorded_once_on_each_side(
        self, proxy: SpawnedStub, upstream: SpawnedStub
    ) -> None:
        target = {"targetingKey": "user-1", "kind": "user", "properties": {"plan": "pro"}}
        status, body = request(proxy.url + "/v1/targets/register", target, bearer(KEY))
        assert (status, body["targetingKey"]) == (200, "user-1")
        assert StubClient(proxy.url).targets() == StubClient(upstream.url).targets() == [target]
        assert [r.route for r in StubClient(proxy.url).requests()] == ["register"]

    def test_a_registration_the_upstream_refuses_is_not_recorded(
        self, proxy: SpawnedStub, upstream: SpawnedStub
    ) -> None:
        status, _ = request(proxy.url + "/v1/targets/register", {"kind": "user"}, bearer(KEY))
        assert status == 400
        assert StubClient(proxy.url).targets() == []


class TestAKeyInThePath:
    def test_is_redacted_in_the_log(self, upstream: SpawnedStub) -> None:
        with spawn_stub("--upstream", upstream.url, "--log-level", "debug") as proxy:
            request(proxy.url + "/v1/keys/project-api-key_TOPSECRET", {}, bearer(KEY))
            proxy.process.terminate()
            proxy.process.wait(5)
            assert proxy.process.stderr is not None
            log = proxy.process.stderr.read()
        assert "/v1/keys/project-api-key_[redacted]" in log
        assert "TOPSECRET" not in log
