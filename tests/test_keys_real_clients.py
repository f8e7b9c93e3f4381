"""Per-key rate limits and key families as the real clients see them, against spawned stubs.

`fireweave==0.1.0` (remote mode) and the newest `posthog` SDK are built as users build them and
driven over HTTP; each test asserts what the client returns or reports, and what the stub
recorded through the test-control plane. Rate limits come from `--rate-limit N/s` or from
`POST /_test/rate-limit` (lifted again by the reset before the next test); key families from the
key prefixes, served with a warning by default and refused under `--strict-keys`.

What the clients were measured to do (fireweave 0.1.0, posthog 7.91):

- fireweave reads a 429 as the caller's default, reason `ERROR`, error kind `RateLimited`
  (`fireweave.errorKind` in the metadata); it never retries a read, ignores `Retry-After`, and
  `register_target` retries a 429 once, at once, so both attempts are refused. A capture refused
  with 429 goes back on the adapter's queue and is delivered by the next flush after the wait.
- fireweave reads a 401 as `Authentication`; `register_target` does not retry it; a capture
  refused with 401 is kept and resent (and refused) on every flush.
- posthog's remote read of a rate-limited `/flags` returns None at once (no retry) and reports
  `$feature_flag_error: api_error_429` in `$feature_flag_called`; `get_all_flags` returns `{}`.
- posthog's background consumer retries a 429 from `/batch` after the longer of its own
  back-off (1 s on the first retry) and `Retry-After`, so the batch arrives once the bucket has
  refilled, exactly once, and `on_error` is never called; `sync_mode` sends once and loses it.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from posthog import Posthog
from posthog.request import APIError
from test_fireweave_faults import (
    FLAG,
    REAL_VALUE,
    assert_error_default,
    assert_real_value,
)
from test_fireweave_faults import Fireweave as FaultsFireweave

from conftest import HANG_GUARD_S, OpenFireweave, SpawnedStub, spawn_stub
from stub.client import StubClient

SERVER_KEY = "project-api-key_limits"
OTHER_SERVER_KEY = "project-api-key_other"
ORG_KEY = "svc_org_abc"
VENDOR_KEY = "phc_abc"
BROWSER_KEY = "svc_public_abc"
PROJECT_KEY = "phc_test"


RATE_LIMITED = {"mode": "429", "source": "rate-limit"}
ONE_PER_LONG_WINDOW = 1 / (10 * HANG_GUARD_S)
"""A rate of one request per window of ten times the hang guard: a limit whose window no
test outlasts, so the second request is refused however slow the machine (a limit of a few a
second refills while a busy machine is between two requests)."""
"""How `/_test/requests` records a request the key's rate limit refused."""

ORG_WARNING = (
    "an organisation key (svc_org_...) belongs to the management plane "
    "(/v1/projects, /v1/whoami), not here"
)
VENDOR_WARNING = (
    "an analytics-vendor key (phc_/phs_/phx_...) belongs to the legacy vendor routes "
    "(/flags, the definitions poll, /batch), not here"
)
RUNTIME_PATHS = ("/v1/flags/evaluate", "/v1/targets/register", "/v1/capture")

# posthog 7.91 deprecates the single-flag reads in favour of `evaluate_flags()`; they still work
# and are what most code calls, so the tests call them and ignore exactly these warnings.
pytestmark = [
    pytest.mark.filterwarnings("ignore:`get_feature_flag` is deprecated:DeprecationWarning"),
]


@pytest.fixture(scope="module")
def limited_session_stub() -> Iterator[SpawnedStub]:
    with spawn_stub("--rate-limit", "2/s", read_log=False) as stub:
        yield stub


@pytest.fixture
def limited_stub(limited_session_stub: SpawnedStub) -> SpawnedStub:
    """Started with `--rate-limit 2/s`; reset (every bucket full again) before the test."""
    limited_session_stub.post("/_test/reset")
    return limited_session_stub


@pytest.fixture(scope="module")
def strict_session_stub() -> Iterator[SpawnedStub]:
    with spawn_stub("--strict-keys", read_log=False) as stub:
        yield stub


@pytest.fixture
def strict_stub(strict_session_stub: SpawnedStub) -> SpawnedStub:
    """Started with `--strict-keys`; reset before the test."""
    strict_session_stub.post("/_test/reset")
    return strict_session_stub


class Fireweave(FaultsFireweave):
    """The fault tests' client, which can also put an exposure on the wire."""

    def send_exposure(self) -> None:
        """Record one exposure and put it on the wire (one `/v1/capture`)."""
        self.client.exposures.record("user-1", FLAG, REAL_VALUE, REAL_VALUE)
        self.client.exposures.flush()
        self.adapter.flush()


ConnectFireweave = Callable[[SpawnedStub, str], Fireweave]


@pytest.fixture
def connect_fw(open_fireweave: OpenFireweave) -> ConnectFireweave:
    return lambda stub, key: Fireweave(*open_fireweave(stub.url, key, 2000))


def requests_of(stub: SpawnedStub) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = stub.get("/_test/requests")["requests"]
    return entries


def statuses(stub: SpawnedStub) -> list[tuple[str, int | None]]:
    return [(entry["route"], entry["status"]) for entry in requests_of(stub)]


def svc_events(stub: SpawnedStub) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = stub.get("/_test/events")["svcEvents"]
    return events


EXPOSURE = {
    "type": "exposure",
    "targetingKey": "user-1",
    "flagKey": FLAG,
    "value": REAL_VALUE,
    "variant": REAL_VALUE,
}


@dataclass
class RawAnswer:
    status: int
    headers: dict[str, str]
    body: dict[str, Any]


def raw_evaluate(stub: SpawnedStub, key: str) -> RawAnswer:
    """One evaluate request with `key`, outside any client: to read what is on the wire."""
    request = urllib.request.Request(
        stub.url + "/v1/flags/evaluate",
        data=json.dumps({"targetingKey": "user-1", "flagKeys": [FLAG]}).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return RawAnswer(response.status, dict(response.headers), json.load(response))
    except urllib.error.HTTPError as error:
        with error:
            return RawAnswer(error.code, dict(error.headers), json.load(error))


class TestFireweaveOverTheRateLimit:
    """`--rate-limit 2/s`: a key's bucket holds two requests and refills two a second."""

    def test_reads_past_the_limit_serve_the_default_as_rate_limited_until_retry_after(
        self, limited_stub: SpawnedStub, connect_fw: ConnectFireweave
    ) -> None:
        fw = connect_fw(limited_stub, SERVER_KEY)
        first, second, third, fourth = (fw.read() for _ in range(4))
        assert_real_value(first)
        assert_real_value(second)
        # 0.1.0 maps 429 to RateLimitedError and serves the caller default; no retry.
        assert_error_default(third, "RateLimited")
        assert_error_default(fourth, "RateLimited")

        entries = requests_of(limited_stub)
        assert statuses(limited_stub) == [("evaluate", 200)] * 2 + [("evaluate", 429)] * 2
        assert [e["fault"] for e in entries] == [None, None, RATE_LIMITED, RATE_LIMITED]
        assert [e["warning"] for e in entries] == [None] * 4

        # What the client was told (0.1.0 does not expose it): the envelope and the real wait.
        answer = raw_evaluate(limited_stub, SERVER_KEY)
        assert answer.status == 429
        assert answer.body["ok"] is False
        assert answer.body["error"] == "RATE_LIMITED"
        retry_after = int(answer.headers["Retry-After"])
        assert 1 <= retry_after <= 2

        time.sleep(retry_after)
        # A second at 2/s refills the whole bucket: two reads again.
        assert_real_value(fw.read())
        assert_real_value(fw.read())
        assert statuses(limited_stub)[-2:] == [("evaluate", 200)] * 2

    def test_register_target_retries_the_429_once_at_once_and_reports_rate_limited(
        self, live_stub: SpawnedStub, connect_fw: ConnectFireweave
    ) -> None:
        # One read fills a window of ten times the hang guard, so Retry-After is about that long:
        # a register ending within HANG_GUARD_S did not wait it out, however slow the machine (a
        # 1 s window could refill between two reads).
        live_stub.post("/_test/rate-limit", {"perKey": {SERVER_KEY: ONE_PER_LONG_WINDOW}})
        fw = connect_fw(live_stub, SERVER_KEY)
        assert_real_value(fw.read())
        started = time.monotonic()
        result = fw.runtime.register_target("user-1")
        # RateLimited is retryable in 0.1.0's taxonomy, so it tries twice, without waiting.
        assert time.monotonic() - started < HANG_GUARD_S
        assert result.ok is False
        assert result.error.kind == "RateLimited"
        entries = requests_of(live_stub)
        assert statuses(live_stub) == [("evaluate", 200)] + [("register", 429)] * 2
        assert [e["fault"] for e in entries[1:]] == [RATE_LIMITED, RATE_LIMITED]
        assert int(raw_evaluate(live_stub, SERVER_KEY).headers["Retry-After"]) > HANG_GUARD_S
        assert live_stub.get("/_test/events")["targets"] == []

    def test_a_capture_refused_by_the_limit_is_kept_and_delivered_after_the_wait(
        self, limited_stub: SpawnedStub, connect_fw: ConnectFireweave
    ) -> None:
        fw = connect_fw(limited_stub, SERVER_KEY)
        assert_real_value(fw.read())
        assert_real_value(fw.read())
        fw.send_exposure()  # 429: the adapter puts the batch back on its queue
        assert svc_events(limited_stub) == []

        time.sleep(1)
        fw.adapter.flush()
        fw.client.shutdown()  # flushes again: nothing is left to send
        assert svc_events(limited_stub) == [EXPOSURE]
        entries = requests_of(limited_stub)
        assert statuses(limited_stub) == [
            ("evaluate", 200),
            ("evaluate", 200),
            ("capture", 429),
            ("capture", 200),
        ]
        assert [e["fault"] for e in entries] == [None, None, RATE_LIMITED, None]

    def test_a_limit_set_at_run_time_for_one_key_leaves_other_keys_alone(
        self, live_stub: SpawnedStub, connect_fw: ConnectFireweave
    ) -> None:
        # A long window: a 1 s one a busy machine can outlast between two reads.
        limits = live_stub.post("/_test/rate-limit", {"perKey": {SERVER_KEY: ONE_PER_LONG_WINDOW}})
        assert limits == {"perSecond": None, "perKey": {SERVER_KEY: ONE_PER_LONG_WINDOW}}
        limited = connect_fw(live_stub, SERVER_KEY)
        other = connect_fw(live_stub, OTHER_SERVER_KEY)

        assert_real_value(limited.read())
        assert_error_default(limited.read(), "RateLimited")
        for _ in range(5):
            assert_real_value(other.read())
        assert [e["fault"] for e in requests_of(live_stub)] == [None, RATE_LIMITED] + [None] * 5


ErrorLog = list[tuple[Exception, list[Any]]]
ConnectPosthog = Callable[..., Posthog]


@pytest.fixture
def failures() -> ErrorLog:
    return []


@pytest.fixture
def posthog_client(failures: ErrorLog) -> Iterator[ConnectPosthog]:
    """Posthog clients with short timeouts, queued (not sync_mode) unless asked, flushed only
    when the test says so; every one is shut down after the test."""
    opened: list[Posthog] = []

    def on_error(error: Exception, batch: list[Any]) -> None:
        failures.append((error, batch))

    def connect(stub: SpawnedStub, key: str = PROJECT_KEY, **options: Any) -> Posthog:
        settings: dict[str, Any] = {
            "host": stub.url,
            "sync_mode": False,
            "flush_interval": 60,
            "max_retries": 1,
            "timeout": 2,
            "feature_flags_request_timeout_seconds": 1,
            "poll_interval": 3600,
            "on_error": on_error,
            **options,
        }
        client = Posthog(key, **settings)
        opened.append(client)
        return client

    yield connect
    for client in opened:
        client.shutdown()


def recorded(stub: SpawnedStub, route: str) -> list[tuple[int | None, dict[str, Any] | None]]:
    """(status, fault) of every recorded request to one route, in arrival order."""
    return [(e["status"], e["fault"]) for e in requests_of(stub) if e["route"] == route]


def vendor_events(stub: SpawnedStub) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = stub.get("/_test/events")["events"]
    return events


def flag_errors(stub: SpawnedStub) -> list[tuple[str, object, object]]:
    """(flag, response, `$feature_flag_error`) of every recorded `$feature_flag_called`."""
    called = [e["properties"] for e in vendor_events(stub) if e["event"] == "$feature_flag_called"]
    return [
        (p["$feature_flag"], p["$feature_flag_response"], p.get("$feature_flag_error"))
        for p in called
    ]


def set_rate_limit(stub: SpawnedStub, per_second: float | None) -> None:
    body = {} if per_second is None else {"perSecond": per_second}
    stub.post("/_test/rate-limit", body)


class TestPosthogOverTheRateLimit:
    """The vendor routes under a limit set at run time (the project key is limited)."""

    def test_remote_reads_past_the_limit_return_none_and_report_api_error_429(
        self, live_stub: SpawnedStub, posthog_client: ConnectPosthog
    ) -> None:
        client = posthog_client(live_stub)
        set_rate_limit(live_stub, 2)
        assert client.get_feature_flag("new-checkout", "user-1") is True
        assert client.get_feature_flag("checkout-v2", "user-1") == "treatment-b"
        assert client.get_feature_flag("pricing-page", "user-1") is None
        assert client.get_all_flags("user-1") == {}
        # Every read is one request: no retry of a 429 on /flags. The `$feature_flag_called`
        # events wait in the queue (flush_interval 60 s), so nothing has gone to /batch yet.
        assert recorded(live_stub, "flags") == [(200, None)] * 2 + [(429, RATE_LIMITED)] * 2
        assert recorded(live_stub, "batch") == []

        set_rate_limit(live_stub, None)  # lifted, so the report itself gets through
        client.flush()
        assert flag_errors(live_stub) == [
            ("new-checkout", True, None),
            ("checkout-v2", "treatment-b", None),
            ("pricing-page", None, "api_error_429"),
        ]

    @pytest.mark.parametrize(
        ("per_second", "retry_after_s"), [(1, 1), (0.5, 2)], ids=["1-per-s", "0.5-per-s"]
    )
    def test_a_batch_refused_by_the_limit_is_retried_after_retry_after_and_stored_once(
        self,
        live_stub: SpawnedStub,
        posthog_client: ConnectPosthog,
        failures: ErrorLog,
        per_second: float,
        retry_after_s: int,
    ) -> None:
        """At 0.5/s the wait is `Retry-After: 2`, longer than posthog's own first back-off
        (1 s): that the retry still succeeds, no sooner than 2 s, shows it honours the header
        (a retry after 1 s would be refused again and, with max_retries 1, dropped)."""
        client = posthog_client(live_stub)
        set_rate_limit(live_stub, per_second)
        first = client.capture("first", distinct_id="user-1")
        client.flush()
        second = client.capture("second", distinct_id="user-1")
        started = time.monotonic()
        client.flush()  # blocks while the consumer backs off and retries
        waited = time.monotonic() - started

        # The claim is the lower bound: the retry waited the header out (and then succeeded);
        # an upper one only speed can break.
        assert retry_after_s - 0.1 <= waited
        assert recorded(live_stub, "batch") == [(200, None), (429, RATE_LIMITED), (200, None)]
        assert [(e["event"], e["uuid"]) for e in vendor_events(live_stub)] == [
            ("first", first),
            ("second", second),
        ]
        assert failures == []

    def test_sync_mode_sends_once_and_loses_the_rate_limited_event(
        self, live_stub: SpawnedStub, posthog_client: ConnectPosthog
    ) -> None:
        client = posthog_client(live_stub, sync_mode=True)
        set_rate_limit(live_stub, 1)
        client.capture("first", distinct_id="user-1")
        client.capture("second", distinct_id="user-1")
        assert recorded(live_stub, "batch") == [(200, None), (429, RATE_LIMITED)]
        assert [e["event"] for e in vendor_events(live_stub)] == ["first"]


def warnings_of(stub: SpawnedStub) -> list[str | None]:
    return [entry["warning"] for entry in requests_of(stub)]


def drive_runtime_plane(fw: Fireweave) -> tuple[Any, Any]:
    """A read, a registration and a capture: every runtime route once. (decision, register)"""
    decision = fw.read()
    registered = fw.runtime.register_target("user-1")
    fw.send_exposure()
    return decision, registered


WRONG_PLANE_KEYS = [
    pytest.param(ORG_KEY, ORG_WARNING, id="organisation-key"),
    pytest.param(VENDOR_KEY, VENDOR_WARNING, id="vendor-key"),
]


class TestKeyFamiliesThroughFireweave:
    @pytest.mark.parametrize(("key", "warning"), WRONG_PLANE_KEYS)
    def test_a_wrong_plane_key_is_served_and_assert_no_warnings_lists_every_request(
        self, live_stub: SpawnedStub, connect_fw: ConnectFireweave, key: str, warning: str
    ) -> None:
        """The spec's most common integration error works against a default stub, as it
        would not against the service; the recorded warning is what catches it."""
        decision, registered = drive_runtime_plane(connect_fw(live_stub, key))
        assert_real_value(decision)
        assert registered.ok is True
        assert svc_events(live_stub) == [EXPOSURE]
        assert statuses(live_stub) == [("evaluate", 200), ("register", 200), ("capture", 200)]
        assert warnings_of(live_stub) == [warning] * 3

        with pytest.raises(AssertionError) as failed:
            StubClient(live_stub.url).assert_no_warnings()
        message = str(failed.value)
        assert message.startswith("3 requests used a key where the service refuses it:")
        for path in RUNTIME_PATHS:
            assert f"POST {path}: {warning}" in message
        assert key not in message

    @pytest.mark.parametrize(("key", "warning"), WRONG_PLANE_KEYS)
    def test_under_strict_keys_a_wrong_plane_key_reads_as_authentication(
        self, strict_stub: SpawnedStub, connect_fw: ConnectFireweave, key: str, warning: str
    ) -> None:
        fw = connect_fw(strict_stub, key)
        decision, registered = drive_runtime_plane(fw)
        assert_error_default(decision, "Authentication")
        # Authentication is not retryable in 0.1.0: one register request.
        assert registered.ok is False
        assert registered.error.kind == "Authentication"
        # The refused capture stays queued in the adapter and is resent on the next flush.
        fw.adapter.flush()
        assert svc_events(strict_stub) == []
        assert statuses(strict_stub) == [
            ("evaluate", 401),
            ("register", 401),
            ("capture", 401),
            ("capture", 401),
        ]
        # Refused, not served: nothing to warn about.
        assert warnings_of(strict_stub) == [None] * 4
        StubClient(strict_stub.url).assert_no_warnings()

    @pytest.mark.parametrize("stub_fixture", ["live_stub", "strict_stub"])
    def test_a_browser_key_works_on_the_runtime_plane_without_a_warning(
        self, request: pytest.FixtureRequest, connect_fw: ConnectFireweave, stub_fixture: str
    ) -> None:
        stub: SpawnedStub = request.getfixturevalue(stub_fixture)
        decision, registered = drive_runtime_plane(connect_fw(stub, BROWSER_KEY))
        assert_real_value(decision)
        assert registered.ok is True
        assert svc_events(stub) == [EXPOSURE]
        assert statuses(stub) == [("evaluate", 200), ("register", 200), ("capture", 200)]
        assert warnings_of(stub) == [None] * 3
        StubClient(stub.url).assert_no_warnings()


class TestBrowserKeyOnTheVendorRoutes:
    def test_under_strict_keys_posthog_reads_none_and_drops_the_batch_on_403(
        self, strict_stub: SpawnedStub, posthog_client: ConnectPosthog, failures: ErrorLog
    ) -> None:
        client = posthog_client(strict_stub, BROWSER_KEY)
        assert client.get_feature_flag(FLAG, "user-1") is None
        client.capture("checkout", distinct_id="user-1")
        client.flush()
        # /flags is not retried; /batch 403 is a client error posthog drops without retry.
        assert recorded(strict_stub, "flags") == [(403, None)]
        assert recorded(strict_stub, "batch") == [(403, None)]
        assert vendor_events(strict_stub) == []
        assert [
            (e.status if isinstance(e, APIError) else e, [m["event"] for m in batch])
            for e, batch in failures
        ] == [(403, ["$feature_flag_called", "checkout"])]
