"""The verdicts every helper reports (`/_test/checks/*`), the journal's order, the offline
address and namespaces named after a test: what the stub decides once for every language."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from conftest import AUTH, HANG_GUARD_S, AiohttpClient, SpawnedStub
from stub import StubConfig, create_app

Client = TestClient[Any, Any]
EVALUATE = "/v1/flags/evaluate"
ASK = {"targetingKey": "user-1", "flagKeys": ["checkout-v2"]}


def exposure(flag: str, target: str, variant: str) -> dict[str, Any]:
    return {"type": "exposure", "flagKey": flag, "targetingKey": target, "variant": variant}


async def verdict(client: Client, check: str, **query: str) -> dict[str, Any]:
    answer = await client.get(f"/_test/checks/{check}", params=query)
    assert answer.status == 200, await answer.text()
    body: dict[str, Any] = await answer.json()
    assert body["check"] == check
    return body


async def refusal(client: Client, path: str) -> tuple[int, str]:
    answer = await client.get(path)
    return answer.status, (await answer.json())["message"]


class TestRetryAfter:
    async def test_a_retry_sooner_than_retry_after_fails_naming_both_requests(
        self, client: Client
    ) -> None:
        arming = {"mode": "429", "retryAfter": 2, "ttlRequests": 1, "applyTo": ["evaluate"]}
        await client.post("/_test/fault", json=arming)
        for _ in range(2):
            await client.post(EVALUATE, json=ASK, headers=AUTH)
        found = await verdict(client, "retry-after", route="evaluate")
        assert found["passed"] is False
        assert re.fullmatch(
            r"retried 'evaluate' before Retry-After allowed:\n"
            r"  #2 came \d+ ms after #1 was answered 429 with Retry-After: 2",
            found["message"],
        ), found["message"]

    async def test_every_route_is_judged_on_its_own(self, client: Client) -> None:
        """A 429 on evaluate says nothing of when capture may be sent."""
        arming = {"mode": "429", "retryAfter": 2, "ttlRequests": 1, "applyTo": ["evaluate"]}
        await client.post("/_test/fault", json=arming)
        await client.post(EVALUATE, json=ASK, headers=AUTH)
        await client.post("/v1/capture", json={"events": []}, headers=AUTH)
        found = await verdict(client, "retry-after")
        assert found == {
            "check": "retry-after",
            "passed": True,
            "message": "no request came back before Retry-After allowed (1 answer carried one)",
        }

    async def test_the_rate_limits_retry_after_counts_too(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(rate_limit=1)))
        for _ in range(3):
            await client.post(EVALUATE, json=ASK, headers=AUTH)
        found = await verdict(client, "retry-after", route="evaluate")
        assert found["passed"] is False
        assert "#3 came" in found["message"]
        assert "answered 429 with Retry-After: 1" in found["message"]
        listed = (await (await client.get("/_test/requests")).json())["requests"]
        assert [r["retryAfter"] for r in listed] == [None, 1, 1]  # the journal says so too


class TestNoRequest:
    async def test_it_lists_what_was_sent_to_the_route(self, client: Client) -> None:
        await client.post(EVALUATE, json=ASK, headers=AUTH)
        assert (await verdict(client, "no-request", route="capture")) == {
            "check": "no-request",
            "passed": True,
            "message": "no request to route 'capture'",
        }
        found = await verdict(client, "no-request", route="evaluate")
        assert found["passed"] is False
        assert found["message"] == (
            "expected no request to route 'evaluate', got 1:\n  #1 POST /v1/flags/evaluate -> 200"
        )

    async def test_without_a_route_it_means_any_route(self, client: Client) -> None:
        assert (await verdict(client, "no-request"))["message"] == "no request"
        await client.post("/v1/capture", json={"events": []}, headers=AUTH)
        found = await verdict(client, "no-request")
        assert found["passed"] is False
        assert found["message"] == "expected no request, got 1:\n  #1 POST /v1/capture -> 200"


class TestExposure:
    async def test_it_passes_on_a_match_and_lists_the_exposures_otherwise(
        self, client: Client
    ) -> None:
        events = [exposure("checkout-v2", "user-1", "b"), {"type": "signal", "name": "x"}]
        await client.post("/v1/capture", json={"events": events}, headers=AUTH)
        passed = await verdict(client, "exposure", flagKey="checkout-v2", targetingKey="user-1")
        assert passed["passed"] is True
        assert passed["message"] == "exposure of checkout-v2 for user-1 recorded"
        failed = await verdict(
            client, "exposure", flagKey="checkout-v2", targetingKey="user-1", variant="a"
        )
        assert failed == {
            "check": "exposure",
            "passed": False,
            "message": "no exposure of checkout-v2 for user-1 (variant a); exposures recorded:\n"
            "  checkout-v2 for user-1: variant b",
        }

    async def test_with_wait_ms_it_waits_for_the_exposure(self, client: Client) -> None:
        asked = client.get(
            "/_test/checks/exposure",
            params={"flagKey": "f", "targetingKey": "u", "waitMs": str(HANG_GUARD_S * 1000)},
        )
        waiting = asyncio.ensure_future(asked)
        sent = {"events": [exposure("f", "u", "on")]}
        await client.post("/v1/capture", json=sent, headers=AUTH)
        answer = await waiting
        assert (await answer.json())["passed"] is True

    async def test_a_missing_parameter_is_a_400_naming_it(self, client: Client) -> None:
        status, message = await refusal(client, "/_test/checks/exposure?flagKey=f")
        assert (status, message) == (400, "targetingKey: required (?targetingKey=...)")


class TestChecks:
    async def test_no_warnings_lists_the_requests_that_misused_a_key(self, client: Client) -> None:
        assert (await verdict(client, "no-warnings"))["passed"] is True
        await client.post(EVALUATE, json=ASK, headers={"Authorization": "Bearer svc_org_x1"})
        found = await verdict(client, "no-warnings")
        assert found["passed"] is False
        assert found["message"].startswith(
            "1 request used a key where the service refuses it:\n  #1 POST /v1/flags/evaluate: "
        )

    async def test_an_unknown_check_is_a_404_naming_the_checks(self, client: Client) -> None:
        assert await refusal(client, "/_test/checks/retries") == (
            404,
            "check: no check 'retries' (the checks: retry-after, no-request, exposure, "
            "no-warnings)",
        )

    async def test_a_check_reads_its_own_namespace_only(self, client: Client) -> None:
        await client.post("/_test/namespaces", json={"name": "other"})
        await client.post("/ns/other" + EVALUATE, json=ASK, headers=AUTH)
        assert (await verdict(client, "no-request", route="evaluate"))["passed"] is True
        answer = await client.get("/ns/other/_test/checks/no-request?route=evaluate")
        assert (await answer.json())["passed"] is False


class TestArrivalOrder:
    def test_a_delayed_request_is_listed_before_one_that_came_after_it(
        self, live_stub: SpawnedStub
    ) -> None:
        arming = {"mode": "delay", "delayMs": 1500, "ttlRequests": 1, "applyTo": ["evaluate"]}
        live_stub.post("/_test/fault", arming)
        delayed = threading.Thread(target=_evaluate, args=(live_stub.url, "held"))
        delayed.start()
        guard = time.monotonic() + HANG_GUARD_S
        while live_stub.get("/_test/fault")["armed"]:  # gone once it fired: the first arrived
            assert time.monotonic() < guard, "the delayed request never arrived"
        _evaluate(live_stub.url, "quick")
        delayed.join(HANG_GUARD_S)
        wanted = f"/_test/requests?route=evaluate&min=2&waitMs={HANG_GUARD_S * 1000}&bodies=true"
        arrived = live_stub.get(wanted)["requests"]
        ended = live_stub.get("/_test/requests?order=end")["requests"]
        assert [json.loads(r["body"]["text"])["targetingKey"] for r in arrived] == [
            "held",
            "quick",
        ]
        assert [r["seq"] for r in ended] == [arrived[1]["seq"], arrived[0]["seq"]]

    async def test_a_bad_order_is_a_400(self, client: Client) -> None:
        assert await refusal(client, "/_test/requests?order=newest") == (
            400,
            "order: expected arrival or end, got 'newest'",
        )


def _evaluate(url: str, who: str) -> None:
    body = json.dumps({"targetingKey": who, "flagKeys": ["checkout-v2"]}).encode()
    request = urllib.request.Request(url + EVALUATE, data=body, headers=AUTH, method="POST")
    with urllib.request.urlopen(request, timeout=HANG_GUARD_S) as answer:
        answer.read()


class TestOffline:
    def test_nothing_listens_at_the_offline_address(self, live_stub: SpawnedStub) -> None:
        offline = live_stub.get("/_test/offline")["url"]
        assert offline.startswith("http://127.0.0.1:")
        assert offline != live_stub.url
        with pytest.raises(urllib.error.URLError) as refused:
            _evaluate(offline, "user-1")
        assert isinstance(refused.value.reason, ConnectionRefusedError)
        assert live_stub.get("/ns/any/_test/offline")["url"] == offline  # one for the stub


class TestNamedAfterATest:
    @pytest.mark.parametrize(
        ("test", "readable"),
        [
            ("TestCheckout::test_retries[503]", "TestCheckout-test_retries-503"),
            ("TestCheckout/retries_after_503", "TestCheckout-retries_after_503"),
            ("CheckoutTest#retries()", "CheckoutTest-retries"),
            ("日本語", "test"),
            ("x" * 200, "x" * 27 + ".." + "x" * 26),
            (
                "ParallelTest#eachTestSeesItsOwnValueFaultsAndRequests()[repetition 3 of 5]",
                "ParallelTest-eachTestSeesIt..Requests-repetition-3-of-5",
            ),
        ],
    )
    async def test_the_stub_makes_a_valid_readable_distinct_name(
        self, client: Client, test: str, readable: str
    ) -> None:
        names = []
        for _ in range(2):
            answer = await client.post("/_test/namespaces", json={"test": test})
            assert answer.status == 201
            names.append((await answer.json())["name"])
        for name in names:
            assert re.fullmatch(re.escape(readable) + r"-[0-9a-f]{8}", name), name
        assert names[0] != names[1]
        answer = await client.post(f"/ns/{names[0]}{EVALUATE}", json=ASK, headers=AUTH)
        assert answer.status == 200


class TestRouteNames:
    @pytest.mark.parametrize(
        "path",
        [
            "/_test/requests?route=evalute",
            "/_test/checks/no-request?route=evalute",
            "/_test/checks/retry-after?route=evalute",
        ],
    )
    async def test_a_misspelt_route_is_a_400_not_an_empty_list(
        self, client: Client, path: str
    ) -> None:
        status, message = await refusal(client, path)
        assert status == 400
        assert message.startswith("route: no route 'evalute' (the routes: evaluate, capture,")

    @pytest.mark.parametrize("route", ["evaluate", "projects", "projects.create", "preflight"])
    async def test_a_route_a_resource_or_preflight_is_taken(
        self, client: Client, route: str
    ) -> None:
        answer = await client.get(f"/_test/requests?route={route}")
        assert answer.status == 200
