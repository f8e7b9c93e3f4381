"""The real PostHog Python SDK (`posthog` 7.91.x) against a spawned stub's legacy vendor routes.

Every client is built as a user builds it: `Posthog(project_key, host=stub.url, ...)`, remote
evaluation without a secret key, local evaluation with one. What the SDK returns is checked
against what the default fixtures imply, and what reached the stub through the test-control
plane (`/_test/requests`, `/_test/events`). Faults are armed with `POST /_test/fault` and the
SDK's observable behaviour is asserted per route, as `vendor-routes.md` describes it.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import posthog.request
import pytest
from posthog import Posthog
from posthog.request import APIError
from posthog.types import FlagValue

from conftest import HANG_GUARD_S, SpawnedStub

PROJECT_KEY = "phc_test"
SECRET_KEY = "phs_secret"
USER = "user-1"
ENTERPRISE = {"plan": "enterprise"}
FREE = {"plan": "free"}

# posthog 7.91 deprecates the single-flag reads in favour of `evaluate_flags()`. They still work
# and are what most code calls, so the tests call them and ignore exactly these warnings.
pytestmark = [
    pytest.mark.filterwarnings("ignore:`feature_enabled` is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:`get_feature_flag` is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings(
        "ignore:`get_feature_flag_payload` is deprecated:DeprecationWarning"
    ),
]

# What the default fixtures imply through the SDK: the value a read returns (boolean value;
# the string variant; number and object flags are enabled, carrying the value as the payload;
# the disabled flag is off), for a person whose plan is enterprise and for anyone else.
VALUES_FOR_ENTERPRISE: dict[str, FlagValue] = {
    "new-checkout": True,
    "dark-mode": False,
    "legacy-banner": False,
    "checkout-v2": "treatment-b",
    "pricing-page": "annual-first",
    "max-items": True,
    "discount-rate": True,
    "ui-config": True,
    "enterprise-dashboard": True,
}
VALUES_FOR_OTHERS: dict[str, FlagValue] = {**VALUES_FOR_ENTERPRISE, "enterprise-dashboard": False}
FLAG_KEYS = list(VALUES_FOR_ENTERPRISE)

PAYLOADS: dict[str, object] = {
    "pricing-page": {"rolloutId": "r1", "headline": "Save 20% yearly"},
    "max-items": 25,
    "discount-rate": 0.15,
    "ui-config": {"theme": "dark", "columns": 3, "beta": False},
}
# `get_all_flags_and_payloads` hands payloads back as the JSON strings the vendor carries.
RAW_PAYLOADS = {
    "pricing-page": '{"rolloutId":"r1","headline":"Save 20% yearly"}',
    "max-items": "25",
    "discount-rate": "0.15",
    "ui-config": '{"theme":"dark","columns":3,"beta":false}',
}
# The fixture metadata, which `$feature_flag_called` events report.
# The vendor's reason for records served off: a boolean false is a 0 % rollout, a disabled flag
# matches no condition; every other record matched.
REASONS_FOR_ENTERPRISE = {
    "dark-mode": "Out of rollout bound",
    "legacy-banner": "No matching condition set",
}

VERSION_AND_ID = {
    "new-checkout": (3, 1),
    "dark-mode": (1, 2),
    "legacy-banner": (5, 3),
    "checkout-v2": (7, 4),
    "pricing-page": (2, 5),
    "max-items": (4, 6),
    "discount-rate": (1, 7),
    "ui-config": (9, 8),
    "enterprise-dashboard": (1, 9),
}

Connect = Callable[..., Posthog]
ErrorLog = list[tuple[Exception, list[Any]]]


@pytest.fixture
def connect(live_stub: SpawnedStub) -> Iterator[Connect]:
    """Build clients of the session stub with short timeouts; every one is shut down after."""
    opened: list[Posthog] = []

    def _connect(**options: Any) -> Posthog:
        settings: dict[str, Any] = {
            "host": live_stub.url,
            "sync_mode": True,
            "max_retries": 1,
            "timeout": 2,
            "feature_flags_request_timeout_seconds": 1,
            "poll_interval": 3600,  # never polls during a test: loads are explicit
            **options,
        }
        client = Posthog(PROJECT_KEY, **settings)
        opened.append(client)
        return client

    yield _connect
    for client in opened:
        client.shutdown()


@pytest.fixture
def remote(connect: Connect) -> Posthog:
    """Remote evaluation: no secret key, so every read asks `/flags`."""
    return connect()


@pytest.fixture
def local(connect: Connect) -> Posthog:
    """Local evaluation: definitions loaded synchronously with the secret key."""
    client = connect(secret_key=SECRET_KEY)
    load_definitions(client)
    return client


def load_definitions(client: Posthog) -> None:
    # `load_feature_flags` has no annotations in posthog 7.91: strict mypy refuses a direct call
    # (no-untyped-call), so it is called through a typed reference.
    loader: Callable[[], None] = client.load_feature_flags
    loader()


def arm(stub: SpawnedStub, **fault: Any) -> None:
    stub.post("/_test/fault", fault)


def recorded(stub: SpawnedStub, route: str) -> list[tuple[int | None, str | None]]:
    """(status, fault mode) of every recorded request to one route, in arrival order."""
    return [
        (entry["status"], entry["fault"]["mode"] if entry["fault"] else None)
        for entry in stub.get("/_test/requests")["requests"]
        if entry["route"] == route
    ]


def routes_other_than_batch(stub: SpawnedStub) -> list[str]:
    return [
        entry["route"]
        for entry in stub.get("/_test/requests")["requests"]
        if entry["route"] != "batch"
    ]


def recorded_eventually(
    stub: SpawnedStub, route: str, count: int
) -> list[tuple[int | None, str | None]]:
    """For faults that never answer: the stub records them once it sees the client leave.
    HANG_GUARD_S (was 3 s) guards entries that never come; it is not a speed budget."""
    deadline = time.monotonic() + HANG_GUARD_S
    while True:
        entries = recorded(stub, route)
        if len(entries) >= count or time.monotonic() > deadline:
            return entries
        time.sleep(0.05)


def api_status(error: Exception) -> object:
    """The HTTP status of the SDK's APIError, else the error itself (so a mismatch shows it)."""
    return error.status if isinstance(error, APIError) else error


def events(stub: SpawnedStub) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = stub.get("/_test/events")["events"]
    return events


def flag_called(stub: SpawnedStub) -> list[dict[str, Any]]:
    """The properties of every recorded `$feature_flag_called` event."""
    return [e["properties"] for e in events(stub) if e["event"] == "$feature_flag_called"]


def flag_errors(stub: SpawnedStub) -> list[tuple[str, object, object]]:
    """(flag, response, `$feature_flag_error`) of every recorded `$feature_flag_called`."""
    return [
        (p["$feature_flag"], p["$feature_flag_response"], p.get("$feature_flag_error"))
        for p in flag_called(stub)
    ]


class TestRemoteEvaluation:
    """No secret key: every read is a `POST /flags/?v=4` answered from the default fixtures."""

    @pytest.mark.parametrize(
        ("person", "values"),
        [(ENTERPRISE, VALUES_FOR_ENTERPRISE), (FREE, VALUES_FOR_OTHERS)],
        ids=["enterprise", "free"],
    )
    def test_get_feature_flag_returns_every_fixture_value(
        self,
        remote: Posthog,
        live_stub: SpawnedStub,
        person: dict[str, str],
        values: dict[str, FlagValue],
    ) -> None:
        read = {k: remote.get_feature_flag(k, USER, person_properties=person) for k in FLAG_KEYS}
        assert read == values
        stub_requests = live_stub.get("/_test/requests")["requests"]
        flags_requests = [r for r in stub_requests if r["route"] == "flags"]
        assert [(r["method"], r["path"], r["query"], r["status"]) for r in flags_requests] == [
            ("POST", "/flags/", {"v": "4"}, 200)
        ] * len(FLAG_KEYS)

    @pytest.mark.parametrize(
        ("person", "values"),
        [(ENTERPRISE, VALUES_FOR_ENTERPRISE), (FREE, VALUES_FOR_OTHERS)],
        ids=["enterprise", "free"],
    )
    def test_feature_enabled_is_true_exactly_for_enabled_flags(
        self, remote: Posthog, person: dict[str, str], values: dict[str, FlagValue]
    ) -> None:
        enabled = {k: remote.feature_enabled(k, USER, person_properties=person) for k in FLAG_KEYS}
        assert enabled == {k: bool(v) for k, v in values.items()}

    def test_get_feature_flag_payload_returns_number_and_object_values_as_payloads(
        self, remote: Posthog
    ) -> None:
        payloads = {
            k: remote.get_feature_flag_payload(k, USER, person_properties=ENTERPRISE)
            for k in FLAG_KEYS
        }
        assert payloads == {k: PAYLOADS.get(k) for k in FLAG_KEYS}

    @pytest.mark.parametrize(
        ("person", "values"),
        [(ENTERPRISE, VALUES_FOR_ENTERPRISE), (FREE, VALUES_FOR_OTHERS), ({}, VALUES_FOR_OTHERS)],
        ids=["enterprise", "free", "no-properties"],
    )
    def test_get_all_flags_returns_every_fixture_flag_in_one_request(
        self,
        remote: Posthog,
        live_stub: SpawnedStub,
        person: dict[str, str],
        values: dict[str, FlagValue],
    ) -> None:
        assert remote.get_all_flags(USER, person_properties=person) == values
        assert recorded(live_stub, "flags") == [(200, None)]

    def test_get_all_flags_and_payloads_returns_payloads_as_json_strings(
        self, remote: Posthog
    ) -> None:
        assert remote.get_all_flags_and_payloads(USER, person_properties=ENTERPRISE) == {
            "featureFlags": VALUES_FOR_ENTERPRISE,
            "featureFlagPayloads": RAW_PAYLOADS,
        }

    def test_enterprise_dashboard_is_on_only_for_plan_enterprise(self, remote: Posthog) -> None:
        key = "enterprise-dashboard"
        assert remote.feature_enabled(key, USER, person_properties=ENTERPRISE) is True
        assert remote.get_feature_flag(key, USER, person_properties=ENTERPRISE) is True
        assert remote.feature_enabled(key, USER, person_properties=FREE) is False
        assert remote.get_feature_flag(key, USER, person_properties=FREE) is False
        assert remote.feature_enabled(key, USER) is False
        assert remote.get_feature_flag(key, USER) is False

    def test_evaluate_flags_snapshot_matches_the_fixtures_from_one_request(
        self, remote: Posthog, live_stub: SpawnedStub
    ) -> None:
        snapshot = remote.evaluate_flags(USER, person_properties=ENTERPRISE)
        assert snapshot.keys == FLAG_KEYS
        assert {k: snapshot.get_flag(k) for k in FLAG_KEYS} == VALUES_FOR_ENTERPRISE
        assert {k: snapshot.get_flag_payload(k) for k in FLAG_KEYS} == {
            k: PAYLOADS.get(k) for k in FLAG_KEYS
        }
        assert recorded(live_stub, "flags") == [(200, None)]

    def test_an_unknown_flag_reads_as_none_with_flag_missing(
        self, remote: Posthog, live_stub: SpawnedStub
    ) -> None:
        assert remote.get_feature_flag("no-such-flag", USER) is None
        assert flag_errors(live_stub) == [("no-such-flag", None, "flag_missing")]


class TestLocalEvaluation:
    """With a secret key the SDK polls the definitions and evaluates without asking `/flags`."""

    @pytest.mark.parametrize(
        ("person", "values"),
        [(ENTERPRISE, VALUES_FOR_ENTERPRISE), (FREE, VALUES_FOR_OTHERS)],
        ids=["enterprise", "free"],
    )
    def test_every_flag_evaluates_locally_as_remote_does_without_a_flags_request(
        self,
        local: Posthog,
        connect: Connect,
        live_stub: SpawnedStub,
        person: dict[str, str],
        values: dict[str, FlagValue],
    ) -> None:
        def read_everything(client: Posthog) -> dict[str, Any]:
            return {
                "get_feature_flag": {
                    k: client.get_feature_flag(k, USER, person_properties=person) for k in FLAG_KEYS
                },
                "feature_enabled": {
                    k: client.feature_enabled(k, USER, person_properties=person) for k in FLAG_KEYS
                },
                "get_feature_flag_payload": {
                    k: client.get_feature_flag_payload(k, USER, person_properties=person)
                    for k in FLAG_KEYS
                },
                "get_all_flags": client.get_all_flags(USER, person_properties=person),
                "get_all_flags_and_payloads": client.get_all_flags_and_payloads(
                    USER, person_properties=person
                ),
            }

        locally = read_everything(local)
        assert routes_other_than_batch(live_stub) == ["definitions"]
        assert all(p["locally_evaluated"] is True for p in flag_called(live_stub))
        assert locally == {
            "get_feature_flag": values,
            "feature_enabled": {k: bool(v) for k, v in values.items()},
            "get_feature_flag_payload": {k: PAYLOADS.get(k) for k in FLAG_KEYS},
            "get_all_flags": values,
            "get_all_flags_and_payloads": {
                "featureFlags": values,
                "featureFlagPayloads": RAW_PAYLOADS,
            },
        }
        assert read_everything(connect()) == locally

    def test_evaluate_flags_evaluates_every_flag_locally(
        self, local: Posthog, live_stub: SpawnedStub
    ) -> None:
        snapshot = local.evaluate_flags(USER, person_properties=FREE)
        assert {k: snapshot.get_flag(k) for k in FLAG_KEYS} == VALUES_FOR_OTHERS
        assert routes_other_than_batch(live_stub) == ["definitions"]

    def test_the_match_attribute_flag_is_decided_locally_from_person_properties(
        self, local: Posthog, live_stub: SpawnedStub
    ) -> None:
        key = "enterprise-dashboard"
        assert local.get_feature_flag(key, USER, person_properties=ENTERPRISE) is True
        assert local.feature_enabled(key, USER, person_properties=ENTERPRISE) is True
        assert local.get_feature_flag(key, "user-2", person_properties=FREE) is False
        assert local.feature_enabled(key, "user-2", person_properties=FREE) is False
        assert routes_other_than_batch(live_stub) == ["definitions"]

    def test_without_the_person_property_the_match_attribute_flag_falls_back_to_flags(
        self, local: Posthog, live_stub: SpawnedStub
    ) -> None:
        """A property filter with the property unknown is inconclusive locally, so the SDK asks
        `/flags` (which answers off); evaluating only locally it has no value at all."""
        key = "enterprise-dashboard"
        assert local.get_feature_flag(key, USER, only_evaluate_locally=True) is None
        assert routes_other_than_batch(live_stub) == ["definitions"]
        assert local.get_feature_flag(key, USER) is False
        assert routes_other_than_batch(live_stub) == ["definitions", "flags"]

    def test_definitions_are_fetched_from_flags_definitions_with_token_and_send_cohorts(
        self, local: Posthog, live_stub: SpawnedStub
    ) -> None:
        """posthog 7.91 has one hard-coded spelling; the stub hides the token it records."""
        (entry,) = live_stub.get("/_test/requests")["requests"]
        assert (entry["method"], entry["path"], entry["query"], entry["status"]) == (
            "GET",
            "/flags/definitions",
            {"token": "phc_[redacted]", "send_cohorts": ""},
            200,
        )

    def test_the_sdk_reads_both_definitions_spellings_as_the_same_document(
        self, live_stub: SpawnedStub
    ) -> None:
        """The SDK cannot be told which path to poll, so its own GET helper reads both."""
        current = posthog.request.get(
            SECRET_KEY, f"/flags/definitions?token={PROJECT_KEY}&send_cohorts", live_stub.url, 2
        )
        older = posthog.request.get(
            SECRET_KEY,
            f"/api/feature_flag/local_evaluation/?token={PROJECT_KEY}&send_cohorts",
            live_stub.url,
            2,
        )
        assert older.data == current.data
        assert older.etag == current.etag
        assert current.etag is not None
        assert [f["key"] for f in current.data["flags"]] == FLAG_KEYS
        assert recorded(live_stub, "definitions") == [(200, None), (200, None)]

    @pytest.mark.filterwarnings(
        # The brief's spelling: 7.91 deprecates `personal_api_key` for `secret_key`.
        "ignore:`personal_api_key` is deprecated:DeprecationWarning"
    )
    def test_the_deprecated_personal_api_key_still_evaluates_locally(
        self, connect: Connect, live_stub: SpawnedStub
    ) -> None:
        client = connect(personal_api_key=SECRET_KEY)
        load_definitions(client)
        assert client.get_all_flags(USER, person_properties=FREE) == VALUES_FOR_OTHERS
        assert routes_other_than_batch(live_stub) == ["definitions"]


class TestDefinitionsETag:
    def test_a_second_load_sends_if_none_match_and_gets_304(
        self, local: Posthog, live_stub: SpawnedStub
    ) -> None:
        load_definitions(local)
        assert recorded(live_stub, "definitions") == [(200, None), (304, None)]
        assert local.get_all_flags(USER, person_properties=ENTERPRISE) == VALUES_FOR_ENTERPRISE
        assert routes_other_than_batch(live_stub) == ["definitions", "definitions"]

    def test_changed_fixtures_answer_200_with_the_new_definitions(
        self, local: Posthog, live_stub: SpawnedStub
    ) -> None:
        live_stub.post("/_test/fixtures", {"flags": {"beta": {"type": "boolean", "value": True}}})
        load_definitions(local)
        assert recorded(live_stub, "definitions") == [(200, None), (200, None)]
        assert local.get_all_flags(USER, only_evaluate_locally=True) == {"beta": True}


class TestCapture:
    def test_a_captured_event_is_recorded_with_its_name_distinct_id_and_properties(
        self, connect: Connect, live_stub: SpawnedStub
    ) -> None:
        client = connect()
        uuid = client.capture(
            "order placed", distinct_id=USER, properties={"total": 42, "items": ["a", "b"]}
        )
        (event,) = events(live_stub)
        assert (event["event"], event["distinct_id"], event["uuid"]) == ("order placed", USER, uuid)
        assert {k: event["properties"][k] for k in ("total", "items", "$lib")} == {
            "total": 42,
            "items": ["a", "b"],
            "$lib": "posthog-python",
        }
        assert recorded(live_stub, "batch") == [(200, None)]

    def test_a_gzipped_capture_is_recorded(
        self, connect: Connect, live_stub: SpawnedStub, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        compressed: list[bool] = []
        send = posthog.request.post

        def spying_post(*args: Any, **kwargs: Any) -> Any:
            compressed.append(inspect.signature(send).bind(*args, **kwargs).arguments["gzip"])
            return send(*args, **kwargs)

        monkeypatch.setattr(posthog.request, "post", spying_post)
        client = connect(gzip=True)
        uuid = client.capture("zipped", distinct_id=USER, properties={"size": "large"})
        assert compressed == [True]
        (event,) = events(live_stub)
        assert (event["event"], event["distinct_id"], event["uuid"]) == ("zipped", USER, uuid)
        assert event["properties"]["size"] == "large"

    @pytest.mark.parametrize("gzip", [False, True], ids=["plain", "gzip"])
    def test_the_journal_shows_what_it_sent_in_full_its_key_by_family_and_curl_sends_it_again(
        self, connect: Connect, live_stub: SpawnedStub, gzip: bool
    ) -> None:
        client = connect(gzip=gzip)
        client.capture("order placed", distinct_id=USER, properties={"total": 42})
        client.get_feature_flag("beta-feature", USER)

        journal = live_stub.get("/_test/requests?bodies=true")["requests"]
        assert [entry["route"] for entry in journal][:2] == ["batch", "flags"]
        assert PROJECT_KEY not in str(journal)
        batch = json.loads(journal[0]["body"]["text"])  # as the stub read it: gzip undone
        assert batch["api_key"] == "phc_[redacted]"
        assert [event["event"] for event in batch["batch"]] == ["order placed"]
        again = subprocess.run(
            ["bash"], input=journal[0]["curl"], capture_output=True, text=True, timeout=30
        )
        assert json.loads(again.stdout) == {"status": 1}
        assert [event["event"] for event in events(live_stub)].count("order placed") == 2

    @pytest.mark.parametrize("gzip", [False, True], ids=["plain", "gzip"])
    def test_queued_events_arrive_in_one_batch_on_flush(
        self, connect: Connect, live_stub: SpawnedStub, gzip: bool
    ) -> None:
        client = connect(sync_mode=False, gzip=gzip, flush_interval=60)
        for n in range(3):
            client.capture("step", distinct_id=USER, properties={"n": n})
        client.flush()
        assert [
            (e["event"], e["distinct_id"], e["properties"]["n"]) for e in events(live_stub)
        ] == [
            ("step", USER, 0),
            ("step", USER, 1),
            ("step", USER, 2),
        ]
        assert recorded(live_stub, "batch") == [(200, None)]

    def test_remote_flag_reads_send_feature_flag_called_events(
        self, remote: Posthog, live_stub: SpawnedStub
    ) -> None:
        for key in FLAG_KEYS:
            remote.get_feature_flag(key, USER, person_properties=ENTERPRISE)
        called = flag_called(live_stub)
        assert [p["$feature_flag"] for p in called] == FLAG_KEYS
        for props in called:
            key = props["$feature_flag"]
            version, flag_id = VERSION_AND_ID[key]
            assert {
                name: props.get(name)
                for name in (
                    "$feature_flag_response",
                    f"$feature/{key}",
                    "locally_evaluated",
                    "$feature_flag_version",
                    "$feature_flag_id",
                    "$feature_flag_reason",
                    "$feature_flag_error",
                )
            } == {
                "$feature_flag_response": VALUES_FOR_ENTERPRISE[key],
                f"$feature/{key}": VALUES_FOR_ENTERPRISE[key],
                "locally_evaluated": False,
                "$feature_flag_version": version,
                "$feature_flag_id": flag_id,
                "$feature_flag_reason": REASONS_FOR_ENTERPRISE.get(key, "Condition set 1 matched"),
                "$feature_flag_error": None,
            }
            assert isinstance(props["$feature_flag_request_id"], str)
        assert {e["distinct_id"] for e in events(live_stub)} == {USER}

    def test_a_repeated_read_sends_one_event(self, remote: Posthog, live_stub: SpawnedStub) -> None:
        for _ in range(3):
            remote.get_feature_flag("checkout-v2", USER)
        assert flag_errors(live_stub) == [("checkout-v2", "treatment-b", None)]
        assert recorded(live_stub, "flags") == [(200, None)] * 3

    def test_local_flag_reads_send_feature_flag_called_events(
        self, local: Posthog, live_stub: SpawnedStub
    ) -> None:
        local.get_feature_flag("pricing-page", USER)
        (props,) = flag_called(live_stub)
        assert {
            name: props.get(name)
            for name in (
                "$feature_flag",
                "$feature_flag_response",
                "locally_evaluated",
                "$feature_flag_version",
                "$feature_flag_id",
                "$feature_flag_payload",
            )
        } == {
            "$feature_flag": "pricing-page",
            "$feature_flag_response": "annual-first",
            "locally_evaluated": True,
            "$feature_flag_version": 2,
            "$feature_flag_id": 5,
            "$feature_flag_payload": PAYLOADS["pricing-page"],
        }


# A vendor `/flags` body for `POST /_test/flags`: a boolean, a variant with a payload, one off.
REPLACED_FLAGS_BODY: dict[str, Any] = {
    "flags": {
        "beta": {
            "key": "beta",
            "enabled": True,
            "variant": None,
            "metadata": {"id": 1, "version": 1, "payload": None},
        },
        "banner-colour": {
            "key": "banner-colour",
            "enabled": True,
            "variant": "blue",
            "metadata": {"id": 2, "version": 6, "payload": '{"hex": "#00f"}'},
        },
        "off": {
            "key": "off",
            "enabled": False,
            "variant": None,
            "metadata": {"id": 3, "version": 1, "payload": None},
        },
    }
}


class TestReplacedFlagsBody:
    def test_remote_evaluation_reads_the_posted_flags_body(
        self, remote: Posthog, live_stub: SpawnedStub
    ) -> None:
        live_stub.post("/_test/flags", REPLACED_FLAGS_BODY)
        assert remote.get_all_flags(USER) == {"beta": True, "banner-colour": "blue", "off": False}
        assert remote.feature_enabled("beta", USER) is True
        assert remote.get_feature_flag("banner-colour", USER) == "blue"
        assert remote.get_feature_flag_payload("banner-colour", USER) == {"hex": "#00f"}
        assert remote.get_feature_flag("off", USER) is False
        assert remote.get_feature_flag("new-checkout", USER) is None
        versions = {
            p["$feature_flag"]: p.get("$feature_flag_version") for p in flag_called(live_stub)
        }
        assert versions == {"beta": 1, "banner-colour": 6, "off": 1, "new-checkout": None}
        assert flag_errors(live_stub)[-1] == ("new-checkout", None, "flag_missing")

    def test_a_minimal_record_without_reason_reads_as_enabled(
        self, remote: Posthog, live_stub: SpawnedStub
    ) -> None:
        record = {
            "key": "beta",
            "enabled": True,
            "variant": None,
            "metadata": {"id": 1, "version": 1, "payload": None},
        }
        live_stub.post("/_test/flags", {"flags": {"beta": record}})
        assert remote.get_all_flags(USER) == {"beta": True}
        assert remote.feature_enabled("beta", USER) is True
        assert remote.get_feature_flag_payload("beta", USER) is None
        assert flag_errors(live_stub) == [("beta", True, None)]


class TestFlagsFaults:
    """`/flags` faults: the read returns None and the SDK reports why in `$feature_flag_called`."""

    @pytest.mark.parametrize(
        ("fault", "status", "error"),
        [
            ({"mode": "401"}, 401, "api_error_401"),
            ({"mode": "429", "retryAfter": 0}, 429, "api_error_429"),
            ({"mode": "500"}, 500, "api_error_500"),
            ({"mode": "invalid_json"}, 200, "unknown_error"),
            ({"mode": "truncated"}, 200, "unknown_error"),
        ],
        ids=["401", "429", "500", "invalid_json", "truncated"],
    )
    def test_a_failed_read_returns_none_without_retry_and_reports_the_error(
        self,
        remote: Posthog,
        live_stub: SpawnedStub,
        fault: dict[str, Any],
        status: int,
        error: str,
    ) -> None:
        arm(live_stub, applyTo="flags", **fault)
        assert remote.get_feature_flag("new-checkout", USER) is None
        assert recorded(live_stub, "flags") == [(status, fault["mode"])]
        assert flag_errors(live_stub) == [("new-checkout", None, error)]
        assert remote.feature_enabled("checkout-v2", USER) is None
        assert remote.get_all_flags(USER) == {}

    def test_quota_limited_reads_none_and_an_empty_evaluation(
        self, remote: Posthog, live_stub: SpawnedStub
    ) -> None:
        arm(live_stub, mode="quota_limited", applyTo="flags")
        assert remote.get_feature_flag("new-checkout", USER) is None
        assert remote.get_all_flags(USER) == {}
        snapshot = remote.evaluate_flags("user-2")
        assert snapshot.keys == []
        assert snapshot.is_enabled("new-checkout") is False
        assert flag_errors(live_stub) == [
            ("new-checkout", None, "quota_limited"),
            ("new-checkout", None, "quota_limited,flag_missing"),
        ]
        assert recorded(live_stub, "flags") == [(200, "quota_limited")] * 3

    def test_one_502_is_retried_once_and_the_retry_succeeds(
        self, remote: Posthog, live_stub: SpawnedStub
    ) -> None:
        arm(live_stub, mode="status", status=502, applyTo="flags", ttlRequests=1)
        assert remote.get_feature_flag("checkout-v2", USER) == "treatment-b"
        assert recorded(live_stub, "flags") == [(502, "status"), (200, None)]
        assert flag_errors(live_stub) == [("checkout-v2", "treatment-b", None)]

    def test_a_lasting_502_fails_after_one_retry(
        self, remote: Posthog, live_stub: SpawnedStub
    ) -> None:
        arm(live_stub, mode="status", status=502, applyTo="flags")
        assert remote.get_feature_flag("checkout-v2", USER) is None
        assert recorded(live_stub, "flags") == [(502, "status")] * 2
        assert flag_errors(live_stub) == [("checkout-v2", None, "api_error_502")]

    def test_a_dropped_connection_is_retried_once_then_reports_connection_error(
        self, remote: Posthog, live_stub: SpawnedStub
    ) -> None:
        arm(live_stub, mode="reset", applyTo="flags")
        assert remote.get_feature_flag("checkout-v2", USER) is None
        assert recorded_eventually(live_stub, "flags", 2) == [(None, "reset")] * 2
        assert flag_errors(live_stub) == [("checkout-v2", None, "connection_error")]

    def test_a_hung_request_times_out_after_one_retry(
        self, connect: Connect, live_stub: SpawnedStub
    ) -> None:
        client = connect(feature_flags_request_timeout_seconds=0.3)
        arm(live_stub, mode="hang", applyTo="flags")
        assert client.get_feature_flag("checkout-v2", USER) is None
        assert flag_errors(live_stub) == [("checkout-v2", None, "timeout")]
        assert recorded_eventually(live_stub, "flags", 2) == [(None, "hang")] * 2


class TestDefinitionsFaults:
    """A failed reload keeps the loaded definitions, except 401 and 402, which wipe them."""

    @pytest.mark.parametrize(
        ("fault", "status"),
        [
            ({"mode": "500"}, 500),
            ({"mode": "429", "retryAfter": 0}, 429),
            ({"mode": "invalid_json"}, 200),
            ({"mode": "truncated"}, 200),
        ],
        ids=["500", "429", "invalid_json", "truncated"],
    )
    def test_a_failed_reload_keeps_the_loaded_flags(
        self, local: Posthog, live_stub: SpawnedStub, fault: dict[str, Any], status: int
    ) -> None:
        arm(live_stub, applyTo="definitions", **fault)
        load_definitions(local)
        assert recorded(live_stub, "definitions") == [(200, None), (status, fault["mode"])]
        flags = local.get_all_flags(USER, person_properties=FREE, only_evaluate_locally=True)
        assert flags == VALUES_FOR_OTHERS
        assert local.get_feature_flag("checkout-v2", USER) == "treatment-b"
        assert routes_other_than_batch(live_stub) == ["definitions", "definitions"]

    @pytest.mark.parametrize(
        ("mode", "status"), [("401", 401), ("quota_limited", 402)], ids=["401", "quota_limited"]
    )
    def test_a_401_or_402_reload_wipes_the_loaded_flags(
        self, local: Posthog, live_stub: SpawnedStub, mode: str, status: int
    ) -> None:
        """posthog 7.91 clears its definitions on 401 as on 402; reads then ask `/flags`."""
        arm(live_stub, mode=mode, applyTo="definitions", ttlRequests=1)
        load_definitions(local)
        assert recorded(live_stub, "definitions") == [(200, None), (status, mode)]
        assert local.get_all_flags(USER, only_evaluate_locally=True) == {}
        assert local.get_feature_flag("checkout-v2", USER, only_evaluate_locally=True) is None
        assert routes_other_than_batch(live_stub) == ["definitions", "definitions"]
        assert local.get_feature_flag("checkout-v2", USER) == "treatment-b"
        assert routes_other_than_batch(live_stub) == ["definitions", "definitions", "flags"]

    def test_after_a_wipe_the_next_load_fetches_in_full_and_evaluates_locally_again(
        self, local: Posthog, live_stub: SpawnedStub
    ) -> None:
        arm(live_stub, mode="quota_limited", applyTo="definitions", ttlRequests=1)
        load_definitions(local)
        load_definitions(local)  # the wipe forgot the ETag, so this is a 200, not a 304
        assert recorded(live_stub, "definitions") == [
            (200, None),
            (402, "quota_limited"),
            (200, None),
        ]
        flags = local.get_all_flags(USER, person_properties=FREE, only_evaluate_locally=True)
        assert flags == VALUES_FOR_OTHERS


class TestBatchFaults:
    """Capture faults: the background consumer retries 5xx and 429 after its 1 s back-off and
    drops other 4xx. `sync_mode` sends once and never retries."""

    @pytest.fixture
    def failures(self) -> ErrorLog:
        return []

    @pytest.fixture
    def queued(self, connect: Connect, failures: ErrorLog) -> Posthog:
        def on_error(error: Exception, batch: list[Any]) -> None:
            failures.append((error, batch))

        return connect(sync_mode=False, flush_interval=60, on_error=on_error)

    @pytest.mark.parametrize(
        ("fault", "status"),
        [
            ({"mode": "500"}, 500),
            ({"mode": "429", "retryAfter": 0}, 429),
            ({"mode": "truncated"}, 200),
        ],
        ids=["500", "429", "truncated"],
    )
    def test_a_transient_failure_is_retried_and_the_event_recorded_once(
        self,
        queued: Posthog,
        live_stub: SpawnedStub,
        failures: ErrorLog,
        fault: dict[str, Any],
        status: int,
    ) -> None:
        arm(live_stub, applyTo="batch", ttlRequests=1, **fault)
        uuid = queued.capture("checkout", distinct_id=USER, properties={"step": 1})
        queued.flush()
        assert recorded(live_stub, "batch") == [(status, fault["mode"]), (200, None)]
        assert [(e["event"], e["uuid"]) for e in events(live_stub)] == [("checkout", uuid)]
        assert failures == []

    @pytest.mark.parametrize(
        ("mode", "status"), [("401", 401), ("quota_limited", 402)], ids=["401", "quota_limited"]
    )
    def test_a_client_error_drops_the_batch_without_retry(
        self, queued: Posthog, live_stub: SpawnedStub, failures: ErrorLog, mode: str, status: int
    ) -> None:
        arm(live_stub, mode=mode, applyTo="batch")
        queued.capture("checkout", distinct_id=USER)
        queued.flush()
        assert recorded(live_stub, "batch") == [(status, mode)]
        assert events(live_stub) == []
        assert [(api_status(e), [m["event"] for m in b]) for e, b in failures] == [
            (status, ["checkout"])
        ]

    def test_a_lasting_500_is_given_up_after_max_retries(
        self, queued: Posthog, live_stub: SpawnedStub, failures: ErrorLog
    ) -> None:
        arm(live_stub, mode="500", applyTo="batch")
        queued.capture("checkout", distinct_id=USER)
        queued.flush()
        assert recorded(live_stub, "batch") == [(500, "500")] * 2
        assert [api_status(e) for e, _ in failures] == [500]

    def test_sync_mode_sends_once_and_loses_the_event_on_a_500(
        self, connect: Connect, live_stub: SpawnedStub
    ) -> None:
        client = connect()
        arm(live_stub, mode="500", applyTo="batch", ttlRequests=1)
        assert client.capture("checkout", distinct_id=USER) is None
        assert recorded(live_stub, "batch") == [(500, "500")]
        assert events(live_stub) == []
