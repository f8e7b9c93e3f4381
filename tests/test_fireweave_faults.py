"""Faults as the published `fireweave==0.1.0` client sees them, in remote mode, against the stub.

Faults are armed through `POST /_test/fault` (the client cannot send the per-request fault
header or query). Every test reads what the client reports (value, reason, error kind) and, where
it matters, what the stub recorded in `/_test/requests`, `svcEvents` and `targets`.

Faults that leave a request in flight (delay, hang, slow_body) wait for the stub to record it
before the test ends, so it cannot land in the log of the next test after its reset.
"""

from __future__ import annotations

import json
import time
import urllib.request
from dataclasses import dataclass
from typing import Any, Protocol

import pytest
from fireweave import (
    EvaluationContext,
    FlagType,
    RegisterTargetOptions,
)

from conftest import HANG_GUARD_S, OpenFireweave, SpawnedStub

API_KEY = "fw-test-key-faults"
USER = EvaluationContext(targeting_key="user-1")
FLAG = "checkout-v2"
REAL_VALUE = "treatment-b"
REAL_REASON = "SPLIT"
DEFAULT = "caller-default"

CLIENT_TIMEOUT_MS = HANG_GUARD_S * 1000
"""For faults that answer at once: it guards a hang (a regression to one still fails), and is
not a speed budget (it was 2000 ms, which a busy 2-core machine can exceed)."""
SHORT_TIMEOUT_MS = 300
"""For the faults that are meant to run into the client's timeout."""
SETTLE_S = HANG_GUARD_S
"""How long `recorded` waits for the entries a test expects: a guard against their never
coming, not a speed budget (it was 5 s)."""
NEVER_ENDING_DELAY_MS = 10 * HANG_GUARD_S * 1000
"""A delay no test waits out: a client that returns within `HANG_GUARD_S` gave up on it."""


@dataclass
class Fireweave:
    """One remote-mode client and the pieces it is built from."""

    adapter: Any
    runtime: Any
    client: Any

    def read(self) -> Any:
        """The string flag's decision, with the caller default `DEFAULT`."""
        return self.client.control_points.get_details(FLAG, FlagType.STRING, DEFAULT, USER)


class Connect(Protocol):
    def __call__(self, timeout_ms: int = CLIENT_TIMEOUT_MS) -> Fireweave: ...


@pytest.fixture
def connect(live_stub: SpawnedStub, open_fireweave: OpenFireweave) -> Connect:
    """Build initialised clients of the (reset) session stub; each is shut down afterwards."""

    def _connect(timeout_ms: int = CLIENT_TIMEOUT_MS) -> Fireweave:
        return Fireweave(*open_fireweave(live_stub.url, API_KEY, timeout_ms))

    return _connect


@pytest.fixture
def fw(connect: Connect) -> Fireweave:
    return connect()


def arm(stub: SpawnedStub, document: dict[str, Any]) -> dict[str, Any]:
    """Arm a fault; returns it as the stub armed it (with its `id`)."""
    answer: dict[str, Any] = stub.post("/_test/fault", document)
    assert answer["ok"] is True
    armed: dict[str, Any] = answer["fault"]
    return armed


def armed_now(stub: SpawnedStub) -> list[dict[str, Any]]:
    armed: list[dict[str, Any]] = stub.get("/_test/fault")["armed"]
    return armed


def recorded(stub: SpawnedStub, count: int) -> list[dict[str, Any]]:
    """The request log once it holds at least `count` entries (a request the client gave up on
    is recorded only when the stub's handler finishes)."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        entries: list[dict[str, Any]] = stub.get("/_test/requests")["requests"]
        if len(entries) >= count or time.monotonic() > deadline:
            return entries
        time.sleep(0.02)


def routes_and_statuses(entries: list[dict[str, Any]]) -> list[tuple[str, int | None]]:
    return [(entry["route"], entry["status"]) for entry in entries]


def assert_error_default(decision: Any, kind: str) -> None:
    assert decision.value == DEFAULT
    assert decision.reason == "ERROR"
    assert decision.variant is None
    assert decision.error_kind == kind
    assert decision.flag_metadata["fireweave.errorKind"] == kind


def assert_real_value(decision: Any) -> None:
    assert decision.value == REAL_VALUE
    assert decision.reason == REAL_REASON
    assert decision.error_kind is None


def armed_provenance(armed: dict[str, Any], mode: str, **extra: int) -> dict[str, Any]:
    return {"mode": mode, "source": "armed", "armedId": armed["id"], **extra}


class TestErrorAnswersServeTheDefaultWithTheirErrorKind:
    @pytest.mark.parametrize(
        ("fault", "kind", "status"),
        [
            pytest.param({"mode": "401"}, "Authentication", 401, id="401"),
            pytest.param({"mode": "429"}, "RateLimited", 429, id="429"),
            pytest.param({"mode": "500"}, "BackendUnavailable", 500, id="500"),
            pytest.param(
                {"mode": "status", "status": 503}, "BackendUnavailable", 503, id="status-503"
            ),
            pytest.param({"mode": "invalid_json"}, "MalformedResponse", 200, id="invalid_json"),
        ],
    )
    def test_armed_fault_on_evaluate_reads_as_its_error_kind(
        self,
        live_stub: SpawnedStub,
        fw: Fireweave,
        fault: dict[str, Any],
        kind: str,
        status: int,
    ) -> None:
        armed = arm(live_stub, {**fault, "applyTo": "evaluate"})
        assert_error_default(fw.read(), kind)
        entries = recorded(live_stub, 1)
        assert routes_and_statuses(entries) == [("evaluate", status)]
        assert entries[0]["fault"] == armed_provenance(armed, fault["mode"])


class TestBrokenConnectionsReadAsInternal:
    """0.1.0 catches only timeouts and `URLError`; urllib raises what `getresponse()` and
    `read()` hit unwrapped (ConnectionResetError, RemoteDisconnected, IncompleteRead), so the
    runtime wraps them as `Internal`, not `Network` or `MalformedResponse`."""

    @pytest.mark.parametrize(
        ("mode", "status"),
        [
            # the contract table: a body shorter than its Content-Length -> Internal
            pytest.param("truncated", 200, id="truncated"),
            # no answer at all: the stub records a null status
            pytest.param("reset", None, id="reset"),
            pytest.param("empty_response", None, id="empty_response"),
        ],
    )
    def test_connection_level_fault_reads_as_internal(
        self, live_stub: SpawnedStub, fw: Fireweave, mode: str, status: int | None
    ) -> None:
        armed = arm(live_stub, {"mode": mode, "applyTo": "evaluate"})
        assert_error_default(fw.read(), "Internal")
        entries = recorded(live_stub, 1)
        assert routes_and_statuses(entries) == [("evaluate", status)]
        assert entries[0]["fault"] == armed_provenance(armed, mode)

    def test_reset_on_register_reads_as_backend_unavailable_without_a_retry(
        self, live_stub: SpawnedStub, fw: Fireweave
    ) -> None:
        # register_target turns a non-Fireweave exception into BackendUnavailable and stops.
        arm(live_stub, {"mode": "reset", "applyTo": "register"})
        result = fw.runtime.register_target("user-1")
        assert result.ok is False
        assert result.error.kind == "BackendUnavailable"
        assert routes_and_statuses(recorded(live_stub, 1)) == [("register", None)]
        assert live_stub.get("/_test/events")["targets"] == []


class TestSlowAnswersTimeOut:
    def test_delay_beyond_the_client_timeout_reads_as_timeout(
        self, live_stub: SpawnedStub, connect: Connect
    ) -> None:
        fw = connect(SHORT_TIMEOUT_MS)
        # The delay is ten times the hang guard: a read back within the guard did not wait it out.
        delay = {"mode": "delay", "delayMs": NEVER_ENDING_DELAY_MS, "applyTo": "evaluate"}
        armed = arm(live_stub, delay)
        started = time.monotonic()
        decision = fw.read()
        assert time.monotonic() - started < HANG_GUARD_S  # the client gave up
        assert_error_default(decision, "Timeout")
        # Recorded once the stub sees the client gone (it cuts the delay short): unanswered.
        entries = recorded(live_stub, 1)
        assert routes_and_statuses(entries) == [("evaluate", None)]
        assert entries[0]["fault"] == armed_provenance(armed, "delay")

    def test_hang_reads_as_timeout(self, live_stub: SpawnedStub, connect: Connect) -> None:
        fw = connect(SHORT_TIMEOUT_MS)
        arm(live_stub, {"mode": "hang", "applyTo": "evaluate"})
        assert_error_default(fw.read(), "Timeout")
        assert routes_and_statuses(recorded(live_stub, 1)) == [("evaluate", None)]

    def test_slow_body_with_gaps_beyond_the_timeout_reads_as_timeout(
        self, live_stub: SpawnedStub, connect: Connect
    ) -> None:
        # The client's timeout bounds each socket read, not the whole answer: the body goes out
        # in 20 pieces, so 8000 ms leaves 400 ms between pieces, more than the 300 ms timeout.
        fw = connect(SHORT_TIMEOUT_MS)
        arm(live_stub, {"mode": "slow_body", "delayMs": 8000, "applyTo": "evaluate"})
        assert_error_default(fw.read(), "Timeout")
        # recorded as it began: its status line went out before the client gave up
        assert routes_and_statuses(recorded(live_stub, 1)) == [("evaluate", 200)]

    def test_slow_body_shorter_than_the_timeout_reads_the_real_value(
        self, live_stub: SpawnedStub, connect: Connect
    ) -> None:
        fw = connect(SHORT_TIMEOUT_MS)
        arm(live_stub, {"mode": "slow_body", "delayMs": 100, "applyTo": "evaluate"})
        assert_real_value(fw.read())
        assert routes_and_statuses(recorded(live_stub, 1)) == [("evaluate", 200)]

    def test_slow_body_longer_than_the_timeout_in_short_gaps_still_reads_the_real_value(
        self, live_stub: SpawnedStub, connect: Connect
    ) -> None:
        # 700 ms in all, 35 ms between pieces: no single read waits 300 ms.
        fw = connect(SHORT_TIMEOUT_MS)
        arm(live_stub, {"mode": "slow_body", "delayMs": 700, "applyTo": "evaluate"})
        started = time.monotonic()
        decision = fw.read()
        assert time.monotonic() - started > SHORT_TIMEOUT_MS / 1000
        assert_real_value(decision)
        assert routes_and_statuses(recorded(live_stub, 1)) == [("evaluate", 200)]


def raw_evaluate(stub: SpawnedStub, flag_key: str) -> dict[str, Any]:
    body = json.dumps({"targetingKey": "user-1", "flagKeys": [flag_key]}).encode()
    request = urllib.request.Request(
        stub.url + "/v1/flags/evaluate",
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {API_KEY}"},
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        answer: dict[str, Any] = json.load(response)
        return answer


class TestQuotaLimitedServesTheDefault:
    def test_quota_limited_reads_the_default_with_no_error_and_no_quota_marker(
        self, live_stub: SpawnedStub, fw: Fireweave
    ) -> None:
        arm(live_stub, {"mode": "quota_limited", "applyTo": "evaluate"})
        # What the stub says on the wire: the key not found, and quotaLimited true.
        answer = raw_evaluate(live_stub, FLAG)
        assert answer["quotaLimited"] is True
        assert [(d["flagKey"], d["found"]) for d in answer["decisions"]] == [(FLAG, False)]

        decision = fw.read()
        # 0.1.0 reads it as an unmatched flag: the caller default, reason DEFAULT, no error.
        assert decision.value == DEFAULT
        assert decision.reason == "DEFAULT"
        assert decision.error_kind is None
        # and drops the quota flag: fireweave.quotaLimited is only set on a FlagNotFound error.
        assert "fireweave.quotaLimited" not in decision.flag_metadata
        assert routes_and_statuses(recorded(live_stub, 2)) == [("evaluate", 200)] * 2


class TestArmedFaultsRespectApplyTo:
    def test_fault_armed_on_capture_leaves_evaluate_and_register_alone(
        self, live_stub: SpawnedStub, fw: Fireweave
    ) -> None:
        armed = arm(live_stub, {"mode": "500", "applyTo": "capture"})
        assert_real_value(fw.read())
        assert fw.runtime.register_target("user-1").ok is True
        assert [a["fired"] for a in armed_now(live_stub)] == [0]

        # It is live on capture all the same.
        fw.client.exposures.record("user-1", FLAG, REAL_VALUE, REAL_VALUE)
        fw.client.exposures.flush()
        fw.adapter.flush()
        entries = recorded(live_stub, 3)
        assert routes_and_statuses(entries) == [
            ("evaluate", 200),
            ("register", 200),
            ("capture", 500),
        ]
        assert [e["fault"] for e in entries] == [None, None, armed_provenance(armed, "500")]
        assert live_stub.get("/_test/events")["svcEvents"] == []


class TestTtlRequests:
    def test_500_with_ttl_one_fails_the_first_read_only(
        self, live_stub: SpawnedStub, fw: Fireweave
    ) -> None:
        armed = arm(live_stub, {"mode": "500", "applyTo": "evaluate", "ttlRequests": 1})
        assert_error_default(fw.read(), "BackendUnavailable")
        assert armed_now(live_stub) == []  # disarmed itself
        assert_real_value(fw.read())
        entries = recorded(live_stub, 2)
        assert routes_and_statuses(entries) == [("evaluate", 500), ("evaluate", 200)]
        assert [e["fault"] for e in entries] == [armed_provenance(armed, "500"), None]


class TestRegisterRetryRule:
    def test_500_once_is_retried_and_registered_exactly_once(
        self, live_stub: SpawnedStub, fw: Fireweave
    ) -> None:
        armed = arm(live_stub, {"mode": "500", "applyTo": "register", "ttlRequests": 1})
        result = fw.runtime.register_target("user-1", RegisterTargetOptions(kind="user"))
        assert result.ok is True
        assert result.error is None
        entries = recorded(live_stub, 2)
        assert routes_and_statuses(entries) == [("register", 500), ("register", 200)]
        assert [e["fault"] for e in entries] == [armed_provenance(armed, "500"), None]
        assert live_stub.get("/_test/events")["targets"] == [
            {"targetingKey": "user-1", "kind": "user"}
        ]

    def test_401_is_not_retried(self, live_stub: SpawnedStub, fw: Fireweave) -> None:
        arm(live_stub, {"mode": "401", "applyTo": "register"})
        result = fw.runtime.register_target("user-1", RegisterTargetOptions(kind="user"))
        assert result.ok is False
        assert result.error.kind == "Authentication"
        assert routes_and_statuses(recorded(live_stub, 1)) == [("register", 401)]
        assert live_stub.get("/_test/events")["targets"] == []


class TestFailedCaptureIsResent:
    def test_batch_refused_once_is_stored_exactly_once_on_the_next_flush(
        self, live_stub: SpawnedStub, fw: Fireweave
    ) -> None:
        armed = arm(live_stub, {"mode": "500", "applyTo": "capture", "ttlRequests": 1})
        fw.client.exposures.record("user-1", FLAG, REAL_VALUE, REAL_VALUE)
        fw.client.exposures.flush()  # hands the batch to the adapter

        fw.adapter.flush()  # 500: the batch goes back on the queue
        assert live_stub.get("/_test/events")["svcEvents"] == []

        fw.adapter.flush()
        fw.client.shutdown()  # flushes again: nothing is left to send
        assert live_stub.get("/_test/events")["svcEvents"] == [
            {
                "type": "exposure",
                "targetingKey": "user-1",
                "flagKey": FLAG,
                "value": REAL_VALUE,
                "variant": REAL_VALUE,
            }
        ]
        entries = recorded(live_stub, 2)
        assert routes_and_statuses(entries) == [("capture", 500), ("capture", 200)]
        assert [e["fault"] for e in entries] == [armed_provenance(armed, "500"), None]


class TestSequences:
    def test_sequence_plays_each_step_once_then_disarms(
        self, live_stub: SpawnedStub, fw: Fireweave
    ) -> None:
        armed = arm(live_stub, {"sequence": ["429", "500", "none"], "applyTo": "evaluate"})
        first, second, third, fourth = (fw.read() for _ in range(4))
        assert_error_default(first, "RateLimited")
        assert_error_default(second, "BackendUnavailable")
        assert_real_value(third)
        assert_real_value(fourth)
        assert armed_now(live_stub) == []

        entries = recorded(live_stub, 4)
        assert routes_and_statuses(entries) == [
            ("evaluate", 429),
            ("evaluate", 500),
            ("evaluate", 200),
            ("evaluate", 200),
        ]
        assert [e["fault"] for e in entries] == [
            armed_provenance(armed, "429", step=0),
            armed_provenance(armed, "500", step=1),
            armed_provenance(armed, "none", step=2),
            None,
        ]


READS = 20
SEEDED = {"mode": "500", "probability": 0.5, "seed": 7, "applyTo": "evaluate"}


def seeded_failures(stub: SpawnedStub, fw: Fireweave) -> list[bool]:
    """Arm the seeded fault, read `READS` times: which reads failed (and the stub agrees)."""
    arm(stub, SEEDED)
    failed = []
    for _ in range(READS):
        decision = fw.read()
        if decision.error_kind is None:
            assert_real_value(decision)
        else:
            assert_error_default(decision, "BackendUnavailable")
        failed.append(decision.error_kind is not None)
    statuses = [entry["status"] for entry in recorded(stub, READS)]
    assert statuses == [500 if f else 200 for f in failed]
    return failed


class TestSeededProbability:
    def test_same_seed_after_a_reset_fails_the_same_reads(
        self, live_stub: SpawnedStub, fw: Fireweave
    ) -> None:
        first = seeded_failures(live_stub, fw)
        live_stub.post("/_test/reset")
        again = seeded_failures(live_stub, fw)
        assert again == first
        assert any(first)
        assert not all(first)
