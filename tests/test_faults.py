"""The fault engine on the wire: every fault as a client sees it, and when each one fires."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient

from conftest import AUTH, HANG_GUARD_S
from raw_socket import raw_exchange
from stub.faults.arming import SELECTORS
from stub.faults.modes import FAULTS, MODE_PARAMETERS, FaultMode
from stub.namespaces import NAMESPACES

EVALUATE = "/v1/flags/evaluate"
BODY = {"targetingKey": "u1", "flagKeys": ["new-checkout"]}
NEVER_ENDING_DELAY_MS = 10 * HANG_GUARD_S * 1000
"""A delay no test waits out: ten times the hang guard, so a request held by it that ends
within `HANG_GUARD_S` was cut short, however slow the machine."""


async def requests_log(client: TestClient[Any, Any]) -> list[dict[str, Any]]:
    log: list[dict[str, Any]] = (await (await client.get("/_test/requests")).json())["requests"]
    return log


async def logged(client: TestClient[Any, Any]) -> list[dict[str, Any]]:
    """The journal once it holds an entry. The wait is bounded only by `HANG_GUARD_S`, which
    guards a hang (an entry that never comes) and is not a speed budget."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not (log := await requests_log(client)):
        assert time.monotonic() < deadline, f"no request logged within {HANG_GUARD_S} s"
        await asyncio.sleep(0.05)
    return log


async def held(client: TestClient[Any, Any]) -> None:
    """Returns once the in-process stub is serving a request (one a delay holds): what a test
    of a request in flight waits for, rather than a sleep a busy machine can outlast.
    `HANG_GUARD_S` guards a request that never arrives; it is not a speed budget."""
    state = client.app[NAMESPACES].default
    deadline = time.monotonic() + HANG_GUARD_S
    while state.in_flight < 1:
        assert time.monotonic() < deadline, f"no request in flight within {HANG_GUARD_S} s"
        await asyncio.sleep(0.01)


async def arm(client: TestClient[Any, Any], **document: Any) -> dict[str, Any]:
    response = await client.post("/_test/fault", json=document)
    assert response.status == 200, await response.text()
    armed: dict[str, Any] = (await response.json())["fault"]
    return armed


async def evaluate_status(client: TestClient[Any, Any], **headers: str) -> int:
    response = await client.post(EVALUATE, json=BODY, headers={**AUTH, **headers})
    await response.read()
    return response.status


class TestVocabulary:
    def test_the_registry_covers_every_mode_and_nothing_else(self) -> None:
        assert set(FAULTS) == set(FaultMode)

    def test_each_fault_function_is_named_by_its_mode(self) -> None:
        for mode, function in FAULTS.items():
            assert function.__name__ == mode.name.lower()


class TestErrorAnswers:
    @pytest.mark.parametrize(
        ("mode", "status", "error", "extra"),
        [
            (
                "401",
                401,
                "UNAUTHORIZED",
                {"type": "authentication_error", "code": "invalid_api_key"},
            ),
            ("429", 429, "RATE_LIMITED", {"type": "throttled_error", "code": "throttled"}),
            ("500", 500, "INTERNAL", {}),
        ],
    )
    async def test_error_modes_answer_json_with_their_status(
        self,
        client: TestClient[Any, Any],
        mode: str,
        status: int,
        error: str,
        extra: dict[str, str],
    ) -> None:
        response = await client.post(EVALUATE, json=BODY, headers={"X-Svc-Test-Fault": mode})
        assert response.status == status
        assert response.content_type == "application/json"
        assert await response.json() == {
            "ok": False,
            "error": error,
            "message": f"svc-stub fault: {mode}",
            **extra,
        }

    async def test_429_says_retry_after_one_second_by_default(
        self, client: TestClient[Any, Any]
    ) -> None:
        response = await client.post(EVALUATE, json=BODY, headers={"X-Svc-Test-Fault": "429"})
        assert response.headers["Retry-After"] == "1"

    async def test_retry_after_can_be_set_per_request_and_when_armed(
        self, client: TestClient[Any, Any]
    ) -> None:
        response = await client.post(
            EVALUATE, json=BODY, headers={"X-Svc-Test-Fault": "429", "X-Svc-Test-Retry-After": "7"}
        )
        assert response.headers["Retry-After"] == "7"
        await arm(client, mode="429", retryAfter=3)
        response = await client.post(EVALUATE, json=BODY)
        assert response.headers["Retry-After"] == "3"

    @pytest.mark.parametrize("code", [502, 503, 504, 418])
    async def test_status_answers_any_status_with_a_json_body(
        self, client: TestClient[Any, Any], code: int
    ) -> None:
        response = await client.post(f"{EVALUATE}?fault=status&status={code}", json=BODY)
        assert response.status == code
        assert (await response.json())["error"] == f"HTTP_{code}"

    async def test_an_armed_body_and_status_replace_the_default_answer(
        self, client: TestClient[Any, Any]
    ) -> None:
        await arm(client, mode="500", status=503, body={"custom": True})
        response = await client.post(EVALUATE, json=BODY)
        assert (response.status, await response.json()) == (503, {"custom": True})


class TestInvalidJson:
    async def test_a_200_json_typed_body_that_does_not_parse(
        self, client: TestClient[Any, Any]
    ) -> None:
        response = await client.post(
            EVALUATE, json=BODY, headers={"X-Svc-Test-Fault": "invalid_json"}
        )
        assert (response.status, response.content_type) == (200, "application/json")
        assert await response.read() == b"{not-json"

    async def test_the_armed_body_is_sent_as_it_is(self, client: TestClient[Any, Any]) -> None:
        await arm(client, mode="invalid_json", body='{"half": ')
        assert await (await client.post(EVALUATE, json=BODY)).read() == b'{"half": '


class TestQuotaLimited:
    async def test_evaluate_answers_every_requested_key_not_found_with_a_boolean_flag(
        self, client: TestClient[Any, Any]
    ) -> None:
        body = {"targetingKey": "u", "flagKeys": ["new-checkout", "nope"]}
        response = await client.post(
            EVALUATE, json=body, headers={"X-Svc-Test-Fault": "quota_limited"}
        )
        answer = await response.json()
        assert response.status == 200
        assert answer["quotaLimited"] is True
        assert answer["decisions"] == [
            {"flagKey": key, "found": False, "value": None, "reason": "ERROR"}
            for key in ("new-checkout", "nope")
        ]

    async def test_evaluate_without_keys_answers_for_every_served_flag(
        self, client: TestClient[Any, Any]
    ) -> None:
        response = await client.post(
            EVALUATE, json={"targetingKey": "u"}, headers={"X-Svc-Test-Fault": "quota_limited"}
        )
        decisions = (await response.json())["decisions"]
        assert len(decisions) > 5
        assert all(d["found"] is False for d in decisions)

    @pytest.mark.parametrize("path", ["/v1/capture", "/v1/targets/register"])
    async def test_capture_and_register_get_a_402_and_record_nothing(
        self, client: TestClient[Any, Any], path: str
    ) -> None:
        body = {"targetingKey": "u", "events": [{"type": "event"}]}
        response = await client.post(
            path, json=body, headers={**AUTH, "X-Svc-Test-Fault": "quota_limited"}
        )
        assert response.status == 402
        assert (await response.json())["error"] == "QUOTA_LIMITED"
        events = await (await client.get("/_test/events")).json()
        assert (events["svcEvents"], events["targets"]) == ([], [])


class TestTransportFaults:
    """Raw sockets: what arrives on the wire, byte for byte, and how the connection ends."""

    async def test_truncated_sends_full_length_headers_then_part_of_the_body_then_eof(
        self, client: TestClient[Any, Any]
    ) -> None:
        exchange = await raw_exchange(client, fault="truncated")
        assert exchange.head.startswith(b"HTTP/1.1 200 OK\r\n")
        length = exchange.content_length
        assert length is not None
        assert 1 <= len(exchange.body) < length
        assert abs(len(exchange.body) - length // 2) <= 1
        assert exchange.ending == "eof"

    async def test_reset_resets_the_connection_with_no_response(
        self, client: TestClient[Any, Any]
    ) -> None:
        exchange = await raw_exchange(client, fault="reset")
        assert (exchange.head, exchange.ending) == (b"", "reset")

    async def test_empty_response_closes_cleanly_before_a_single_byte(
        self, client: TestClient[Any, Any]
    ) -> None:
        exchange = await raw_exchange(client, fault="empty_response")
        assert (exchange.head, exchange.body, exchange.ending) == (b"", b"", "eof")

    async def test_hang_answers_nothing_until_the_client_gives_up(
        self, client: TestClient[Any, Any]
    ) -> None:
        exchange = await raw_exchange(client, fault="hang", read_timeout=0.6)
        assert (exchange.head, exchange.ending) == (b"", "timeout")
        assert (await client.get("/health")).status == 200

    async def test_slow_body_dribbles_the_normal_answer_over_delay_ms(
        self, client: TestClient[Any, Any]
    ) -> None:
        started = time.monotonic()
        exchange = await raw_exchange(client, fault="slow_body", params={"Delay-Ms": "400"})
        assert time.monotonic() - started >= 0.35
        assert exchange.content_length == len(exchange.body)
        assert b'"flagKey":"new-checkout","found":true' in exchange.body
        assert exchange.chunks > 1

    async def test_every_transport_fault_leaves_the_stub_healthy_and_logged(
        self, client: TestClient[Any, Any]
    ) -> None:
        for fault in ("truncated", "reset", "empty_response"):
            await raw_exchange(client, fault=fault)
        assert (await client.get("/health")).status == 200
        log = await requests_log(client)
        assert [(e["fault"]["mode"], e["status"]) for e in log] == [
            ("truncated", 200),
            ("reset", None),
            ("empty_response", None),
        ]


class TestDelay:
    async def test_delay_answers_normally_after_delay_ms(
        self, client: TestClient[Any, Any]
    ) -> None:
        started = time.monotonic()
        response = await client.post(
            EVALUATE,
            json=BODY,
            headers={**AUTH, "X-Svc-Test-Fault": "delay", "X-Svc-Test-Delay-Ms": "300"},
        )
        assert time.monotonic() - started >= 0.29
        assert (await response.json())["decisions"][0]["found"] is True

    async def test_the_default_delay_outlasts_a_3_second_client_timeout(
        self, client: TestClient[Any, Any]
    ) -> None:
        armed = await arm(client, mode="delay")
        assert armed["delayMs"] == 10_000

    async def test_a_delayed_request_never_blocks_others(
        self, client: TestClient[Any, Any]
    ) -> None:
        # The delay is one no test waits out, and the other request is awaited with the hang guard
        # only: had the delay blocked it, it would wait the delay out.
        slow = asyncio.ensure_future(
            client.post(
                EVALUATE,
                json=BODY,
                headers={
                    **AUTH,
                    "X-Svc-Test-Fault": "delay",
                    "X-Svc-Test-Delay-Ms": str(NEVER_ENDING_DELAY_MS),
                },
            )
        )
        await held(client)
        assert await asyncio.wait_for(evaluate_status(client), HANG_GUARD_S) == 200
        assert not slow.done()
        slow.cancel()
        with pytest.raises(asyncio.CancelledError):
            await slow

    async def test_a_client_that_gave_up_during_the_delay_records_nothing(
        self, client: TestClient[Any, Any]
    ) -> None:
        # The client gives up once the stub is serving the request, during a delay no test waits
        # out, and the test waits for the request's journal entry: it comes only once the stub is
        # done with the request.
        await arm(client, mode="delay", delayMs=NEVER_ENDING_DELAY_MS, applyTo="capture")
        capture = asyncio.ensure_future(
            client.post("/v1/capture", json={"events": [{"n": 1}]}, headers=AUTH)
        )
        await held(client)
        capture.cancel()  # the client gives up during the delay
        with pytest.raises(asyncio.CancelledError):
            await capture
        (entry,) = await logged(client)
        assert entry["status"] is None
        assert (await (await client.get("/_test/events")).json())["svcEvents"] == []

    async def test_a_client_that_leaves_ends_the_wait_at_once(
        self, client: TestClient[Any, Any]
    ) -> None:
        # The delay is ten times the hang guard, and its entry must come within the guard: proof
        # the wait was cut short when the client left, yet no machine is too slow for it.
        delay = str(NEVER_ENDING_DELAY_MS)
        await arm(client, mode="delay", delayMs=NEVER_ENDING_DELAY_MS, applyTo="evaluate")
        exchange = await raw_exchange(
            client,
            fault="delay",
            params={"Delay-Ms": delay},
            once_sent=lambda: held(client),
            read_timeout=0.2,
        )
        assert exchange.ending == "timeout"  # the client giving up: the thing tested
        (entry,) = await logged(client)
        assert (entry["fault"]["mode"], entry["status"]) == ("delay", None)

    async def test_a_request_still_running_at_reset_is_not_logged_after_it(
        self, client: TestClient[Any, Any]
    ) -> None:
        # The reset comes once the stub is serving the request (after a sleep, on a busy machine
        # the request could arrive after the reset, and be logged).
        delayed = asyncio.ensure_future(
            client.post(
                EVALUATE,
                json=BODY,
                headers={**AUTH, "X-Svc-Test-Fault": "delay", "X-Svc-Test-Delay-Ms": "300"},
            )
        )
        await held(client)
        await client.post("/_test/reset")
        (await delayed).release()
        assert await requests_log(client) == []


class TestWhereFaultsFire:
    async def test_faults_fire_before_authentication_and_body_parsing(
        self, client: TestClient[Any, Any]
    ) -> None:
        response = await client.post(EVALUATE, data=b"{broken", headers={"X-Svc-Test-Fault": "500"})
        assert response.status == 500

    async def test_a_faulted_capture_records_no_event(self, client: TestClient[Any, Any]) -> None:
        response = await client.post(
            "/v1/capture", json={"events": [{"n": 1}]}, headers={**AUTH, "X-Svc-Test-Fault": "500"}
        )
        assert response.status == 500
        assert (await (await client.get("/_test/events")).json())["svcEvents"] == []

    async def test_control_routes_health_and_unknown_paths_are_never_faulted(
        self, client: TestClient[Any, Any]
    ) -> None:
        await arm(client, mode="500")
        header = {"X-Svc-Test-Fault": "500"}
        assert (await client.get("/health", headers=header)).status == 200
        assert (await client.get("/_test/events?fault=500", headers=header)).status == 200
        assert (await client.get("/no/such/route", headers=header)).status == 404

    async def test_apply_to_limits_an_armed_fault_to_its_routes(
        self, client: TestClient[Any, Any]
    ) -> None:
        await arm(client, mode="500", applyTo=["capture", "register"])
        assert await evaluate_status(client) == 200
        response = await client.post("/v1/capture", json={"events": []}, headers=AUTH)
        assert response.status == 500

    async def test_several_faults_are_armed_at_once_for_different_routes(
        self, client: TestClient[Any, Any]
    ) -> None:
        await arm(client, mode="401", applyTo="evaluate")
        await arm(client, mode="500", applyTo="capture")
        assert await evaluate_status(client) == 401
        response = await client.post("/v1/capture", json={"events": []}, headers=AUTH)
        assert response.status == 500
        armed = (await (await client.get("/_test/fault")).json())["armed"]
        assert [(f["mode"], f["applyTo"]) for f in armed] == [
            ("401", ["evaluate"]),
            ("500", ["capture"]),
        ]

    async def test_the_newest_armed_fault_wins_where_they_overlap(
        self, client: TestClient[Any, Any]
    ) -> None:
        await arm(client, mode="500")
        await arm(client, mode="429", applyTo="evaluate")
        assert await evaluate_status(client) == 429


class TestPrecedence:
    async def test_the_header_beats_the_query_and_both_beat_an_armed_fault(
        self, client: TestClient[Any, Any]
    ) -> None:
        await arm(client, mode="500", ttlRequests=5)
        response = await client.post(
            f"{EVALUATE}?fault=429", json=BODY, headers={"X-Svc-Test-Fault": "401"}
        )
        assert response.status == 401
        response = await client.post(f"{EVALUATE}?fault=429", json=BODY)
        assert response.status == 429
        assert await evaluate_status(client) == 500
        log = await requests_log(client)
        assert [e["fault"]["source"] for e in log] == ["header", "query", "armed"]

    async def test_a_per_request_fault_does_not_use_up_an_armed_one(
        self, client: TestClient[Any, Any]
    ) -> None:
        await arm(client, mode="500", ttlRequests=1)
        assert await evaluate_status(client, **{"X-Svc-Test-Fault": "429"}) == 429
        assert await evaluate_status(client) == 500
        assert await evaluate_status(client) == 200

    async def test_header_none_bypasses_armed_faults(self, client: TestClient[Any, Any]) -> None:
        await arm(client, mode="500")
        assert await evaluate_status(client, **{"X-Svc-Test-Fault": "none"}) == 200
        (entry,) = await requests_log(client)
        assert entry["fault"] == {"mode": "none", "source": "header"}

    @pytest.mark.parametrize(
        ("headers", "path", "message"),
        [
            (
                {"X-Svc-Test-Fault": "explode"},
                EVALUATE,
                "X-Svc-Test-Fault: unknown fault mode 'explode'",
            ),
            ({}, f"{EVALUATE}?fault=explode", "fault: unknown fault mode 'explode'"),
            (
                {"X-Svc-Test-Fault": "delay", "X-Svc-Test-Delay-Ms": "soon"},
                EVALUATE,
                "X-Svc-Test-Delay-Ms: expected an integer, got 'soon'",
            ),
            ({}, f"{EVALUATE}?fault=delay&delayMs=-5", "delayMs: expected a non-negative integer"),
            ({}, f"{EVALUATE}?fault=status", "status: required with mode status (e.g. 503)"),
        ],
    )
    async def test_a_bad_per_request_fault_is_a_400_naming_the_header_or_parameter(
        self, client: TestClient[Any, Any], headers: dict[str, str], path: str, message: str
    ) -> None:
        response = await client.post(path, json=BODY, headers=headers)
        assert response.status == 400
        assert (await response.json())["message"].startswith(message)

    @pytest.mark.parametrize(
        ("headers", "path", "hint"),
        [
            ({}, f"{EVALUATE}?fault=503", "; for a 503, use fault=status&status=503"),
            (
                {"X-Svc-Test-Fault": "418"},
                EVALUATE,
                "; for a 418, use X-Svc-Test-Fault: status with X-Svc-Test-Status: 418",
            ),
            # not a status a fault can answer with, or not one in ASCII digits: no hint
            ({}, f"{EVALUATE}?fault=150", "hang)"),
            ({}, f"{EVALUATE}?fault=600", "hang)"),
            ({}, f"{EVALUATE}?fault=0503", "hang)"),
            ({}, f"{EVALUATE}?fault=%C2%B2%C2%B2%C2%B2", "hang)"),
            ({"X-Svc-Test-Fault": "abc"}, EVALUATE, "hang)"),
        ],
    )
    async def test_a_status_guessed_as_a_mode_is_told_the_status_mode(
        self, client: TestClient[Any, Any], headers: dict[str, str], path: str, hint: str
    ) -> None:
        response = await client.post(path, json=BODY, headers=headers)
        assert response.status == 400
        message = (await response.json())["message"]
        assert "unknown fault mode" in message
        assert message.endswith(hint)


class TestCounts:
    async def test_ttl_requests_faults_exactly_that_many_under_concurrency(
        self, client: TestClient[Any, Any]
    ) -> None:
        await arm(client, mode="500", ttlRequests=50, applyTo="evaluate")
        statuses = await asyncio.gather(*(evaluate_status(client) for _ in range(200)))
        assert (statuses.count(500), statuses.count(200)) == (50, 150)
        assert (await (await client.get("/_test/fault")).json())["armed"] == []

    async def test_fail_the_first_n_then_succeed(self, client: TestClient[Any, Any]) -> None:
        await arm(client, mode="429", ttlRequests=2)
        assert [await evaluate_status(client) for _ in range(4)] == [429, 429, 200, 200]

    async def test_get_shows_what_remains_and_how_often_it_fired(
        self, client: TestClient[Any, Any]
    ) -> None:
        await arm(client, mode="500", ttlRequests=3)
        await evaluate_status(client)
        (armed,) = (await (await client.get("/_test/fault")).json())["armed"]
        assert (armed["ttlRequests"], armed["fired"]) == (2, 1)


class TestSequences:
    async def test_a_sequence_is_consumed_one_matching_request_at_a_time_then_disarms(
        self, client: TestClient[Any, Any]
    ) -> None:
        await arm(
            client,
            sequence=["429", {"mode": "status", "status": 503}, "none", "500"],
            applyTo="evaluate",
        )
        statuses = [await evaluate_status(client) for _ in range(5)]
        assert statuses == [429, 503, 200, 500, 200]
        log = await requests_log(client)
        assert [e["fault"] and (e["fault"]["mode"], e["fault"]["step"]) for e in log] == [
            ("429", 0),
            ("status", 1),
            ("none", 2),
            ("500", 3),
            None,
        ]

    async def test_steps_inherit_the_shared_parameters(self, client: TestClient[Any, Any]) -> None:
        armed = await arm(client, sequence=["429", {"mode": "429", "retryAfter": 9}], retryAfter=4)
        assert [step["retryAfter"] for step in armed["sequence"]] == [4, 9]

    async def test_other_routes_do_not_consume_a_sequence(
        self, client: TestClient[Any, Any]
    ) -> None:
        await arm(client, sequence=["500"], applyTo="evaluate")
        assert (await client.post("/v1/capture", json={"events": []}, headers=AUTH)).status == 200
        assert await evaluate_status(client) == 500


class TestProbability:
    async def pattern(self, client: TestClient[Any, Any], seed: int) -> list[int]:
        await client.post("/_test/reset")
        await arm(client, mode="500", probability=0.5, seed=seed)
        return [await evaluate_status(client) for _ in range(40)]

    async def test_a_seeded_probability_repeats_exactly(self, client: TestClient[Any, Any]) -> None:
        first = await self.pattern(client, seed=7)
        assert await self.pattern(client, seed=7) == first
        assert 5 < first.count(500) < 35

    async def test_another_seed_gives_another_pattern(self, client: TestClient[Any, Any]) -> None:
        assert await self.pattern(client, seed=1) != await self.pattern(client, seed=2)

    async def test_ttl_counts_only_the_requests_that_were_faulted(
        self, client: TestClient[Any, Any]
    ) -> None:
        await arm(client, mode="500", probability=0.3, seed=3, ttlRequests=4)
        statuses = [await evaluate_status(client) for _ in range(60)]
        assert statuses.count(500) == 4


class TestArmingDocument:
    async def test_defaults_are_all_routes_a_long_delay_and_no_count(
        self, client: TestClient[Any, Any]
    ) -> None:
        armed = await arm(client, mode="delay")
        assert armed["applyTo"] == sorted(SELECTORS)
        assert (armed["delayMs"], armed["ttlRequests"]) == (10_000, None)

    @pytest.mark.parametrize(
        ("method", "body"), [("DELETE", None), ("POST", {"mode": "none"})], ids=["delete", "none"]
    )
    async def test_faults_can_be_cleared(
        self, client: TestClient[Any, Any], method: str, body: dict[str, Any] | None
    ) -> None:
        await arm(client, mode="429")
        response = await client.request(method, "/_test/fault", json=body)
        assert response.status == 200
        assert (await (await client.get("/_test/fault")).json()) == {"armed": []}
        assert await evaluate_status(client) == 200

    @pytest.mark.parametrize(
        ("body", "message"),
        [
            (
                {"mode": "explode"},
                "mode: unknown fault mode 'explode' (valid: none, delay, 401, 429, "
                "500, invalid_json, truncated, quota_limited, status, reset, empty_response, "
                "slow_body, hang)",
            ),
            ({}, "mode: required"),
            (
                {"mode": "500", "applyTo": "nowhere"},
                "applyTo: unknown selector 'nowhere' (valid: all, runtime, vendor, management, "
                "evaluate, capture, register, flags, definitions, batch, whoami, projects, "
                "environments, control-points)",
            ),
            ({"mode": "500", "applyTo": []}, "applyTo: expected a selector or a non-empty list"),
            (
                {"mode": "500", "ttlRequests": 0},
                "ttlRequests: expected a positive integer, got a number 0",
            ),
            (
                {"mode": "500", "ttlRequests": "3"},
                "ttlRequests: expected a positive integer, got a string",
            ),
            ({"mode": "delay", "delayMs": -1}, "delayMs: expected a non-negative integer"),
            (
                {"mode": "500", "status": 99},
                "status: expected an HTTP status from 200 to 599, got 99",
            ),
            ({"mode": "status"}, "status: required with mode status"),
            (
                {"mode": "500", "probability": 0},
                "probability: expected a number above 0 and at most 1",
            ),
            ({"mode": "500", "probability": 1.5}, "probability: expected a number above 0"),
            ({"mode": "500", "seed": 1.5}, "seed: expected an integer"),
            ({"mode": "500", "colour": 1}, "colour: unknown field"),
            ({"sequence": []}, "sequence: expected a non-empty array of steps"),
            ({"sequence": ["500", 4]}, "sequence[1]: expected a mode or an object, got a number"),
            ({"sequence": ["500", "nope"]}, "sequence[1].mode: unknown fault mode 'nope'"),
            (
                {"mode": 503},
                "mode: unknown fault mode a number (valid: none, delay, 401, 429, 500, "
                "invalid_json, truncated, quota_limited, status, reset, empty_response, "
                'slow_body, hang); for a 503, use {"mode": "status", "status": 503}',
            ),
            ({"mode": "²"}, "mode: unknown fault mode '²' (valid: none"),
            ({"mode": True}, "mode: unknown fault mode a boolean (valid: none"),
            (
                {"sequence": ["500", "404"]},
                "sequence[1].mode: unknown fault mode '404' (valid: none, delay, 401, 429, 500, "
                "invalid_json, truncated, quota_limited, status, reset, empty_response, "
                'slow_body, hang); for a 404, use {"mode": "status", "status": 404}',
            ),
            ({"sequence": [{"mode": "500", "x": 1}]}, "sequence[0].x: unknown field"),
            ({"sequence": ["500"], "mode": "429"}, "sequence: give either mode"),
            ({"sequence": ["500"], "ttlRequests": 2}, "sequence: give either mode"),
        ],
    )
    async def test_bad_arming_is_a_400_naming_the_field_and_arms_nothing(
        self, client: TestClient[Any, Any], body: dict[str, Any], message: str
    ) -> None:
        response = await client.post("/_test/fault", json=body)
        assert response.status == 400
        error = await response.json()
        assert error["error"] == "INVALID_BODY"
        assert error["message"].startswith(message)
        assert (await (await client.get("/_test/fault")).json()) == {"armed": []}

    async def test_armed_faults_are_bounded(self, client: TestClient[Any, Any]) -> None:
        for _ in range(100):
            await arm(client, mode="500", applyTo="batch")
        response = await client.post("/_test/fault", json={"mode": "500"})
        assert response.status == 400
        assert "at most 100 faults" in (await response.json())["message"]


USED_PARAMETERS = {
    "delay": {"delayMs"},
    "401": {"status", "body"},
    "429": {"status", "body", "retryAfter"},
    "500": {"status", "body"},
    "invalid_json": {"status", "body"},
    "truncated": {"status", "body"},
    "quota_limited": {"status", "body"},
    "status": {"status", "body", "retryAfter"},
    "reset": set(),
    "empty_response": set(),
    "slow_body": {"delayMs"},
    "hang": set(),
}
"""What each mode's answer is shaped by, as docs/reference/faults.md tells it: written out here
rather than read from MODE_PARAMETERS, so a slip in either is caught by the other."""
PARAMETERS_AS_ARMED = {"delayMs": 5, "status": 503, "body": {"down": True}, "retryAfter": 7}
PARAMETERS_BY_DEFAULT = {"delayMs": 10_000, "status": None, "body": None, "retryAfter": 1}
"""`status` and `body` null: the mode's own."""
STATUS_REQUIRED = {"status": 503}
"""What an arming of `status` must give (503, an answer that carries `retryAfter`)."""


class TestArmedRecord:
    """The record of an armed fault carries the parameters its mode uses, and no other."""

    def test_the_mapping_covers_the_whole_vocabulary_as_documented(self) -> None:
        assert set(MODE_PARAMETERS) == set(FaultMode) == set(map(FaultMode, USED_PARAMETERS))
        assert {mode.value: set(used) for mode, used in MODE_PARAMETERS.items()} == (
            USED_PARAMETERS
        )

    @pytest.mark.parametrize("mode", [mode.value for mode in FaultMode])
    async def test_armed_with_its_mode_alone_it_carries_its_own_parameters_defaulted(
        self, client: TestClient[Any, Any], mode: str
    ) -> None:
        required = STATUS_REQUIRED if mode == "status" else {}
        expected = {
            "mode": mode,
            **{name: PARAMETERS_BY_DEFAULT[name] for name in USED_PARAMETERS[mode]},
            **required,
        }
        armed = await arm(client, mode=mode, applyTo="batch", **required)
        (listed,) = (await (await client.get("/_test/fault")).json())["armed"]

        for record in (armed, listed):
            shown = {k: v for k, v in record.items() if k == "mode" or k in PARAMETERS_BY_DEFAULT}
            assert shown == expected

    @pytest.mark.parametrize("mode", [mode.value for mode in FaultMode])
    async def test_armed_with_every_parameter_it_carries_only_those_its_mode_uses(
        self, client: TestClient[Any, Any], mode: str
    ) -> None:
        armed = await arm(client, mode=mode, applyTo="batch", **PARAMETERS_AS_ARMED)
        (listed,) = (await (await client.get("/_test/fault")).json())["armed"]

        expected = {name: PARAMETERS_AS_ARMED[name] for name in USED_PARAMETERS[mode]}
        for record in (armed, listed):
            assert {k: v for k, v in record.items() if k in PARAMETERS_AS_ARMED} == expected

    async def test_a_500_reads_as_a_plain_500(self, client: TestClient[Any, Any]) -> None:
        armed = await arm(client, mode="500")
        assert {k: armed[k] for k in armed if k in PARAMETERS_BY_DEFAULT} == {
            "status": None,
            "body": None,
        }

    @pytest.mark.parametrize(
        ("code", "retry_after"), [(429, 1), (503, 1), (502, None), (418, None)]
    )
    async def test_a_status_carries_retry_after_only_when_its_answer_does(
        self, client: TestClient[Any, Any], code: int, retry_after: int | None
    ) -> None:
        armed = await arm(client, mode="status", status=code, applyTo="evaluate")
        assert armed.get("retryAfter") == retry_after
        assert ("retryAfter" in armed) == (retry_after is not None)
        answer = await client.post(EVALUATE, json=BODY, headers=AUTH)
        assert answer.headers.get("Retry-After") == (
            None if retry_after is None else str(retry_after)
        )
        (entry,) = await requests_log(client)
        assert entry["retryAfter"] == retry_after  # the journal says what the record says

    async def test_each_step_of_a_sequence_carries_its_own_modes_parameters(
        self, client: TestClient[Any, Any]
    ) -> None:
        steps = ["500", "delay", "reset", {"mode": "status", "status": 502}, "429", "none"]
        armed = await arm(client, sequence=steps, delayMs=5, retryAfter=2, applyTo="batch")
        (listed,) = (await (await client.get("/_test/fault")).json())["armed"]

        shown = [
            {"mode": "500", "status": None, "body": None},
            {"mode": "delay", "delayMs": 5},
            {"mode": "reset"},
            {"mode": "status", "status": 502, "body": None},
            {"mode": "429", "status": None, "body": None, "retryAfter": 2},
            {"mode": "none"},
        ]
        assert armed["sequence"] == listed["sequence"] == shown
        assert not {"delayMs", "retryAfter"} & set(armed)  # a sequence's are in its steps


class TestReadAfterResponse:
    """Once a client has any of an answer, its request is in /_test/requests: recorded before
    the answer is sent, whichever fault shaped it (a fault that writes its own answer records
    the request before its first byte)."""

    @pytest.mark.parametrize(
        "fault",
        [
            {"mode": "slow_body", "delayMs": 20},
            {"mode": "truncated"},
            {"mode": "delay", "delayMs": 5},
            {"mode": "500"},
            {"mode": "invalid_json"},
            {"mode": "none"},
        ],
        ids=lambda fault: fault["mode"],
    )
    async def test_under_concurrent_requests_every_answered_request_is_already_recorded(
        self, client: TestClient[Any, Any], fault: dict[str, Any]
    ) -> None:
        if fault["mode"] != "none":
            await arm(client, **fault, applyTo="evaluate")

        async def one(n: int) -> bool:
            try:
                async with client.post(
                    f"/v1/flags/evaluate?n={n}", json={"targetingKey": "u"}, headers=AUTH
                ) as answer:
                    await answer.read()
            except (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError):
                pass  # a cut-off answer is still an answer
            entries = await requests_log(client)
            return any(entry["query"] == {"n": str(n)} for entry in entries)

        for _ in range(4):  # 4 rounds of 50 at once
            seen = await asyncio.gather(*(one(n) for n in range(50)))
            assert all(seen), f"{seen.count(False)} answered requests were not yet recorded"
