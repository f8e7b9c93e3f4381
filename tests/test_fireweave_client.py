"""The published `fireweave==0.1.0` client, in remote mode, against a spawned stub.

Every test drives the real client over HTTP (no transport injection) and checks what it reads,
and what the stub recorded, through the test-control plane.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fireweave import (
    EvaluationContext,
    FlagType,
    RegisterTargetOptions,
)

from conftest import HANG_GUARD_S, OpenFireweave, SpawnedStub, spawn_stub

API_KEY = "fw-test-key-3b9d1c7e"
GOOD_KEY = "good"
USER = EvaluationContext(targeting_key="user-1")


@dataclass
class Fireweave:
    """One remote-mode client and the pieces it is built from."""

    adapter: Any
    runtime: Any
    client: Any

    def details(
        self,
        key: str,
        flag_type: Any,
        default: Any,
        context: Any = USER,
        *,
        include_payload: bool = False,
    ) -> Any:
        return self.client.control_points.get_details(
            key, flag_type, default, context, include_payload=include_payload
        )


Connect = Callable[[str, str], Fireweave]


@pytest.fixture
def connect(open_fireweave: OpenFireweave) -> Connect:
    """Build initialised remote clients; every one is shut down after the test."""
    return lambda url, api_key: Fireweave(*open_fireweave(url, api_key))


@pytest.fixture
def fw(live_stub: SpawnedStub, connect: Connect) -> Fireweave:
    """A client of the session stub (any key is accepted there)."""
    return connect(live_stub.url, API_KEY)


@pytest.fixture(scope="module")
def keyed_session_stub() -> Iterator[SpawnedStub]:
    with spawn_stub("--api-key", GOOD_KEY) as stub:
        yield stub


@pytest.fixture
def keyed_stub(keyed_session_stub: SpawnedStub) -> SpawnedStub:
    """A stub that accepts only the key `good`, reset before the test."""
    keyed_session_stub.post("/_test/reset")
    return keyed_session_stub


def svc_events(stub: SpawnedStub) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = stub.get("/_test/events")["svcEvents"]
    return events


def raw_get(stub: SpawnedStub, path: str) -> str:
    with urllib.request.urlopen(stub.url + path, timeout=HANG_GUARD_S) as response:
        text: str = response.read().decode()
        return text


class TestTypedReadsReturnFixtureValues:
    def test_boolean_on_reads_true(self, fw: Fireweave) -> None:
        assert fw.client.control_points.get_boolean_value("new-checkout", False, USER) is True

    def test_boolean_off_reads_false_not_the_default(self, fw: Fireweave) -> None:
        assert fw.client.control_points.get_boolean_value("dark-mode", True, USER) is False

    def test_string_reads_the_variant_value(self, fw: Fireweave) -> None:
        assert fw.client.control_points.get_string_value("checkout-v2", "x", USER) == "treatment-b"

    def test_integer_reads_an_int(self, fw: Fireweave) -> None:
        value = fw.client.control_points.get_integer_value("max-items", 0, USER)
        assert value == 25
        assert type(value) is int

    def test_float_reads_the_fraction(self, fw: Fireweave) -> None:
        assert fw.client.control_points.get_float_value("discount-rate", 0.0, USER) == 0.15

    def test_object_reads_the_whole_object(self, fw: Fireweave) -> None:
        value = fw.client.control_points.get_object_value("ui-config", {}, USER)
        assert value == {"theme": "dark", "columns": 3, "beta": False}


class TestDetailsCarryReasonAndVersion:
    @pytest.mark.parametrize(
        ("key", "flag_type", "default", "value", "variant", "reason", "version"),
        [
            ("new-checkout", FlagType.BOOLEAN, False, True, None, "TARGETING_MATCH", 3),
            ("dark-mode", FlagType.BOOLEAN, True, False, None, "TARGETING_MATCH", 1),
            ("legacy-banner", FlagType.BOOLEAN, True, False, None, "DISABLED", 5),
            ("checkout-v2", FlagType.STRING, "x", "treatment-b", "treatment-b", "SPLIT", 7),
            ("pricing-page", FlagType.STRING, "x", "annual-first", "annual-first", "SPLIT", 2),
            ("max-items", FlagType.INTEGER, 0, 25, None, "TARGETING_MATCH", 4),
            ("discount-rate", FlagType.FLOAT, 0.0, 0.15, None, "TARGETING_MATCH", 1),
            (
                "ui-config",
                FlagType.OBJECT,
                {},
                {"theme": "dark", "columns": 3, "beta": False},
                None,
                "TARGETING_MATCH",
                9,
            ),
        ],
    )
    def test_decision_matches_the_fixture(
        self,
        fw: Fireweave,
        key: str,
        flag_type: Any,
        default: Any,
        value: Any,
        variant: str | None,
        reason: str,
        version: int,
    ) -> None:
        decision = fw.details(key, flag_type, default)
        assert decision.value == value
        assert type(decision.value) is type(value)
        assert decision.variant == variant
        assert decision.reason == reason
        assert decision.error_kind is None
        assert decision.flag_metadata["fireweave.flagVersion"] == version

    def test_disabled_flag_serves_its_value_with_reason_disabled(self, fw: Fireweave) -> None:
        decision = fw.details("legacy-banner", FlagType.BOOLEAN, True)
        assert (decision.value, decision.reason) == (False, "DISABLED")


class TestMissingKeyServesCallerDefault:
    def test_unknown_key_gives_default_with_reason_default(self, fw: Fireweave) -> None:
        decision = fw.details("no-such-flag", FlagType.STRING, "fallback")
        assert decision.value == "fallback"
        assert decision.reason == "DEFAULT"
        assert decision.variant is None
        assert decision.error_kind is None
        assert "fireweave.flagVersion" not in decision.flag_metadata

    def test_unknown_key_typed_read_returns_default(self, fw: Fireweave) -> None:
        assert fw.client.control_points.get_boolean_value("no-such-flag", True, USER) is True


class TestMatchAttributeTargeting:
    def test_matching_attribute_gets_the_value(self, fw: Fireweave) -> None:
        context = EvaluationContext(targeting_key="user-1", attributes={"plan": "enterprise"})
        decision = fw.details("enterprise-dashboard", FlagType.BOOLEAN, False, context)
        assert decision.value is True
        assert decision.reason == "TARGETING_MATCH"
        assert decision.flag_metadata["fireweave.flagVersion"] == 1

    def test_other_attribute_value_gets_the_default(self, fw: Fireweave) -> None:
        context = EvaluationContext(targeting_key="user-1", attributes={"plan": "pro"})
        decision = fw.details("enterprise-dashboard", FlagType.BOOLEAN, False, context)
        assert (decision.value, decision.reason) == (False, "DEFAULT")

    def test_absent_attribute_gets_the_default(self, fw: Fireweave) -> None:
        decision = fw.details("enterprise-dashboard", FlagType.BOOLEAN, False)
        assert (decision.value, decision.reason) == (False, "DEFAULT")


class TestPayloadInMetadata:
    def test_include_payload_puts_the_client_encoded_payload_in_metadata(
        self, fw: Fireweave
    ) -> None:
        decision = fw.details("pricing-page", FlagType.STRING, "x", include_payload=True)
        # The client re-encodes the parsed payload object: sorted keys, compact separators.
        encoded = decision.flag_metadata["fireweave.payload"]
        assert encoded == '{"headline":"Save 20% yearly","rolloutId":"r1"}'
        assert json.loads(encoded) == {"rolloutId": "r1", "headline": "Save 20% yearly"}

    def test_without_include_payload_the_payload_is_absent(self, fw: Fireweave) -> None:
        decision = fw.details("pricing-page", FlagType.STRING, "x")
        assert decision.value == "annual-first"
        assert "fireweave.payload" not in decision.flag_metadata

    def test_flag_without_payload_has_none_even_when_asked(self, fw: Fireweave) -> None:
        decision = fw.details("checkout-v2", FlagType.STRING, "x", include_payload=True)
        assert "fireweave.payload" not in decision.flag_metadata


class TestExposuresReachTheStub:
    def test_flushed_exposure_is_stored_verbatim_exactly_once(
        self, live_stub: SpawnedStub, fw: Fireweave
    ) -> None:
        first = fw.client.exposures.record("user-1", "checkout-v2", "treatment-b", "treatment-b")
        again = fw.client.exposures.record("user-1", "checkout-v2", "treatment-b", "treatment-b")
        assert (first.ok, first.deduped, again.deduped) == (True, False, True)

        flushed = fw.client.exposures.flush()
        assert (flushed.ok, flushed.flushed) == (True, 1)
        # exposures.flush only hands the batch to the adapter; nothing is on the wire yet.
        assert svc_events(live_stub) == []

        fw.adapter.flush()
        fw.adapter.flush()
        fw.client.shutdown()

        assert svc_events(live_stub) == [
            {
                "type": "exposure",
                "targetingKey": "user-1",
                "flagKey": "checkout-v2",
                "value": "treatment-b",
                "variant": "treatment-b",
            }
        ]

    def test_exposure_with_null_variant_and_object_value_is_accepted(
        self, live_stub: SpawnedStub, fw: Fireweave
    ) -> None:
        value = {"theme": "dark", "columns": 3, "beta": False}
        fw.client.exposures.record("user-2", "ui-config", None, value)
        fw.client.exposures.flush()
        fw.adapter.flush()

        assert svc_events(live_stub) == [
            {
                "type": "exposure",
                "targetingKey": "user-2",
                "flagKey": "ui-config",
                "value": value,
                "variant": None,
            }
        ]
        routes = [r["route"] for r in live_stub.get("/_test/requests")["requests"]]
        assert routes == ["capture"]


class TestSignalsReachTheStub:
    def test_all_four_kinds_are_stored_with_their_kind(
        self, live_stub: SpawnedStub, fw: Fireweave
    ) -> None:
        signals = fw.client.signals
        results = [
            signals.record_health("checkout-health", "ok"),
            signals.record_error("checkout-error", error_kind="Timeout", message="slow"),
            signals.record_metric("checkout-latency", 12.5, unit="ms"),
            signals.record_outcome("checkout-outcome", "success"),
        ]
        assert all(result.ok and result.accepted for result in results)
        fw.adapter.flush()

        events = svc_events(live_stub)
        assert [e["properties"]["kind"] for e in events] == ["health", "error", "metric", "outcome"]
        # Verbatim: what the 0.1.0 adapter puts on the wire (only kind and status survive).
        assert events == [
            {
                "type": "signal",
                "targetingKey": "fireweave-sdk",
                "name": name,
                "flagKey": None,
                "variant": None,
                "properties": {"kind": kind, "status": status},
            }
            for name, kind, status in [
                ("checkout-health", "health", "ok"),
                ("checkout-error", "error", None),
                ("checkout-latency", "metric", None),
                ("checkout-outcome", "outcome", "success"),
            ]
        ]

    def test_signals_share_one_capture_request(self, live_stub: SpawnedStub, fw: Fireweave) -> None:
        fw.client.signals.record_health("h", "ok")
        fw.client.signals.record_outcome("o", "failure")
        fw.adapter.flush()
        requests = live_stub.get("/_test/requests")["requests"]
        assert [(r["route"], r["status"]) for r in requests] == [("capture", 200)]


class TestTargetRegistration:
    def test_register_target_is_ok_and_recorded_with_its_fields(
        self, live_stub: SpawnedStub, fw: Fireweave
    ) -> None:
        options = RegisterTargetOptions(
            kind="user", environment="test", properties={"plan": "pro", "seats": 4}
        )
        result = fw.runtime.register_target("user-1", options)
        assert result.ok is True
        assert result.error is None
        assert live_stub.get("/_test/events")["targets"] == [
            {
                "targetingKey": "user-1",
                "kind": "user",
                "environment": "test",
                "properties": {"plan": "pro", "seats": 4},
            }
        ]

    def test_adapter_registration_omits_unset_fields(
        self, live_stub: SpawnedStub, fw: Fireweave
    ) -> None:
        result = fw.adapter.register_target("device-9", RegisterTargetOptions(kind="device"))
        assert result.ok is True
        assert live_stub.get("/_test/events")["targets"] == [
            {"targetingKey": "device-9", "kind": "device"}
        ]


class TestApiKeyEnforcement:
    def test_wrong_key_gets_default_with_authentication_error(
        self, keyed_stub: SpawnedStub, connect: Connect
    ) -> None:
        fw = connect(keyed_stub.url, "not-good")
        decision = fw.details("new-checkout", FlagType.BOOLEAN, False)
        assert decision.value is False
        assert decision.reason == "ERROR"
        assert decision.error_kind == "Authentication"
        assert decision.flag_metadata["fireweave.errorKind"] == "Authentication"
        requests = keyed_stub.get("/_test/requests")["requests"]
        assert [(r["route"], r["status"]) for r in requests] == [("evaluate", 401)]

    def test_good_key_reads_the_value(self, keyed_stub: SpawnedStub, connect: Connect) -> None:
        fw = connect(keyed_stub.url, GOOD_KEY)
        decision = fw.details("new-checkout", FlagType.BOOLEAN, False)
        assert (decision.value, decision.reason, decision.error_kind) == (
            True,
            "TARGETING_MATCH",
            None,
        )

    def test_wrong_key_registers_and_captures_nothing(
        self, keyed_stub: SpawnedStub, connect: Connect
    ) -> None:
        fw = connect(keyed_stub.url, "not-good")
        result = fw.runtime.register_target("user-1")
        assert result.ok is False
        assert result.error.kind == "Authentication"
        fw.client.signals.record_health("h", "ok")
        fw.adapter.flush()
        recorded = keyed_stub.get("/_test/events")
        assert (recorded["svcEvents"], recorded["targets"]) == ([], [])
        # 401 is not retryable: one register attempt, one capture attempt.
        requests = keyed_stub.get("/_test/requests")["requests"]
        assert [(r["route"], r["status"]) for r in requests] == [
            ("register", 401),
            ("capture", 401),
        ]


class TestRequestLog:
    def test_evaluate_request_is_logged_with_route_and_status(
        self, live_stub: SpawnedStub, fw: Fireweave
    ) -> None:
        assert fw.client.control_points.get_string_value("checkout-v2", "x", USER) == "treatment-b"
        requests = live_stub.get("/_test/requests")["requests"]
        assert len(requests) == 1
        entry = requests[0]
        assert entry["method"] == "POST"
        assert entry["path"] == "/v1/flags/evaluate"
        assert entry["route"] == "evaluate"
        assert entry["status"] == 200
        assert entry["fault"] is None

    def test_api_key_appears_nowhere_in_the_log(
        self, live_stub: SpawnedStub, fw: Fireweave
    ) -> None:
        fw.client.control_points.get_boolean_value("new-checkout", False, USER)
        fw.runtime.register_target("user-1")
        fw.client.signals.record_health("h", "ok")
        fw.adapter.flush()
        text = raw_get(live_stub, "/_test/requests")
        routes = [r["route"] for r in json.loads(text)["requests"]]
        assert routes == ["evaluate", "register", "capture"]
        assert API_KEY not in text
        # the scheme and the key's family stay (this key has none); the key never shows
        shown = {r["headers"]["authorization"] for r in json.loads(text)["requests"]}
        assert shown == {"Bearer [redacted]"}
        assert API_KEY not in raw_get(live_stub, "/_test/events")
