"""The typed control client, blocking and async, against a spawned stub and real HTTP traffic."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import pickle
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fireweave import EvaluationContext

from conftest import HANG_GUARD_S, OpenFireweave, SpawnedStub, spawn_stub
from stub.client import (
    DEFAULT_WAIT_S,
    ArmedFault,
    ArmOptions,
    AsyncStubClient,
    FaultRecord,
    Recorded,
    RecordedRequest,
    ServedFixtures,
    StubClient,
    StubError,
    StubUnreachable,
    WaitTimeout,
)
from stub.client.calls import Calls

EVALUATE = "/v1/flags/evaluate"
KEY = {"Authorization": "Bearer any-key"}
NOTHING_DROPPED = {"events": 0, "svcEvents": 0, "targets": 0}
EMPTY = Recorded(events=[], svc_events=[], targets=[], dropped=NOTHING_DROPPED)
WAIT_S = HANG_GUARD_S
"""The timeout a test that expects to be woken gives its wait: one no test waits out."""
WOKEN_WITHIN_S = WAIT_S / 2
"""A wait of `WAIT_S` that returns sooner than this was woken by the traffic, not timed out.
It guards a wait that is never woken (it is well below `WAIT_S`), and is not a speed budget:
it was 2 s against the default 5 s wait, which a busy 2-core machine could exceed."""
TIMED_OUT_WITHIN_S = DEFAULT_WAIT_S
"""A wait given a short timeout ends before this: one that ignored its timeout would wait out
the default `DEFAULT_WAIT_S`. The bound is inherent to that claim, not a speed budget."""
SEND_AFTER_S = 0.3

INVALID_MODE = (
    "mode: unknown fault mode 'bogus' (valid: none, delay, 401, 429, 500, invalid_json, "
    "truncated, quota_limited, status, reset, empty_response, slow_body, hang)"
)
NO_VALUE = "body: flags.broken.value: required"
UNAUTHORIZED = "control routes need 'Authorization: Bearer <control token>'"
DEFAULT_FLAGS = [
    "checkout-v2",
    "dark-mode",
    "discount-rate",
    "enterprise-dashboard",
    "legacy-banner",
    "max-items",
    "new-checkout",
    "pricing-page",
    "ui-config",
]


# --- real traffic, over urllib ----------------------------------------------------------------


def send(
    url: str,
    path: str,
    body: object = None,
    *,
    method: str = "POST",
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """One request; the status and the parsed JSON answer, errors included."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url + path,
        data=data,
        method=method,
        headers={**KEY, "Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=HANG_GUARD_S) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, json.loads(exc.read())


def evaluate(url: str, flag_key: str, **headers: str) -> tuple[int, Any]:
    return send(url, EVALUATE, {"targetingKey": "user-1", "flagKeys": [flag_key]}, headers=headers)


def decision(url: str, flag_key: str) -> Any:
    status, body = evaluate(url, flag_key)
    assert status == 200
    return body["decisions"][0]


def capture(url: str, *events: dict[str, Any]) -> None:
    assert send(url, "/v1/capture", {"events": list(events)}) == (
        200,
        {"ok": True, "accepted": len(events)},
    )


def batch(url: str, *items: dict[str, Any]) -> None:
    assert send(url, "/batch/", {"api_key": "phc_any", "batch": list(items)}) == (
        200,
        {"status": 1},
    )


def register(url: str, targeting_key: str) -> None:
    assert send(url, "/v1/targets/register", {"targetingKey": targeting_key, "kind": "user"}) == (
        200,
        {"ok": True, "targetingKey": targeting_key},
    )


def exposure(flag_key: str, targeting_key: str, variant: str | None) -> dict[str, Any]:
    return {
        "type": "exposure",
        "flagKey": flag_key,
        "targetingKey": targeting_key,
        "variant": variant,
        "value": variant,
    }


@contextmanager
def sent_later(action: Callable[[], object], after_s: float = SEND_AFTER_S) -> Iterator[None]:
    """Run `action` on a background thread `after_s` from now (so after the wait started)."""
    timer = threading.Timer(after_s, action)
    timer.start()
    try:
        yield
    finally:
        timer.join(5)


@contextmanager
def stopwatch() -> Iterator[list[float]]:
    """Elapsed seconds, in the list's only item once the block ends."""
    elapsed: list[float] = []
    started = time.monotonic()
    try:
        yield elapsed
    finally:
        elapsed.append(time.monotonic() - started)


def traffic(requests: list[RecordedRequest]) -> list[tuple[Any, ...]]:
    """The stable fields of recorded requests (seq and duration vary run to run)."""
    return [(r.method, r.path, r.query, r.route, r.status, r.fault) for r in requests]


# --- clients ----------------------------------------------------------------------------------


@pytest.fixture
def stub(live_stub: SpawnedStub) -> StubClient:
    return StubClient(live_stub.url)


@pytest.fixture
async def astub(live_stub: SpawnedStub) -> AsyncIterator[AsyncStubClient]:
    client = AsyncStubClient(live_stub.url)
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture(scope="module")
def guarded() -> Iterator[SpawnedStub]:
    """A stub whose control routes need `Authorization: Bearer t`."""
    with spawn_stub("--control-token", "t") as spawned:
        yield spawned


# --- tests ------------------------------------------------------------------------------------


class TestHealth:
    def test_health_is_true_for_a_running_stub(self, stub: StubClient) -> None:
        assert stub.health() is True

    async def test_async_health_is_true_for_a_running_stub(self, astub: AsyncStubClient) -> None:
        assert await astub.health() is True

    def test_the_url_loses_its_trailing_slash(self, live_stub: SpawnedStub) -> None:
        client = StubClient(live_stub.url + "/")
        assert client.url == live_stub.url
        assert client.health() is True


@pytest.fixture
def refusing_url() -> str:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A server that accepts connections and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


async def unreachable_to_the_async_client(url: str, timeout_s: float = 10) -> StubUnreachable:
    client = AsyncStubClient(url, timeout_s=timeout_s)
    try:
        with pytest.raises(StubUnreachable) as caught:
            await client.armed()
    finally:
        await client.close()
    return caught.value


class TestUnreachable:
    """Nothing at the URL: one line that names it and says what to do, not a network stack."""

    def test_a_refused_connection_says_where_and_what_to_do(self, refusing_url: str) -> None:
        port = refusing_url.rsplit(":", 1)[1]
        with pytest.raises(StubUnreachable) as caught:
            StubClient(refusing_url).reset()
        assert str(caught.value) == (
            f"svc-stub at {refusing_url} does not answer ([Errno 111] Connection refused); "
            f"start one there (svc-stub --port {port}) or correct the URL"
        )
        assert isinstance(caught.value, ConnectionError)

    async def test_the_async_client_says_the_same(self, refusing_url: str) -> None:
        raised = await unreachable_to_the_async_client(refusing_url)
        assert str(raised).startswith(f"svc-stub at {refusing_url} does not answer (")

    def test_a_server_that_never_answers_is_unreachable_too(self, silent_url: str) -> None:
        with pytest.raises(StubUnreachable, match="does not answer \\(timed out\\)"):
            StubClient(silent_url, timeout_s=0.2).armed()

    async def test_async_a_server_that_never_answers(self, silent_url: str) -> None:
        raised = await unreachable_to_the_async_client(silent_url, timeout_s=0.2)
        assert str(raised).startswith(f"svc-stub at {silent_url} does not answer (")

    def test_it_survives_pickling(self, refusing_url: str) -> None:
        error = pickle.loads(pickle.dumps(StubUnreachable(refusing_url, "refused")))
        assert (error.url, error.reason) == (refusing_url, "refused")


def _fill_everything(url: str, client: StubClient) -> None:
    """Recorded traffic of every kind, an armed fault and replaced fixtures."""
    capture(url, {"type": "signal"})
    batch(url, {"event": "e"})
    register(url, "user-1")
    client.arm("500", apply_to="batch")
    client.set_fixtures({"flags": {}})
    assert decision(url, "new-checkout")["found"] is False


class TestReset:
    def test_reset_clears_recorded_armed_and_served(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        _fill_everything(live_stub.url, stub)

        stub.reset()

        assert stub.recorded() == EMPTY
        assert stub.armed() == []
        assert stub.requests() == []
        assert decision(live_stub.url, "new-checkout")["value"] is True

    async def test_async_reset_clears_recorded_armed_and_served(
        self, live_stub: SpawnedStub, stub: StubClient, astub: AsyncStubClient
    ) -> None:
        _fill_everything(live_stub.url, stub)

        await astub.reset()

        assert await astub.recorded() == EMPTY
        assert await astub.armed() == []
        assert await astub.requests() == []
        assert decision(live_stub.url, "new-checkout")["value"] is True


EVERY_PARAMETER: ArmOptions = {
    "apply_to": ["evaluate", "capture"],
    "ttl_requests": 3,
    "delay_ms": 5,
    "status": 503,
    "body": {"error": "down"},
    "retry_after": 7,
    "probability": 0.5,
    "seed": 42,
}


def _every_parameter(id_: int) -> ArmedFault:
    """A `status` 503 armed with EVERY_PARAMETER: the delay is accepted, but not listed (a
    status answers at once)."""
    return ArmedFault(
        id=id_,
        apply_to=("capture", "evaluate"),
        mode="status",
        sequence=None,
        ttl_requests=3,
        probability=0.5,
        seed=42,
        fired=0,
        delay_ms=None,
        status=503,
        body={"error": "down"},
        retry_after=7,
    )


def _only_500(id_: int, apply_to: tuple[str, ...]) -> ArmedFault:
    """What the stub answers for a 500 armed with nothing else: no delay, no Retry-After, and
    its own status and body (None)."""
    return ArmedFault(
        id=id_,
        apply_to=apply_to,
        mode="500",
        sequence=None,
        ttl_requests=None,
        probability=None,
        seed=None,
        fired=0,
        delay_ms=None,
        status=None,
        body=None,
        retry_after=None,
    )


SEQUENCE_AS_ARMED = (
    {"mode": "500", "status": None, "body": None},
    {"mode": "status", "status": 418, "body": None},
    {"mode": "none"},
)


LISTED_RESET = {
    "id": 1,
    "applyTo": ["evaluate"],
    "mode": "reset",
    "ttlRequests": None,
    "probability": None,
    "seed": None,
    "fired": 0,
}
"""A `reset`'s record as the stub lists it: with no parameter, since a reset answers nothing."""


class TestArmedRecord:
    """An armed fault's record, read as each stub lists it: only the parameters its mode uses
    (a parameter it leaves out is None), or every one, as stubs before that did."""

    def test_a_parameter_the_record_leaves_out_reads_none(self) -> None:
        (armed,) = Calls.armed().read({"armed": [LISTED_RESET]})
        assert (armed.delay_ms, armed.status, armed.body, armed.retry_after) == (None,) * 4

    def test_a_parameter_the_record_lists_is_read(self) -> None:
        every = {"delayMs": 10_000, "status": 503, "body": "down", "retryAfter": 1}
        earlier = {**LISTED_RESET, "mode": "500", **every}  # as stubs listed every parameter
        armed = Calls.arm("500", {}).read({"ok": True, "fault": earlier})
        assert (armed.delay_ms, armed.status, armed.body, armed.retry_after) == (
            10_000,
            503,
            "down",
            1,
        )


class TestArm:
    def test_arm_with_every_parameter_returns_the_fault_as_armed(self, stub: StubClient) -> None:
        armed = stub.arm("status", **EVERY_PARAMETER)
        assert armed == _every_parameter(armed.id)
        assert stub.armed() == [armed]

    def test_apply_to_as_a_string_arms_one_selector_with_the_defaults(
        self, stub: StubClient
    ) -> None:
        armed = stub.arm("500", apply_to="batch")
        assert armed == _only_500(armed.id, ("batch",))

    def test_a_fault_reads_the_parameters_its_mode_uses_and_none_for_the_others(
        self, stub: StubClient
    ) -> None:
        delay = stub.arm("delay", apply_to="batch", delay_ms=50, status=503, retry_after=3)
        limited = stub.arm("429", apply_to="batch", delay_ms=50, retry_after=3)
        assert (delay.delay_ms, delay.status, delay.body, delay.retry_after) == (
            50,
            None,
            None,
            None,
        )
        assert (limited.delay_ms, limited.status, limited.retry_after) == (None, None, 3)
        assert stub.armed() == [delay, limited]

    def test_apply_to_all_names_every_selector(self, stub: StubClient) -> None:
        armed = stub.arm("429")
        assert armed.apply_to == (
            "batch",
            "capture",
            "control-points",
            "definitions",
            "environments",
            "evaluate",
            "flags",
            "projects",
            "register",
            "whoami",
        )

    def test_each_arming_gets_the_next_id(self, stub: StubClient) -> None:
        first = stub.arm("500", apply_to="batch")
        second = stub.arm("429", apply_to="batch")
        assert second.id == first.id + 1

    def test_a_sequence_of_strings_and_dicts_fires_step_by_step_then_runs_out(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        armed = stub.arm(
            apply_to="evaluate", sequence=["500", {"mode": "status", "status": 418}, "none"]
        )
        assert armed == ArmedFault(
            id=armed.id,
            apply_to=("evaluate",),
            mode=None,
            sequence=SEQUENCE_AS_ARMED,
            ttl_requests=3,
            probability=None,
            seed=None,
            fired=0,
        )

        statuses = [evaluate(live_stub.url, "new-checkout")[0] for _ in range(4)]

        assert statuses == [500, 418, 200, 200]
        assert [r.fault for r in stub.requests(route="evaluate")] == [
            FaultRecord("500", "armed", armed.id, 0),
            FaultRecord("status", "armed", armed.id, 1),
            FaultRecord("none", "armed", armed.id, 2),
            None,
        ]
        assert stub.armed() == []

    def test_the_armed_status_and_body_are_what_a_client_receives(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        stub.arm("status", apply_to="evaluate", status=503, body={"error": "down"})
        assert evaluate(live_stub.url, "new-checkout") == (503, {"error": "down"})

    def test_armed_shows_what_remains_and_how_often_it_fired(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        armed = stub.arm("500", apply_to="evaluate", ttl_requests=3)
        assert evaluate(live_stub.url, "new-checkout")[0] == 500
        assert stub.armed() == [dataclasses.replace(armed, ttl_requests=2, fired=1)]

    def test_disarm_removes_only_that_fault(self, live_stub: SpawnedStub, stub: StubClient) -> None:
        kept = stub.arm("500", apply_to="batch")
        gone = stub.arm("429", apply_to="evaluate")

        stub.disarm(gone.id)

        assert stub.armed() == [kept]
        assert evaluate(live_stub.url, "new-checkout")[0] == 200

    def test_clear_faults_removes_every_fault(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        stub.arm("500", apply_to="batch")
        stub.arm("429", apply_to="evaluate")

        stub.clear_faults()

        assert stub.armed() == []
        assert evaluate(live_stub.url, "new-checkout")[0] == 200

    def test_an_invalid_arming_raises_stub_error_with_the_stubs_words(
        self, stub: StubClient
    ) -> None:
        with pytest.raises(StubError) as caught:
            stub.arm("bogus")
        assert (caught.value.status, caught.value.code, caught.value.message) == (
            400,
            "INVALID_BODY",
            INVALID_MODE,
        )
        assert str(caught.value) == f"400 INVALID_BODY: {INVALID_MODE}"
        assert stub.armed() == []

    def test_mode_status_without_a_status_is_refused(self, stub: StubClient) -> None:
        with pytest.raises(StubError) as caught:
            stub.arm("status", apply_to="evaluate")
        assert (caught.value.status, caught.value.code, caught.value.message) == (
            400,
            "INVALID_BODY",
            "status: required with mode status (e.g. 503)",
        )

    def test_disarming_an_unknown_id_raises_stub_error_404(self, stub: StubClient) -> None:
        with pytest.raises(StubError) as caught:
            stub.disarm(987654)
        assert (caught.value.status, caught.value.code, caught.value.message) == (
            404,
            "NOT_FOUND",
            "id: no armed fault '987654' (it may have run out)",
        )

    def test_delete_of_an_unknown_fault_id_is_a_404_json_answer(
        self, live_stub: SpawnedStub
    ) -> None:
        assert send(live_stub.url, "/_test/fault/987654", method="DELETE") == (
            404,
            {
                "ok": False,
                "error": "NOT_FOUND",
                "message": "id: no armed fault '987654' (it may have run out)",
            },
        )

    async def test_async_arm_with_every_parameter_returns_the_fault_as_armed(
        self, astub: AsyncStubClient
    ) -> None:
        armed = await astub.arm("status", **EVERY_PARAMETER)
        assert armed == _every_parameter(armed.id)
        assert await astub.armed() == [armed]

    async def test_async_arm_takes_apply_to_as_a_string_and_a_sequence(
        self, astub: AsyncStubClient
    ) -> None:
        single = await astub.arm("500", apply_to="batch")
        sequence = await astub.arm(
            apply_to="evaluate", sequence=["500", {"mode": "status", "status": 418}, "none"]
        )
        assert single == _only_500(single.id, ("batch",))
        assert (sequence.mode, sequence.sequence, sequence.ttl_requests) == (
            None,
            SEQUENCE_AS_ARMED,
            3,
        )
        assert await astub.armed() == [single, sequence]

    async def test_async_disarm_and_clear_faults_remove_faults(
        self, astub: AsyncStubClient
    ) -> None:
        kept = await astub.arm("500", apply_to="batch")
        gone = await astub.arm("429", apply_to="evaluate")

        await astub.disarm(gone.id)
        assert await astub.armed() == [kept]

        await astub.clear_faults()
        assert await astub.armed() == []

    async def test_async_invalid_arming_raises_stub_error_with_the_stubs_words(
        self, astub: AsyncStubClient
    ) -> None:
        with pytest.raises(StubError) as caught:
            await astub.arm("bogus")
        assert (caught.value.status, caught.value.code, caught.value.message) == (
            400,
            "INVALID_BODY",
            INVALID_MODE,
        )

    async def test_async_disarming_an_unknown_id_raises_stub_error_404(
        self, astub: AsyncStubClient
    ) -> None:
        with pytest.raises(StubError) as caught:
            await astub.disarm(987654)
        assert (caught.value.status, caught.value.code) == (404, "NOT_FOUND")


class TestFaultBlock:
    def test_the_fault_is_active_in_the_block_and_only_it_is_disarmed_after(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        outside = stub.arm("500", apply_to="batch")

        with stub.fault("status", apply_to="evaluate", status=503) as inside:
            assert inside.mode == "status"
            assert inside.status == 503
            assert stub.armed() == [outside, inside]
            assert evaluate(live_stub.url, "new-checkout") == (
                503,
                {"ok": False, "error": "HTTP_503", "message": "svc-stub fault: status"},
            )

        assert stub.armed() == [outside]
        assert evaluate(live_stub.url, "new-checkout")[0] == 200

    def test_a_fault_that_ran_out_in_the_block_exits_cleanly(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        with stub.fault("500", apply_to="evaluate", ttl_requests=1):
            assert evaluate(live_stub.url, "new-checkout")[0] == 500
            assert stub.armed() == []
        assert evaluate(live_stub.url, "new-checkout")[0] == 200

    def test_the_fault_is_disarmed_when_the_block_raises(self, stub: StubClient) -> None:
        with pytest.raises(ZeroDivisionError), stub.fault("500", apply_to="evaluate"):
            _ = 1 / 0
        assert stub.armed() == []

    async def test_async_fault_is_active_in_the_block_and_only_it_is_disarmed_after(
        self, live_stub: SpawnedStub, astub: AsyncStubClient
    ) -> None:
        outside = await astub.arm("500", apply_to="batch")

        async with astub.fault("status", apply_to="evaluate", status=503) as inside:
            assert await astub.armed() == [outside, inside]
            assert evaluate(live_stub.url, "new-checkout")[0] == 503

        assert await astub.armed() == [outside]
        assert evaluate(live_stub.url, "new-checkout")[0] == 200

    async def test_async_fault_that_ran_out_in_the_block_exits_cleanly(
        self, live_stub: SpawnedStub, astub: AsyncStubClient
    ) -> None:
        async with astub.fault("500", apply_to="evaluate", ttl_requests=1):
            assert evaluate(live_stub.url, "new-checkout")[0] == 500
            assert await astub.armed() == []
        assert evaluate(live_stub.url, "new-checkout")[0] == 200


SIGNAL = {"type": "signal", "name": "checkout", "targetingKey": "user-1"}
EXPOSURE = exposure("checkout-v2", "user-1", "treatment-b")
ITEM = {"event": "$pageview", "distinct_id": "d1"}


def _send_one_of_each(url: str) -> None:
    capture(url, SIGNAL, EXPOSURE)
    batch(url, ITEM)
    register(url, "user-1")


ONE_OF_EACH = Recorded(
    events=[ITEM],
    svc_events=[SIGNAL, EXPOSURE],
    targets=[{"targetingKey": "user-1", "kind": "user"}],
    dropped=NOTHING_DROPPED,
)


class TestRecorded:
    def test_recorded_holds_what_clients_sent_in_order(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        _send_one_of_each(live_stub.url)

        recorded = stub.recorded()

        assert recorded == ONE_OF_EACH
        assert recorded.exposures == [EXPOSURE]
        assert stub.events() == [ITEM]
        assert stub.svc_events() == [SIGNAL, EXPOSURE]
        assert stub.targets() == [{"targetingKey": "user-1", "kind": "user"}]

    def test_requests_are_typed_and_a_faulted_one_names_its_fault(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        armed = stub.arm("500", apply_to="capture", ttl_requests=1)
        assert send(live_stub.url, "/v1/capture?v=2", {"events": []})[0] == 500
        capture(live_stub.url, SIGNAL)
        assert evaluate(live_stub.url, "new-checkout", **{"X-Svc-Test-Fault": "429"})[0] == 429

        captures = stub.requests(route="capture")

        assert all(isinstance(r, RecordedRequest) for r in captures)
        assert traffic(captures) == [
            (
                "POST",
                "/v1/capture",
                {"v": "2"},
                "capture",
                500,
                FaultRecord("500", "armed", armed.id),
            ),
            ("POST", "/v1/capture", {}, "capture", 200, None),
        ]
        everything = stub.requests()
        assert [r.seq for r in everything] == [
            captures[0].seq,
            captures[0].seq + 1,
            captures[0].seq + 2,
        ]
        assert everything[2].fault == FaultRecord("429", "header")
        assert all(isinstance(r.duration_ms, float) and r.duration_ms >= 0 for r in everything)

    def test_requests_for_a_route_nobody_called_is_empty(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        capture(live_stub.url, SIGNAL)
        assert stub.requests(route="register") == []

    async def test_async_recorded_holds_what_clients_sent_in_order(
        self, live_stub: SpawnedStub, astub: AsyncStubClient
    ) -> None:
        _send_one_of_each(live_stub.url)

        recorded = await astub.recorded()

        assert recorded == ONE_OF_EACH
        assert recorded.exposures == [EXPOSURE]
        assert await astub.events() == [ITEM]
        assert await astub.svc_events() == [SIGNAL, EXPOSURE]
        assert await astub.targets() == [{"targetingKey": "user-1", "kind": "user"}]

    async def test_async_requests_are_typed_and_a_faulted_one_names_its_fault(
        self, live_stub: SpawnedStub, astub: AsyncStubClient
    ) -> None:
        armed = await astub.arm("500", apply_to="evaluate", ttl_requests=1)
        evaluate(live_stub.url, "new-checkout")
        evaluate(live_stub.url, "new-checkout")
        capture(live_stub.url, SIGNAL)

        assert traffic(await astub.requests(route="evaluate")) == [
            ("POST", EVALUATE, {}, "evaluate", 500, FaultRecord("500", "armed", armed.id)),
            ("POST", EVALUATE, {}, "evaluate", 200, None),
        ]
        assert [r.route for r in await astub.requests()] == ["evaluate", "evaluate", "capture"]


ONLY = {"flags": {"only": {"type": "boolean", "value": True}}}
GREETING_YAML = "flags:\n  greeting:\n    type: string\n    value: hello\n"
OVERLAY = {
    "flags": {"max-items": {"type": "number", "value": 99}, "extra": {"type": "number", "value": 1}}
}
BROKEN = {"flags": {"broken": {"type": "boolean"}}}
VENDOR_FLAGS = {"flags": {"vf": {"key": "vf", "enabled": True, "variant": "blue"}}}


class TestFixtures:
    def test_set_fixtures_with_a_dict_replaces_the_served_flags(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        assert stub.set_fixtures(ONLY) == ["only"]
        assert decision(live_stub.url, "only")["value"] is True
        assert decision(live_stub.url, "new-checkout")["found"] is False

    def test_served_fixtures_reads_what_is_served(self, stub: StubClient) -> None:
        stub.set_fixtures(ONLY)
        served = stub.served_fixtures()
        assert served == ServedFixtures(["only"], watching=False, reloads=0, reload_error=None)

    async def test_served_fixtures_follows_watched_files(self, tmp_path: Path) -> None:
        path = tmp_path / "flags.yaml"
        path.write_text(GREETING_YAML, encoding="utf-8")
        with spawn_stub("--fixtures", str(path), "--watch") as watched:
            client = AsyncStubClient(watched.url)
            try:
                assert (await client.served_fixtures()).flags == ["greeting"]
                path.write_text("flags: {only: {type: boolean, value: true}}", encoding="utf-8")
                deadline = time.monotonic() + HANG_GUARD_S  # guards a hang only
                while (served := await client.served_fixtures()).reloads < 1:
                    assert time.monotonic() < deadline
                    await asyncio.sleep(0.05)
                assert served == ServedFixtures(["only"], True, 1, None)
            finally:
                await client.close()

    def test_set_fixtures_with_yaml_text(self, live_stub: SpawnedStub, stub: StubClient) -> None:
        assert stub.set_fixtures(GREETING_YAML) == ["greeting"]
        assert decision(live_stub.url, "greeting")["value"] == "hello"

    def test_set_fixtures_with_a_path_sends_the_files_contents(
        self, live_stub: SpawnedStub, stub: StubClient, tmp_path: Path
    ) -> None:
        path = tmp_path / "flags.yaml"
        path.write_text(GREETING_YAML, encoding="utf-8")
        assert stub.set_fixtures(path) == ["greeting"]
        assert decision(live_stub.url, "greeting")["value"] == "hello"

    def test_merge_overlays_the_served_flags_later_wins(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        assert stub.set_fixtures(OVERLAY, merge=True) == sorted([*DEFAULT_FLAGS, "extra"])
        assert decision(live_stub.url, "max-items")["value"] == 99
        assert decision(live_stub.url, "new-checkout")["value"] is True

    def test_merge_with_yaml_text_overlays_too(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        assert stub.set_fixtures(GREETING_YAML, merge=True) == sorted([*DEFAULT_FLAGS, "greeting"])
        assert decision(live_stub.url, "greeting")["value"] == "hello"
        assert decision(live_stub.url, "new-checkout")["value"] is True

    def test_a_bad_document_raises_invalid_fixtures_and_keeps_the_old_ones(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        with pytest.raises(StubError) as caught:
            stub.set_fixtures(BROKEN)
        assert (caught.value.status, caught.value.code, caught.value.message) == (
            400,
            "INVALID_FIXTURES",
            NO_VALUE,
        )
        assert decision(live_stub.url, "new-checkout")["value"] is True

    def test_bad_yaml_text_raises_invalid_fixtures(self, stub: StubClient) -> None:
        with pytest.raises(StubError) as caught:
            stub.set_fixtures("flags: [")
        assert (caught.value.status, caught.value.code, caught.value.message) == (
            400,
            "INVALID_FIXTURES",
            "body: invalid YAML at line 1, column 9: expected the node content, "
            "but found '<stream end>'",
        )

    def test_a_bad_file_is_named_in_the_refusal(self, stub: StubClient, tmp_path: Path) -> None:
        """The stub saw a body; the client knows the file it read it from."""
        path = tmp_path / "flags.yaml"
        path.write_text("flags:\n  banner-text:\n    type: string\n    valeu: x\n")
        with pytest.raises(StubError) as caught:
            stub.set_fixtures(path)
        assert caught.value.message.startswith(f"{path}: flags.banner-text.valeu: unknown key")

    async def test_async_a_bad_file_is_named_in_the_refusal(
        self, astub: AsyncStubClient, tmp_path: Path
    ) -> None:
        path = tmp_path / "acme.yaml"
        path.write_text("orgs:\n  org_acme:\n    keyz: []\n")
        with pytest.raises(StubError) as caught:
            await astub.seed_management(path)
        assert caught.value.message.startswith(f"{path}: ")

    def test_set_vendor_flags_serves_the_vendor_body_and_derives_flags(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        assert stub.set_vendor_flags(VENDOR_FLAGS) == ["vf"]
        assert send(live_stub.url, "/flags/?v=2", {"api_key": "phc", "distinct_id": "d"}) == (
            200,
            VENDOR_FLAGS,
        )
        assert decision(live_stub.url, "vf")["variant"] == "blue"

    async def test_async_set_fixtures_with_a_dict_yaml_text_a_path_and_merge(
        self, live_stub: SpawnedStub, astub: AsyncStubClient, tmp_path: Path
    ) -> None:
        path = tmp_path / "flags.yaml"
        path.write_text(GREETING_YAML, encoding="utf-8")

        assert await astub.set_fixtures(ONLY) == ["only"]
        assert await astub.set_fixtures(GREETING_YAML) == ["greeting"]
        assert await astub.set_fixtures(ONLY) == ["only"]
        assert await astub.set_fixtures(path) == ["greeting"]
        assert await astub.set_fixtures(ONLY, merge=True) == ["greeting", "only"]
        assert decision(live_stub.url, "greeting")["value"] == "hello"
        assert decision(live_stub.url, "only")["value"] is True

    async def test_async_a_bad_document_raises_invalid_fixtures(
        self, astub: AsyncStubClient
    ) -> None:
        with pytest.raises(StubError) as caught:
            await astub.set_fixtures(BROKEN)
        assert (caught.value.status, caught.value.code, caught.value.message) == (
            400,
            "INVALID_FIXTURES",
            NO_VALUE,
        )

    async def test_async_set_vendor_flags_serves_the_vendor_body(
        self, live_stub: SpawnedStub, astub: AsyncStubClient
    ) -> None:
        assert await astub.set_vendor_flags(VENDOR_FLAGS) == ["vf"]
        assert decision(live_stub.url, "vf")["variant"] == "blue"


MANAGEMENT_SEED = Path(__file__).parent / "fixtures" / "management.yaml"
ACME_ADMIN = {"Authorization": "Bearer svc_org_acme_admin"}


class TestManagement:
    def test_seed_management_from_a_path_then_read_back_what_a_tool_created(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        state = stub.seed_management(MANAGEMENT_SEED)  # a fixture file with a section
        assert sorted(state.orgs) == ["org_acme", "org_globex"]
        assert state.org("org_acme").slugs() == ["checkout", "billing"]
        status, _ = send(
            live_stub.url, "/v1/projects", {"name": "Apps", "slug": "apps"}, headers=ACME_ADMIN
        )
        assert status == 201
        acme = stub.management().org("org_acme")
        assert acme.slugs() == ["checkout", "billing", "apps"]
        assert acme.project("apps")["environments"] == []
        assert acme.project("checkout")["controlPoints"][0]["key"] == "new-checkout"
        assert {"userId": "user_alice", "scope": "cli"} in acme.principals
        assert "svc_org_acme_admin" not in repr(stub.management())

    def test_a_missing_slug_or_org_raises_a_key_error_that_lists_what_there_is(
        self, stub: StubClient
    ) -> None:
        state = stub.management()
        with pytest.raises(
            KeyError, match=r"no organisation 'org_x' \(there are: \['org_default'\]\)"
        ):
            state.org("org_x")
        with pytest.raises(KeyError, match=r"no project 'nope' in org_default \(slugs: \[\]\)"):
            state.org("org_default").project("nope")

    def test_reset_brings_the_start_up_seed_back(self, stub: StubClient) -> None:
        stub.seed_management({"orgs": {"org_solo": {"keys": [{"key": "svc_org_solo"}]}}})
        assert sorted(stub.management().orgs) == ["org_solo"]
        stub.reset()
        assert sorted(stub.management().orgs) == ["org_default"]

    def test_a_bad_seed_raises_invalid_fixtures_naming_the_key_path(self, stub: StubClient) -> None:
        with pytest.raises(StubError) as refused:
            stub.seed_management({"orgs": {"org_a": {"keys": [{"key": "phc_x"}]}}})
        assert refused.value.status == 400
        assert refused.value.code == "INVALID_FIXTURES"
        assert refused.value.message == (
            "body: orgs.org_a.keys.0.key: an organisation key must start with svc_org_"
        )

    async def test_async_seed_management_and_read_back(
        self, live_stub: SpawnedStub, astub: AsyncStubClient
    ) -> None:
        state = await astub.seed_management(  # the section's content, as YAML text
            "orgs:\n  org_a:\n    keys: [{key: svc_org_a}]\n    projects: [{name: A, slug: a}]\n"
        )
        assert state.org("org_a").slugs() == ["a"]
        assert (await astub.management()).org("org_a").project("a")["name"] == "A"
        merged = await astub.seed_management({"orgs": {"org_b": {}}}, merge=True)
        assert sorted(merged.orgs) == ["org_a", "org_b"]


class TestWaits:
    def test_wait_for_svc_events_is_woken_by_events_sent_after_it_started(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        with sent_later(lambda: capture(live_stub.url, SIGNAL)), stopwatch() as took:
            got = stub.wait_for_svc_events(1, timeout=WAIT_S)
        assert got == [SIGNAL]
        assert SEND_AFTER_S * 0.8 <= took[0] < WOKEN_WITHIN_S

    def test_wait_for_events_is_woken_by_a_batch_sent_after_it_started(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        with sent_later(lambda: batch(live_stub.url, ITEM, ITEM)), stopwatch() as took:
            got = stub.wait_for_events(2, timeout=WAIT_S)
        assert got == [ITEM, ITEM]
        assert SEND_AFTER_S * 0.8 <= took[0] < WOKEN_WITHIN_S

    def test_wait_for_targets_is_woken_by_a_registration_sent_after_it_started(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        with sent_later(lambda: register(live_stub.url, "user-9")), stopwatch() as took:
            got = stub.wait_for_targets(1, timeout=WAIT_S)
        assert got == [{"targetingKey": "user-9", "kind": "user"}]
        assert SEND_AFTER_S * 0.8 <= took[0] < WOKEN_WITHIN_S

    def test_wait_for_requests_counts_only_its_route_and_is_woken(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        evaluate(live_stub.url, "new-checkout")
        with sent_later(lambda: register(live_stub.url, "user-9")), stopwatch() as took:
            got = stub.wait_for_requests(1, route="register", timeout=WAIT_S)
        assert traffic(got) == [("POST", "/v1/targets/register", {}, "register", 200, None)]
        assert SEND_AFTER_S * 0.8 <= took[0] < WOKEN_WITHIN_S

    def test_wait_for_requests_on_any_route(self, live_stub: SpawnedStub, stub: StubClient) -> None:
        with sent_later(lambda: evaluate(live_stub.url, "new-checkout")), stopwatch() as took:
            got = stub.wait_for_requests(1, timeout=WAIT_S)
        assert [r.route for r in got] == ["evaluate"]
        assert took[0] < WOKEN_WITHIN_S

    def test_a_wait_that_times_out_shows_what_was_recorded(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        capture(live_stub.url, SIGNAL)
        with pytest.raises(WaitTimeout) as caught, stopwatch() as took:
            stub.wait_for_svc_events(2, timeout=0.3)
        assert isinstance(caught.value, AssertionError)
        assert str(caught.value) == (
            f"waited 0.3s for 2 svcEvents, got 1:\n{json.dumps([SIGNAL], indent=2)}"
        )
        assert 0.25 <= took[0] < TIMED_OUT_WITHIN_S

    def test_every_wait_times_out_with_its_own_message(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        batch(live_stub.url, ITEM)
        with pytest.raises(WaitTimeout) as events:
            stub.wait_for_events(2, timeout=0.1)
        with pytest.raises(WaitTimeout) as targets:
            stub.wait_for_targets(1, timeout=0.1)
        with pytest.raises(WaitTimeout) as requests:
            stub.wait_for_requests(1, route="capture", timeout=0.1)
        assert str(events.value) == (
            f"waited 0.1s for 2 events, got 1:\n{json.dumps([ITEM], indent=2)}"
        )
        assert str(targets.value) == "waited 0.1s for 1 targets, got 0:\n[]"
        assert str(requests.value) == "waited 0.1s for 1 requests to capture, got 0:\n[]"

    def test_a_wait_already_satisfied_returns_at_once(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        capture(live_stub.url, SIGNAL, EXPOSURE)
        with stopwatch() as took:
            got = stub.wait_for_svc_events(1, timeout=WAIT_S)
        assert got == [SIGNAL, EXPOSURE]
        # A wait that did not see it was satisfied would wait out its WAIT_S; ending well within
        # that is what "at once" can claim, however slow the machine.
        assert took[0] < WOKEN_WITHIN_S

    async def test_async_wait_for_svc_events_is_woken(
        self, live_stub: SpawnedStub, astub: AsyncStubClient
    ) -> None:
        with sent_later(lambda: capture(live_stub.url, SIGNAL)), stopwatch() as took:
            got = await astub.wait_for_svc_events(1, timeout=WAIT_S)
        assert got == [SIGNAL]
        assert SEND_AFTER_S * 0.8 <= took[0] < WOKEN_WITHIN_S

    async def test_async_wait_for_events_is_woken(
        self, live_stub: SpawnedStub, astub: AsyncStubClient
    ) -> None:
        with sent_later(lambda: batch(live_stub.url, ITEM)), stopwatch() as took:
            got = await astub.wait_for_events(1, timeout=WAIT_S)
        assert got == [ITEM]
        assert SEND_AFTER_S * 0.8 <= took[0] < WOKEN_WITHIN_S

    async def test_async_wait_for_targets_is_woken(
        self, live_stub: SpawnedStub, astub: AsyncStubClient
    ) -> None:
        with sent_later(lambda: register(live_stub.url, "user-9")), stopwatch() as took:
            got = await astub.wait_for_targets(1, timeout=WAIT_S)
        assert got == [{"targetingKey": "user-9", "kind": "user"}]
        assert SEND_AFTER_S * 0.8 <= took[0] < WOKEN_WITHIN_S

    async def test_async_wait_for_requests_counts_only_its_route_and_is_woken(
        self, live_stub: SpawnedStub, astub: AsyncStubClient
    ) -> None:
        evaluate(live_stub.url, "new-checkout")
        with sent_later(lambda: register(live_stub.url, "user-9")), stopwatch() as took:
            got = await astub.wait_for_requests(1, route="register", timeout=WAIT_S)
        assert traffic(got) == [("POST", "/v1/targets/register", {}, "register", 200, None)]
        assert SEND_AFTER_S * 0.8 <= took[0] < WOKEN_WITHIN_S

    async def test_async_a_wait_that_times_out_shows_what_was_recorded(
        self, live_stub: SpawnedStub, astub: AsyncStubClient
    ) -> None:
        capture(live_stub.url, SIGNAL)
        with pytest.raises(WaitTimeout) as caught, stopwatch() as took:
            await astub.wait_for_svc_events(2, timeout=0.3)
        assert str(caught.value) == (
            f"waited 0.3s for 2 svcEvents, got 1:\n{json.dumps([SIGNAL], indent=2)}"
        )
        assert 0.25 <= took[0] < TIMED_OUT_WITHIN_S

    async def test_async_every_wait_times_out_with_its_own_message(
        self, astub: AsyncStubClient
    ) -> None:
        with pytest.raises(WaitTimeout) as events:
            await astub.wait_for_events(1, timeout=0.1)
        with pytest.raises(WaitTimeout) as targets:
            await astub.wait_for_targets(1, timeout=0.1)
        with pytest.raises(WaitTimeout) as requests:
            await astub.wait_for_requests(1, timeout=0.1)
        assert str(events.value) == "waited 0.1s for 1 events, got 0:\n[]"
        assert str(targets.value) == "waited 0.1s for 1 targets, got 0:\n[]"
        assert str(requests.value) == "waited 0.1s for 1 requests to any route, got 0:\n[]"


class TestLongPoll:
    def test_a_long_poll_with_nothing_sent_answers_empty_when_the_wait_ends(
        self, live_stub: SpawnedStub
    ) -> None:
        with stopwatch() as took:
            status, body = send(
                live_stub.url, "/_test/events?minSvcEvents=1&waitMs=300", method="GET"
            )
        assert (status, body["svcEvents"]) == (200, [])
        # The lower bound is the claim (it waited its 300 ms); the upper one (2 s) was a speed
        # budget, dropped: a poll that never ended would fail on `send`'s HANG_GUARD_S.
        assert took[0] >= 0.28

    def test_a_long_poll_answers_as_soon_as_the_minimum_arrives(
        self, live_stub: SpawnedStub
    ) -> None:
        with sent_later(lambda: capture(live_stub.url, SIGNAL)), stopwatch() as took:
            status, body = send(
                live_stub.url, f"/_test/events?minSvcEvents=1&waitMs={WAIT_S * 1000}", method="GET"
            )
        assert (status, body["svcEvents"]) == (200, [SIGNAL])
        assert took[0] < WOKEN_WITHIN_S

    @pytest.mark.parametrize("path", ["/_test/events?minSvcEvents=1", "/_test/requests?min=1"])
    @pytest.mark.parametrize("wait_ms", ["-1", "999999", "soon"])
    def test_a_bad_wait_ms_is_a_400_naming_wait_ms(
        self, live_stub: SpawnedStub, path: str, wait_ms: str
    ) -> None:
        assert send(live_stub.url, f"{path}&waitMs={wait_ms}", method="GET") == (
            400,
            {
                "ok": False,
                "error": "INVALID_BODY",
                "message": (
                    f"waitMs: expected a non-negative integer up to 60000, got {wait_ms!r}"
                ),
            },
        )


class TestAssertions:
    def test_assert_exposure_passes_on_flag_and_targeting_key_and_on_variant(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        capture(live_stub.url, SIGNAL, EXPOSURE)
        stub.assert_exposure("checkout-v2", "user-1")
        stub.assert_exposure("checkout-v2", "user-1", variant="treatment-b")

    def test_assert_exposure_with_another_variant_fails_listing_the_exposures(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        capture(live_stub.url, SIGNAL, EXPOSURE)
        with pytest.raises(AssertionError) as caught:
            stub.assert_exposure("checkout-v2", "user-1", variant="control")
        assert str(caught.value) == (
            "no exposure of checkout-v2 for user-1 (variant control); exposures recorded:\n"
            "  checkout-v2 for user-1: variant treatment-b"
        )

    def test_assert_exposure_for_another_user_fails(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        capture(live_stub.url, EXPOSURE)
        with pytest.raises(AssertionError) as caught:
            stub.assert_exposure("checkout-v2", "user-2")
        assert str(caught.value) == (
            "no exposure of checkout-v2 for user-2; exposures recorded:\n"
            "  checkout-v2 for user-1: variant treatment-b"
        )

    def test_an_event_that_is_not_an_exposure_does_not_count(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        capture(live_stub.url, {**EXPOSURE, "type": "signal"})
        with pytest.raises(AssertionError) as caught:
            stub.assert_exposure("checkout-v2", "user-1")
        assert str(caught.value) == (
            "no exposure of checkout-v2 for user-1; exposures recorded:\n  (none)"
        )

    def test_assert_no_request_passes_when_nothing_hit_the_route(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        evaluate(live_stub.url, "new-checkout")
        stub.assert_no_request("capture")

    def test_assert_no_request_fails_listing_the_requests(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        evaluate(live_stub.url, "new-checkout")
        stub.arm("500", apply_to="evaluate")
        evaluate(live_stub.url, "new-checkout")
        first, second = (r.seq for r in stub.requests())
        with pytest.raises(AssertionError) as caught:
            stub.assert_no_request("evaluate")
        assert str(caught.value) == (
            "expected no request to route 'evaluate', got 2:\n"
            f"  #{first} POST {EVALUATE} -> 200\n"
            f"  #{second} POST {EVALUATE} -> 500"
        )

    async def test_async_assert_exposure_passes_and_fails_listing_the_exposures(
        self, live_stub: SpawnedStub, astub: AsyncStubClient
    ) -> None:
        capture(live_stub.url, EXPOSURE)
        await astub.assert_exposure("checkout-v2", "user-1")
        await astub.assert_exposure("checkout-v2", "user-1", variant="treatment-b")
        with pytest.raises(AssertionError) as caught:
            await astub.assert_exposure("pricing-page", "user-1")
        assert str(caught.value) == (
            "no exposure of pricing-page for user-1; exposures recorded:\n"
            "  checkout-v2 for user-1: variant treatment-b"
        )

    async def test_async_assert_no_request_passes_and_fails_listing_the_requests(
        self, live_stub: SpawnedStub, astub: AsyncStubClient
    ) -> None:
        capture(live_stub.url, SIGNAL)
        await astub.assert_no_request("evaluate")
        ((seq,),) = [(r.seq,) for r in await astub.requests()]
        with pytest.raises(AssertionError) as caught:
            await astub.assert_no_request("capture")
        assert str(caught.value) == (
            f"expected no request to route 'capture', got 1:\n  #{seq} POST /v1/capture -> 200"
        )


class TestControlToken:
    def test_without_the_token_a_control_call_raises_401(self, guarded: SpawnedStub) -> None:
        with pytest.raises(StubError) as caught:
            StubClient(guarded.url).recorded()
        assert (caught.value.status, caught.value.code, caught.value.message) == (
            401,
            "UNAUTHORIZED",
            UNAUTHORIZED,
        )

    def test_health_needs_no_token(self, guarded: SpawnedStub) -> None:
        assert StubClient(guarded.url).health() is True

    def test_a_wrong_token_raises_401(self, guarded: SpawnedStub) -> None:
        with pytest.raises(StubError) as caught:
            StubClient(guarded.url, control_token="not-t").arm("500")
        assert (caught.value.status, caught.value.code) == (401, "UNAUTHORIZED")

    def test_with_the_token_control_calls_work(self, guarded: SpawnedStub) -> None:
        client = StubClient(guarded.url, control_token="t")
        client.reset()
        capture(guarded.url, SIGNAL)
        armed = client.arm("500", apply_to="batch")
        assert client.armed() == [armed]
        assert client.svc_events() == [SIGNAL]
        assert client.wait_for_svc_events(1, timeout=WAIT_S) == [SIGNAL]
        client.reset()
        assert client.recorded() == EMPTY

    async def test_async_without_the_token_raises_401_with_it_works(
        self, guarded: SpawnedStub
    ) -> None:
        without = AsyncStubClient(guarded.url)
        with_token = AsyncStubClient(guarded.url, control_token="t")
        try:
            with pytest.raises(StubError) as caught:
                await without.recorded()
            assert (caught.value.status, caught.value.code, caught.value.message) == (
                401,
                "UNAUTHORIZED",
                UNAUTHORIZED,
            )
            await with_token.reset()
            assert await with_token.recorded() == EMPTY
        finally:
            await without.close()
            await with_token.close()


class TestClientSideChecks:
    def test_arming_none_is_refused_in_favour_of_clear_faults(self, stub: StubClient) -> None:
        stub.arm("500", apply_to="batch")
        with pytest.raises(ValueError, match=r"call clear_faults\(\) for that"):
            stub.arm("none")
        assert len(stub.armed()) == 1

    def test_a_wait_longer_than_the_stub_holds_a_poll_is_refused_up_front(
        self, stub: StubClient
    ) -> None:
        with pytest.raises(ValueError, match="timeout: expected 0 to 60 seconds, got 61"):
            stub.wait_for_svc_events(1, timeout=61)

    def test_the_async_client_can_be_made_outside_an_event_loop(
        self, live_stub: SpawnedStub
    ) -> None:
        client = AsyncStubClient(live_stub.url)
        assert client.url == live_stub.url

    async def test_the_async_client_takes_the_same_arming_keywords(
        self, astub: AsyncStubClient
    ) -> None:
        with pytest.raises(TypeError):
            await astub.arm("500", colour="red")  # type: ignore[call-arg]
        armed = await astub.arm("429", ttl_requests=2, retry_after=3)
        assert (armed.ttl_requests, armed.retry_after) == (2, 3)


class TestNamespaces:
    def test_a_client_in_a_namespace_sees_only_it_and_gives_its_base_url(
        self, stub: StubClient
    ) -> None:
        scoped = stub.create_namespace(
            "client-ns",
            keys=["ns-key"],
            fixtures={"flags": {"only": {"type": "number", "value": 4}}},
        )
        try:
            assert (scoped.namespace, scoped.base_url) == ("client-ns", stub.url)
            assert scoped.url == stub.url + "/ns/client-ns"
            assert decision(scoped.url, "only")["value"] == 4
            capture(stub.url, exposure("only", "u1", None))  # the default namespace's
            assert len(scoped.svc_events()) == 0
            capture(scoped.url, exposure("only", "u1", None))
            assert [e["flagKey"] for e in scoped.wait_for_svc_events(1)] == ["only"]
            listed = {n.name: n for n in stub.namespaces()}
            assert (listed["client-ns"].bound_keys, listed["client-ns"].flags) == (1, 1)
            assert listed["client-ns"].recorded["svcEvents"] == 1
            same = stub.in_namespace("client-ns")
            assert same.recorded() == scoped.recorded()
        finally:
            scoped.delete_namespace()
        assert [n.name for n in stub.namespaces()] == ["default"]
        with pytest.raises(StubError) as raised:
            stub.delete_namespace("client-ns")
        assert raised.value.status == 404

    async def test_the_async_client_does_the_same(self, astub: AsyncStubClient) -> None:
        scoped = await astub.create_namespace("async-ns")
        try:
            assert scoped.url == astub.url + "/ns/async-ns"
            await scoped.arm("500", apply_to="evaluate")
            assert len(await scoped.armed()) == 1
            assert await astub.armed() == []
            assert [n.name for n in await astub.namespaces()] == ["default", "async-ns"]
        finally:
            await scoped.delete_namespace()
            await scoped.close()

    def test_a_bad_namespace_name_is_refused_before_any_request(self) -> None:
        with pytest.raises(ValueError, match=r"namespace: 'a/b' is not a namespace name"):
            StubClient("http://127.0.0.1:1", namespace="a/b")
        with pytest.raises(ValueError, match=r"delete_namespace\(\): name a namespace"):
            StubClient("http://127.0.0.1:1").delete_namespace()


class TestOneJournalReadTheSameEverywhere:
    def test_a_recorded_body_is_text_and_json_in_one_call(self, stub: StubClient) -> None:
        capture(stub.url, exposure("checkout-v2", "user-1", "treatment-b"))
        (sent,) = stub.requests("capture")
        assert sent.json() == {"events": [exposure("checkout-v2", "user-1", "treatment-b")]}
        assert sent.text is not None
        assert json.loads(sent.text) == sent.json()

    def test_a_request_without_a_body_says_so_when_read_as_json(self, stub: StubClient) -> None:
        with pytest.raises(urllib.error.HTTPError):  # a 401, recorded like any answer
            urllib.request.urlopen(stub.url + "/flags/definitions", timeout=HANG_GUARD_S)
        (sent,) = stub.requests("definitions")
        assert sent.text is None
        no_body = r"request #\d+ \(GET /flags/definitions\) sent no body"
        with pytest.raises(ValueError, match=no_body):
            sent.json()

    def test_the_offline_address_refuses_a_real_client(
        self, stub: StubClient, open_fireweave: OpenFireweave
    ) -> None:
        offline = stub.offline_url()
        _, _, client = open_fireweave(offline, "project-api-key_x", timeout_ms=3000)
        assert (
            client.control_points.get_boolean_value(
                "new-checkout", False, EvaluationContext(targeting_key="u")
            )
            is False
        )
        assert stub.requests() == []  # nothing reached the stub either

    def test_a_namespace_named_after_a_test(self, stub: StubClient) -> None:
        scoped = stub.create_namespace(test="TestCheckout::test_retries[503]")
        try:
            assert scoped.namespace is not None
            assert re.fullmatch(r"TestCheckout-test_retries-503-[0-9a-f]{8}", scoped.namespace)
        finally:
            scoped.delete_namespace()
        with pytest.raises(ValueError, match="give a name, or test="):
            stub.create_namespace("a", test="b")
