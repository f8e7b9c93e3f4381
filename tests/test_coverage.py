"""What a run's tests exercised (`/_test/coverage`): each route against each outcome it was
served, held against a profile, for a namespace and for the whole run."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from conftest import AUTH, HANG_GUARD_S, AiohttpClient, OpenFireweave, SpawnedStub
from stub import StubConfig, coverage, create_app
from stub.coverage import Coverage
from stub.process import PYTHON_M

Client = TestClient[Any, Any]
EVALUATE = "/v1/flags/evaluate"
ASK = {"targetingKey": "user-1", "flagKeys": ["checkout-v2"]}
ONE_500 = {"mode": "500", "applyTo": "evaluate", "ttlRequests": 1}
CALLS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("evaluate", EVALUATE, ASK),
    ("capture", "/v1/capture", {"events": []}),
)


async def report(client: Client, query: str = "") -> dict[str, Any]:
    answer = await client.get("/_test/coverage" + query)
    assert answer.status == 200, await answer.text()
    body: dict[str, Any] = await answer.json()
    return body


def cells(body: dict[str, Any]) -> dict[tuple[str, str], int]:
    return {(c["route"], c["outcome"]): c["count"] for c in body["cells"]}


class TestCells:
    async def test_each_route_against_each_outcome_it_was_served(self, client: Client) -> None:
        await client.post(
            "/_test/fault", json={"mode": "500", "applyTo": "evaluate", "ttlRequests": 1}
        )
        for _ in range(3):
            await client.post(EVALUATE, json=ASK, headers=AUTH)
        await client.post(EVALUATE, json=ASK)  # no key: the stub's own 401
        await client.post("/v1/capture", json={"events": []}, headers=AUTH)
        await client.get("/v1/flag/evaluate")  # an unknown path
        assert cells(await report(client)) == {
            ("capture", "ok"): 1,
            ("evaluate", "401"): 1,
            ("evaluate", "fault 500"): 1,
            ("evaluate", "ok"): 2,
            ("unknown path", "404"): 1,
        }

    async def test_a_rate_limited_request_is_its_own_outcome(self, aiohttp_client: Any) -> None:
        from stub import StubConfig, create_app

        client = await aiohttp_client(create_app(StubConfig(rate_limit=1)))
        for _ in range(2):
            await client.post(EVALUATE, json=ASK, headers=AUTH)
        assert cells(await report(client))[("evaluate", "rate limited")] == 1

    async def test_reset_keeps_it_and_delete_starts_the_namespace_afresh(
        self, client: Client
    ) -> None:
        await client.post(EVALUATE, json=ASK, headers=AUTH)
        await client.post("/_test/reset")
        assert cells(await report(client)) == {("evaluate", "ok"): 1}
        assert (await client.delete("/_test/coverage")).status == 200
        assert cells(await report(client)) == {}
        assert cells(await report(client, "?scope=run")) == {("evaluate", "ok"): 1}


class TestTheRun:
    async def test_it_counts_every_namespace_gone_ones_too(self, client: Client) -> None:
        await client.post("/_test/namespaces", json={"name": "a"})
        await client.post("/ns/a" + EVALUATE, json=ASK, headers=AUTH)
        await client.post(EVALUATE, json=ASK, headers=AUTH)
        assert cells(await report(client, "?scope=run")) == {("evaluate", "ok"): 2}
        assert cells(await report(client)) == {("evaluate", "ok"): 1}  # the default's own
        await client.delete("/_test/namespaces/a")
        assert cells(await report(client, "?scope=run")) == {("evaluate", "ok"): 2}


class TestFlagsRead:
    FIXTURE_FLAGS = 9  # stub/default_fixtures.json

    async def test_the_flags_answered_are_read_and_the_rest_never_were(
        self, client: Client
    ) -> None:
        for _ in range(2):  # the second, remembered, reads the same
            await client.post(
                EVALUATE, json={**ASK, "flagKeys": ["checkout-v2", "no-such"]}, headers=AUTH
            )
        flags = (await report(client))["flags"]
        assert flags["read"] == ["checkout-v2"]  # a flag the fixtures lack is not theirs
        assert "checkout-v2" not in flags["neverRead"]
        assert len(flags["neverRead"]) == flags["of"] - 1 == self.FIXTURE_FLAGS - 1

    async def test_asking_for_every_flag_reads_every_one(self, client: Client) -> None:
        await client.post(EVALUATE, json={"targetingKey": "u"}, headers=AUTH)
        flags = (await report(client))["flags"]
        assert (len(flags["read"]), flags["neverRead"]) == (self.FIXTURE_FLAGS, [])

    async def test_a_request_refused_or_faulted_reads_nothing(self, client: Client) -> None:
        await client.post(EVALUATE, json=ASK)  # no key
        await client.post("/_test/fault", json=ONE_500)
        await client.post(EVALUATE, json=ASK, headers=AUTH)
        assert (await report(client))["flags"]["read"] == []

    async def test_the_vendor_routes_read_what_they_answer(self, client: Client) -> None:
        await client.post(
            "/flags?v=2",
            json={"api_key": "phc_x", "distinct_id": "u", "flag_keys_to_evaluate": ["dark-mode"]},
        )
        assert (await report(client))["flags"]["read"] == ["dark-mode"]
        polled = await client.get(
            "/flags/definitions?token=phc_x", headers={"Authorization": "Bearer phs_x"}
        )
        assert polled.status == 200
        flags = (await report(client))["flags"]  # the client evaluates them all itself
        assert (len(flags["read"]), flags["neverRead"]) == (self.FIXTURE_FLAGS, [])

    async def test_the_run_reads_every_namespace_and_a_delete_starts_one_afresh(
        self, client: Client
    ) -> None:
        await client.post("/_test/namespaces", json={"name": "a"})
        await client.post("/ns/a" + EVALUATE, json=ASK, headers=AUTH)
        await client.delete("/_test/namespaces/a")
        await client.post(EVALUATE, json={**ASK, "flagKeys": ["dark-mode"]}, headers=AUTH)
        assert (await report(client, "?scope=run"))["flags"]["read"] == [
            "checkout-v2",
            "dark-mode",
        ]
        await client.delete("/_test/coverage")
        assert (await report(client))["flags"]["read"] == []
        assert len((await report(client, "?scope=run"))["flags"]["read"]) == 2

    def test_past_the_bound_no_more_are_named(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(coverage, "MAX_FLAGS", 2)
        counted = Coverage()
        for flags in (["a", "b"], ["c"]):
            counted.read(flags)
        assert counted.flags == {"a", "b"}


class TestSummary:
    async def test_a_line_a_profile_met_its_first_gaps_and_the_flags_never_read(
        self, client: Client
    ) -> None:
        await client.post("/_test/fault", json=ONE_500)
        for _ in range(2):
            await client.post(EVALUATE, json=ASK, headers=AUTH)
        assert (await report(client))["summary"] == [
            "svc-stub coverage: runtime 2 of 15 cells met; gaps: evaluate never met a 401; "
            "evaluate never met a 429 with Retry-After; evaluate never met a timeout (a delay "
            "or a hang); evaluate never met a malformed answer (invalid_json); evaluate never "
            "met a truncated answer; and 8 more",
            "svc-stub coverage: fixture flags read 1 of 9; never read: dark-mode, "
            "discount-rate, enterprise-dashboard, legacy-banner, max-items, and 3 more",
        ]

    async def test_with_no_cell_of_any_profile_met_one_line_says_so(self, client: Client) -> None:
        assert (await report(client))["summary"][0] == (
            "svc-stub coverage: no cell of any profile met "
            "(management 0 of 10, runtime 0 of 15, vendor 0 of 15)"
        )


class TestProfiles:
    async def test_a_suite_that_arms_only_a_500_is_told_each_cell_it_missed(
        self, client: Client
    ) -> None:
        await client.post(
            "/_test/fault", json={"mode": "500", "applyTo": "evaluate", "ttlRequests": 1}
        )
        await client.post(EVALUATE, json=ASK, headers=AUTH)
        await client.post(EVALUATE, json=ASK, headers=AUTH)
        runtime = (await report(client, "?profile=runtime"))["profiles"]["runtime"]
        assert (runtime["met"], runtime["of"]) == (2, 15)
        says = [gap["says"] for gap in runtime["gaps"]]
        assert says[:6] == [
            "evaluate never met a 401",
            "evaluate never met a 429 with Retry-After",
            "evaluate never met a timeout (a delay or a hang)",
            "evaluate never met a malformed answer (invalid_json)",
            "evaluate never met a truncated answer",
            "capture was never answered successfully",
        ]
        assert "evaluate never met quota limiting (quota_limited)" in says

    async def test_the_missing_cells_once_met_close_the_gaps(self, client: Client) -> None:
        for route, path, body in (
            ("evaluate", EVALUATE, ASK),
            ("capture", "/v1/capture", {"events": []}),
        ):
            await client.post(path, json=body, headers=AUTH)
            for mode in ("401", "429", "500", "delay", "invalid_json", "truncated"):
                arming = {"mode": mode, "applyTo": route, "ttlRequests": 1, "delayMs": 1}
                if mode != "delay":
                    del arming["delayMs"]
                await client.post("/_test/fault", json=arming)
                await client.post(path, json=body, headers=AUTH)
        await client.post("/_test/fault", json={"mode": "quota_limited", "applyTo": "evaluate"})
        await client.post(EVALUATE, json=ASK, headers=AUTH)
        runtime = (await report(client, "?profile=runtime"))["profiles"]["runtime"]
        assert runtime["gaps"] == []
        assert runtime["met"] == runtime["of"] == 15

    @pytest.mark.parametrize(
        ("query", "message"),
        [
            (
                "?profile=web",
                "profile: no profile 'web' (the profiles: runtime, vendor, management)",
            ),
            ("?scope=all", "scope: expected namespace or run, got 'all'"),
        ],
    )
    async def test_a_bad_query_is_a_400_naming_it(
        self, client: Client, query: str, message: str
    ) -> None:
        answer = await client.get("/_test/coverage" + query)
        assert (answer.status, (await answer.json())["message"]) == (400, message)


class TestBounded:
    def test_past_the_bound_new_cells_count_together(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(coverage, "MAX_CELLS", 2)
        counted = Coverage()
        for status in (200, 500, 501, 502):
            counted.first(("evaluate", status))
        assert counted.cells == {("evaluate", 200): 1, ("evaluate", 500): 1, ("other", None): 2}


class TestThroughARealClient:
    def test_fireweave_against_a_500_is_told_what_it_missed(
        self, live_stub: SpawnedStub, open_fireweave: OpenFireweave
    ) -> None:
        from fireweave import EvaluationContext

        afresh(live_stub)
        live_stub.post("/_test/fault", {"mode": "500", "applyTo": "evaluate", "ttlRequests": 1})
        _, _, client = open_fireweave(live_stub.url, "project-api-key_x")
        user = EvaluationContext(targeting_key="user-1")
        for _ in range(2):
            client.control_points.get_boolean_value("new-checkout", False, user)
        runtime = live_stub.get("/_test/coverage?profile=runtime")["profiles"]["runtime"]
        met = {(c["route"], c["outcome"]) for c in live_stub.get("/_test/coverage")["cells"]}
        assert ("evaluate", "fault 500") in met
        assert "evaluate never met a 401" in [gap["says"] for gap in runtime["gaps"]]
        assert live_stub.get("/_test/coverage")["flags"]["read"] == ["new-checkout"]


class TestTheGateThroughFireweave:
    """What the issue promises a team: a suite that arms only a 500 on evaluate fails the
    gate, told each cell it missed; the missing tests added, the gate passes."""

    SHORT_TIMEOUT_MS = 300
    """For the client that meets the hangs: it gives up, and the stub records it gone."""

    def test_adding_the_missing_tests_turns_the_gate_green(
        self, live_stub: SpawnedStub, open_fireweave: OpenFireweave
    ) -> None:
        from fireweave import EvaluationContext

        user = EvaluationContext(targeting_key="user-1")
        afresh(live_stub)
        gate = ["--url", live_stub.url, "--scope", "namespace", "--profile", "runtime"]

        def calls(timeout_ms: int) -> dict[str, Callable[[], object]]:
            adapter, _, client = open_fireweave(live_stub.url, "fw-key", timeout_ms)
            return {
                "evaluate": lambda: client.control_points.get_boolean_value(
                    "new-checkout", False, user
                ),
                "capture": lambda: (client.signals.record_health("h", "ok"), adapter.flush()),
            }

        patient = calls(HANG_GUARD_S * 1000)
        live_stub.post("/_test/fault", ONE_500)
        for _ in range(2):
            patient["evaluate"]()
        failed = TestTheCommand.coverage(*gate, "--require")
        assert (failed.returncode, failed.stderr) == (1, "svc-stub coverage: runtime has 13 gaps\n")
        assert "  - capture never met a 429 with Retry-After" in failed.stdout

        for route, call in patient.items():  # the missing tests
            call()
            for mode in ("401", "429", "500", "invalid_json", "truncated"):
                live_stub.post("/_test/fault", {"mode": mode, "applyTo": route, "ttlRequests": 1})
                call()
        live_stub.post(
            "/_test/fault", {"mode": "quota_limited", "applyTo": "evaluate", "ttlRequests": 1}
        )
        patient["evaluate"]()
        for route, call in calls(self.SHORT_TIMEOUT_MS).items():
            live_stub.post("/_test/fault", {"mode": "hang", "applyTo": route, "ttlRequests": 1})
            call()
            met(live_stub, route, "fault hang")  # recorded once the stub sees the client gone

        passed = TestTheCommand.coverage(*gate, "--require")
        assert (passed.returncode, passed.stderr) == (0, "")
        assert "runtime: 15 of 15 cells met" in passed.stdout


class TestTheCommand:
    @staticmethod
    def coverage(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*PYTHON_M, "stub", "coverage", *args],
            capture_output=True,
            text=True,
            timeout=HANG_GUARD_S,
            check=False,
        )

    def test_it_names_the_gaps_and_gates_ci(self, live_stub: SpawnedStub) -> None:
        afresh(live_stub)
        live_stub.post("/_test/fault", {"mode": "500", "applyTo": "evaluate", "ttlRequests": 1})
        for _ in range(2):
            send(live_stub.url, EVALUATE, ASK)
        said = self.coverage(
            "--url", live_stub.url, "--scope", "namespace", "--profile", "runtime",
            "--fail-under", "80",
        )  # fmt: skip
        assert said.returncode == 1
        assert "  evaluate  fault 500" in said.stdout
        assert "runtime: 2 of 15 cells met" in said.stdout
        assert "  - evaluate never met a 429 with Retry-After" in said.stdout
        assert "fixture flags: 1 of 9 read\n  never read: dark-mode, discount-rate," in said.stdout
        assert said.stderr == (
            "svc-stub coverage: runtime is 13% (2 of 15), under --fail-under 80\n"
        )
        passing = ("--url", live_stub.url, "--profile", "runtime", "--fail-under", "10")
        assert self.coverage(*passing).returncode == 0

    def test_a_saved_report_reads_the_same(self, live_stub: SpawnedStub, tmp_path: Path) -> None:
        afresh(live_stub)
        send(live_stub.url, EVALUATE, ASK)
        saved = tmp_path / "coverage.json"
        saved.write_text(json.dumps(live_stub.get("/_test/coverage?profile=runtime")))
        said = self.coverage("--report", str(saved), "--require")
        assert said.returncode == 1
        assert said.stderr == "svc-stub coverage: runtime has 14 gaps\n"

    def test_a_teams_own_profile_in_yaml(self, live_stub: SpawnedStub, tmp_path: Path) -> None:
        afresh(live_stub)
        send(live_stub.url, EVALUATE, ASK)
        saved = tmp_path / "coverage.json"
        saved.write_text(json.dumps(live_stub.get("/_test/coverage?profile=runtime")))
        own = tmp_path / "profiles.yaml"
        own.write_text(
            "profiles:\n"
            "  checkout:\n"
            "    description: what the checkout client must survive\n"
            "    expect:\n"
            "      - {route: evaluate, outcomes: [ok]}\n"
            "      - {route: evaluate, outcomes: [fault 429, rate limited],"
            " says: checkout never saw a 429}\n"
        )
        said = self.coverage("--report", str(saved), "--profiles", str(own))
        assert "checkout: 1 of 2 cells met\n  - checkout never saw a 429" in said.stdout
        own.write_text("profiles:\n  checkout:\n    expect:\n      - {route: evaluate}\n")
        said = self.coverage("--report", str(saved), "--profiles", str(own))
        assert said.returncode == 2
        assert said.stderr == (
            f"svc-stub: error: coverage: --profiles {own}: profiles.checkout.expect[0].outcomes:"
            " expected a list of outcomes (ok, 401, fault 429)\n"
        )

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (["--url", "http://127.0.0.1:9"], "does not answer"),
            (["--report", "no-such.json"], "--report no-such.json: No such file or directory"),
        ],
    )
    def test_a_source_that_is_not_there_is_one_line(self, args: list[str], message: str) -> None:
        said = self.coverage(*args)
        assert said.returncode == 2
        assert said.stderr.startswith("svc-stub: error: coverage: ")
        assert message in said.stderr
        assert said.stderr.count("\n") == 1


def afresh(stub: SpawnedStub) -> None:
    """The session's stub, its namespace's count started again: a reset keeps it."""
    request = urllib.request.Request(stub.url + "/_test/coverage", method="DELETE")
    with urllib.request.urlopen(request, timeout=HANG_GUARD_S) as answer:
        answer.read()


def met(stub: SpawnedStub, route: str, outcome: str) -> None:
    """Waits until the namespace's coverage holds the cell (a guard against its never coming,
    not a speed budget)."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not any(
        (cell["route"], cell["outcome"]) == (route, outcome)
        for cell in stub.get("/_test/coverage")["cells"]
    ):
        assert time.monotonic() < deadline, f"{route} never met {outcome}"
        time.sleep(0.02)


def send(url: str, path: str, body: dict[str, Any]) -> None:
    request = urllib.request.Request(
        url + path, data=json.dumps(body).encode(), headers=AUTH, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=HANG_GUARD_S) as answer:
            answer.read()
    except urllib.error.HTTPError as refused:
        refused.close()


class TestTheOtherProfiles:
    async def test_a_resource_is_met_by_any_of_its_routes(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        seeded = StubConfig(fixture_paths=(Path(__file__).parent / "fixtures" / "management.yaml",))
        client = await aiohttp_client(create_app(seeded))
        headers = {"Authorization": "Bearer svc_org_acme_admin"}
        await client.get("/v1/projects/nope", headers=headers)
        await client.get("/v1/projects", headers=headers)
        management = (await report(client, "?profile=management"))["profiles"]["management"]
        says = [gap["says"] for gap in management["gaps"]]
        assert "projects was never answered successfully" not in says
        assert "projects never met a 404 (a row gone)" not in says
        assert "projects never met a 409 (a conflict)" in says
        assert management["of"] == 10


class TestThroughPostHog:
    @pytest.mark.filterwarnings("ignore:`get_feature_flag` is deprecated:DeprecationWarning")
    def test_a_posthog_client_against_a_500_is_told_what_it_missed(
        self, live_stub: SpawnedStub
    ) -> None:
        from posthog import Posthog

        afresh(live_stub)
        live_stub.post("/_test/fault", {"mode": "500", "applyTo": "flags", "ttlRequests": 1})
        client = Posthog(
            "phc_coverage", host=live_stub.url, sync_mode=True, max_retries=1, timeout=5,
            feature_flags_request_timeout_seconds=5, poll_interval=3600,
        )  # fmt: skip
        try:
            for _ in range(2):
                client.get_feature_flag("new-checkout", "user-1")
        finally:
            client.shutdown()
        met = {(c["route"], c["outcome"]) for c in live_stub.get("/_test/coverage")["cells"]}
        assert {("flags", "fault 500"), ("flags", "ok")} <= met
        vendor = live_stub.get("/_test/coverage?profile=vendor")["profiles"]["vendor"]
        says = [gap["says"] for gap in vendor["gaps"]]
        assert "flags never met a 429 with Retry-After" in says
        assert "flags never met the backend unavailable (a 500 or 503)" not in says
