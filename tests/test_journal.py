"""The journal says when and how each request came: its arrival on one monotonic clock, the
headers the client sent (secrets reduced to their family), the Retry-After it was answered
with; and the control client's timing helpers read it, through the published clients."""

from __future__ import annotations

import asyncio
import gzip
import json
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from fireweave import RegisterTargetOptions
from posthog import Posthog

from conftest import HANG_GUARD_S, AiohttpClient, OpenFireweave, SpawnedStub
from stub import StubConfig, create_app
from stub.client import StubClient
from stub.control.journal import RENDERED_AT_ONCE, rendered_in_turns
from stub.state import MAX_RECORDED_HEADER_BYTES, MAX_RECORDED_HEADERS, RequestRecord
from stub.upstream.transport import upstream_of

EVALUATE = "/v1/flags/evaluate"


async def journal(client: TestClient[Any, Any]) -> list[dict[str, Any]]:
    answer = await client.get("/_test/requests")
    entries: list[dict[str, Any]] = (await answer.json())["requests"]
    return entries


class TestArrival:
    async def test_arrival_is_milliseconds_on_one_clock_so_gaps_can_be_computed(
        self, client: TestClient[Any, Any]
    ) -> None:
        body = {"targetingKey": "u"}
        await client.post(EVALUATE, json=body, headers={"x-api-key": "k"})
        time.sleep(0.05)
        await client.post(EVALUATE, json=body, headers={"x-api-key": "k"})
        first, second = await journal(client)
        assert 0 <= first["arrivedMs"] < second["arrivedMs"]
        assert second["arrivedMs"] - first["arrivedMs"] >= 50


class TestHeaders:
    @pytest.mark.parametrize(
        ("name", "sent", "shown"),
        [
            ("Authorization", "Bearer project-api-key_s3cr3t", "Bearer project-api-key_[redacted]"),
            ("Authorization", "bearer svc_public_s3cr3t", "bearer svc_public_[redacted]"),
            ("Authorization", "Bearer svc_org_s3cr3t", "Bearer svc_org_[redacted]"),
            ("Authorization", "Bearer s3cr3t", "Bearer [redacted]"),
            ("Authorization", "s3cr3t", "[redacted]"),
            ("X-Api-Key", "phc_s3cr3t", "phc_[redacted]"),
            ("Cookie", "session=s3cr3t; theme=s3cr3t", "session=[redacted]; theme=[redacted]"),
            ("X-Note", "sent svc_org_acme_s3cr3t here", "sent svc_org_[redacted] here"),
        ],
    )
    async def test_secrets_keep_their_family_and_lose_the_key(
        self, client: TestClient[Any, Any], name: str, sent: str, shown: str
    ) -> None:
        headers = {name: sent}
        if name.lower() != "x-api-key":
            headers["x-api-key"] = "k"
        await client.post(EVALUATE, json={"targetingKey": "u"}, headers=headers)
        (entry,) = await journal(client)
        assert entry["headers"][name.lower()] == shown
        assert "s3cr3t" not in json.dumps(entry)

    async def test_a_query_token_keeps_its_family(self, client: TestClient[Any, Any]) -> None:
        await client.get("/api/feature_flag/local_evaluation?token=phc_s3cr3t")
        (entry,) = await journal(client)
        assert entry["query"] == {"token": "phc_[redacted]"}

    async def test_what_a_client_sent_is_there_by_lower_case_name(
        self, client: TestClient[Any, Any]
    ) -> None:
        body = gzip.compress(json.dumps({"events": []}).encode())
        await client.post(
            "/v1/capture",
            data=body,
            headers={
                "x-api-key": "k",
                "Content-Encoding": "gzip",
                "User-Agent": "my-client/1.2",
                "X-Trace": "a",
            },
        )
        (entry,) = await journal(client)
        assert entry["status"] == 200
        headers = entry["headers"]
        assert (headers["content-encoding"], headers["user-agent"]) == ("gzip", "my-client/1.2")
        assert headers["x-trace"] == "a"

    async def test_headers_are_bounded_in_count_and_size(
        self, client: TestClient[Any, Any]
    ) -> None:
        many = {f"X-H{n}": "v" for n in range(MAX_RECORDED_HEADERS + 20)}
        many["X-H0"] = "v" * 4000
        await client.post(EVALUATE, json={"targetingKey": "u"}, headers={"x-api-key": "k", **many})
        (entry,) = await journal(client)
        assert len(entry["headers"]) == MAX_RECORDED_HEADERS
        assert len(entry["headers"]["x-h0"]) == MAX_RECORDED_HEADER_BYTES


class TestRetryAfter:
    @pytest.mark.parametrize(
        ("fault", "retry_after"),
        [
            ({"mode": "429", "retryAfter": 3}, 3),
            ({"mode": "status", "status": 503, "retryAfter": 2}, 2),
            ({"mode": "status", "status": 502}, None),
            ({"mode": "500"}, None),
        ],
    )
    async def test_the_retry_after_answered_is_recorded_and_sent(
        self, client: TestClient[Any, Any], fault: dict[str, Any], retry_after: int | None
    ) -> None:
        await client.post("/_test/fault", json={**fault, "applyTo": "evaluate"})
        answer = await client.post(EVALUATE, json={"targetingKey": "u"}, headers={"x-api-key": "k"})
        sent = answer.headers.get("Retry-After")
        assert sent == (None if retry_after is None else str(retry_after))
        (entry,) = await journal(client)
        assert entry["retryAfter"] == retry_after


class TestThroughRealClients:
    def test_the_published_client_retries_register_at_once_whatever_retry_after_says(
        self, live_stub: SpawnedStub, open_fireweave: OpenFireweave
    ) -> None:
        control = StubClient(live_stub.url)
        control.arm("429", apply_to="register", ttl_requests=1, retry_after=1)
        _, runtime, _ = open_fireweave(live_stub.url, "project-api-key_journal")
        result = runtime.register_target("user-1", RegisterTargetOptions(kind="user"))
        assert result.ok is True
        (gap,) = control.gaps_ms("register")
        assert 0 < gap < 1000
        with pytest.raises(AssertionError, match=r"retried 'register' before Retry-After") as e:
            control.assert_no_retry_before_retry_after("register")
        assert "was answered 429 with Retry-After: 1" in str(e.value)
        (first, second) = control.requests("register")
        assert second.header("User-Agent") == first.header("user-agent") is not None
        assert first.header("authorization") == "Bearer project-api-key_[redacted]"

    def test_a_client_that_waits_for_retry_after_passes(self, live_stub: SpawnedStub) -> None:
        control = StubClient(live_stub.url)
        control.arm("status", status=503, apply_to="register", ttl_requests=1, retry_after=1)
        statuses = []
        for _ in range(2):
            status, retry_after = register(live_stub.url)
            statuses.append(status)
            time.sleep(retry_after)
        assert statuses == [503, 200]
        control.assert_no_retry_before_retry_after("register")
        assert control.gaps_ms("register")[0] >= 1000

    def test_the_definitions_poll_sends_if_none_match_with_the_etag_it_was_given(
        self, live_stub: SpawnedStub
    ) -> None:
        posthog = Posthog(
            "phc_journal", host=live_stub.url, secret_key="phs_journal", poll_interval=3600
        )
        try:
            load: Callable[[], None] = posthog.load_feature_flags  # untyped in posthog
            load()
            load()
        finally:
            posthog.shutdown()
        first, second = StubClient(live_stub.url).requests("definitions")
        assert first.header("If-None-Match") is None
        assert second.header("If-None-Match") is not None
        assert second.status == 304
        assert second.query["token"] == "phc_[redacted]"
        assert first.header("Authorization") == "Bearer phs_[redacted]"


def register(url: str) -> tuple[int, int]:
    """One register over plain HTTP: the status, and the Retry-After asked (0: none)."""
    request = urllib.request.Request(
        url + "/v1/targets/register",
        data=json.dumps({"targetingKey": "u", "kind": "user"}).encode(),
        headers={"Authorization": "Bearer project-api-key_journal"},
    )
    try:
        with urllib.request.urlopen(request, timeout=HANG_GUARD_S) as answer:
            return answer.status, 0
    except urllib.error.HTTPError as error:
        with error:
            return error.code, int(error.headers.get("Retry-After", 0))


ECHOED_KEY = "sekret-key-0123456789"
"""A key of no known family: only what the request presented says it is one."""


def _echoing_upstream() -> web.Application:
    """A service that says back the key it was sent, in its body and in its headers, as a
    careless error page does."""

    async def echo(request: web.Request) -> web.Response:
        key = request.headers.get("Authorization", "").partition(" ")[2]
        body = {"ok": False, "message": f"key {key} is not valid here", "api_key": key}
        return web.json_response(body, status=401, headers={"X-Echo": key, f"X-{key}": "y"})

    app = web.Application()
    app.router.add_route("*", "/{path:.*}", echo)
    return app


class TestNothingInTheJournalShowsAKey:
    async def test_an_upstreams_answer_that_echoes_it(self, aiohttp_client: AiohttpClient) -> None:
        upstream = await aiohttp_client(_echoing_upstream())
        config = StubConfig(upstream=upstream_of(str(upstream.make_url(""))))
        proxy = await aiohttp_client(create_app(config))
        sent = {"Authorization": f"Bearer {ECHOED_KEY}"}
        for path in (EVALUATE, "/v1/nowhere"):  # a route's answer, and an unknown path's
            answer = await proxy.post(path, json={"targetingKey": "u"}, headers=sent)
            assert ECHOED_KEY in await answer.text()  # the client gets what the service said
        listed = await (await proxy.get("/_test/requests", params={"bodies": "true"})).text()
        seq = json.loads(listed)["requests"][-1]["seq"]
        one = await (await proxy.get(f"/_test/requests/{seq}")).text()
        snapshot = await (await proxy.get("/_test/ui/snapshot")).text()
        for shown in (listed, one, snapshot):
            assert ECHOED_KEY not in shown
            assert ECHOED_KEY[:12] not in shown
        assert "key [redacted] is not valid here" in listed
        assert '"x-echo":"[redacted]"' in listed.lower()

    async def test_a_key_in_a_header_name_or_in_the_path(
        self, client: TestClient[Any, Any]
    ) -> None:
        await client.post(
            "/v1/phc_s3cr3tinpath/evaluate",
            json={},
            headers={"Authorization": f"Bearer {ECHOED_KEY}", "X-Keyphc_s3cr3tname": "y"},
        )
        await client.post(f"/v1/{ECHOED_KEY}/x", json={}, headers={"X-Api-Key": ECHOED_KEY})
        shown = await (await client.get("/_test/requests", params={"bodies": "true"})).text()
        for secret in ("s3cr3tinpath", "s3cr3tname", ECHOED_KEY):
            assert secret not in shown
        first, second = json.loads(shown)["requests"]
        assert first["path"] == "/v1/phc_[redacted]/evaluate"
        assert "x-keyphc_[redacted]" in first["headers"]
        assert second["path"] == "/v1/[redacted]/x"
        assert "/v1/[redacted]/x" in second["curl"]


class TestAJournalInFullTakesTurns:
    async def test_other_requests_are_served_between_its_parts(self) -> None:
        """/_test/requests?bodies=true and the snapshot render through this: with 120 MB kept,
        rendering them at once held /health for a second."""
        happened: list[str] = []
        weight = RENDERED_AT_ONCE + 1  # of its bodies: each record alone is a part
        heavy = RequestRecord(
            seq=1, method="POST", target="/x", route=None, status=200, fault=None, arrived=0.0,
            duration_s=0.0, warning=None, headers=(), client_gone=False, upstreamed=None,
            body=None, answer_headers=None, answer_body=None, weight=weight,
        )  # fmt: skip

        async def meanwhile() -> None:
            for _ in range(3):
                happened.append("other")
                await asyncio.sleep(0)

        def render(record: RequestRecord) -> dict[str, Any]:
            happened.append("rendered")
            return {}

        other = asyncio.ensure_future(meanwhile())
        await rendered_in_turns([heavy] * 3, render)
        await other
        assert happened[:4] == ["rendered", "other", "rendered", "other"]
