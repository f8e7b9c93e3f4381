"""The wire-conformance kit: the published fireweave client through its reference adapter (its
known departures from the spec reported as expected failures, nothing else failing), and a
deliberately wrong client whose every broken rule the kit catches, on the wire."""

from __future__ import annotations

import json
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import AbstractContextManager
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from conftest import SpawnedStub, adapter_process, run_kit, spawn_stub
from stub.conformance.cases import AREAS, CaseError, load_cases
from stub.conformance.protocol import Adapter
from stub.conformance.runner import Result, Run, run_cases

ROOT = Path(__file__).resolve().parent.parent
Json = dict[str, Any]


def reference_adapter(script: str) -> AbstractContextManager[str]:
    return adapter_process([sys.executable, str(ROOT / "adapters" / script), "--port", "0"])


@pytest.fixture(scope="module")
def fireweave_adapter() -> Iterator[str]:
    with reference_adapter("fireweave_python.py") as url:
        yield url


@pytest.fixture(scope="module")
def posthog_adapter() -> Iterator[str]:
    with reference_adapter("posthog_python.py") as url:
        yield url


@pytest.fixture(scope="module")
def kit_stub() -> Iterator[SpawnedStub]:
    with spawn_stub(read_log=False) as stub:
        yield stub


kit = run_kit


class TestTheReferenceAdapter:
    def test_fireweave_0_1_0_passes_every_case_but_its_declared_departures(
        self, fireweave_adapter: str, tmp_path: Path
    ) -> None:
        junit = tmp_path / "conformance.xml"
        done = kit("--adapter", fireweave_adapter, "--junit", str(junit))
        assert done.returncode == 0, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        verdicts = {line.split()[1]: line.split()[0] for line in lines[1:-1]}
        declared = Adapter(fireweave_adapter).info().expected_failures
        assert {case for case, verdict in verdicts.items() if verdict == "XFAIL"} == set(declared)
        # It retries register at once whatever Retry-After asks: the spec is silent on timing
        assert {case for case, verdict in verdicts.items() if verdict == "WARN"} == {
            "registration/waits-for-retry-after-on-a-429",
            "registration/waits-for-retry-after-on-a-503",
        }
        assert set(verdicts.values()) == {"PASS", "WARN", "XFAIL"}
        assert set(verdicts) == {case.id for case in load_cases() if case.plane == "runtime"}
        passed = len(verdicts) - len(declared)
        assert lines[-1] == (
            f"{passed} passed, 0 failed, 2 with warnings, {len(declared)} expected failures"
        )
        suite = ElementTree.parse(junit).getroot()
        assert (suite.get("tests"), suite.get("failures")) == (str(len(verdicts)), "0")
        assert len(suite.findall("testcase/skipped")) == len(declared)

    def test_the_posthog_sdk_passes_the_vendor_cases_and_only_those(
        self, posthog_adapter: str
    ) -> None:
        done = kit("--adapter", posthog_adapter)
        assert done.returncode == 0, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        vendor = {case.id for case in load_cases(areas=["vendor"])}
        assert {line.split()[1] for line in lines[1:-1]} == vendor
        assert lines[-1] == f"{len(vendor)} passed, 0 failed"

    def test_the_kit_runs_against_a_running_stub_and_filters_cases(
        self, fireweave_adapter: str, kit_stub: SpawnedStub
    ) -> None:
        done = kit(
            "--adapter", fireweave_adapter, "--stub", kit_stub.url,
            "--area", "registration", "--case", "reads/boolean-*",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        ids = sorted(line.split()[1] for line in done.stdout.splitlines()[1:-1])
        registration = sorted(case.id for case in load_cases(areas=["registration"]))
        assert ids == ["reads/boolean-off-reads-false", "reads/boolean-reads-true", *registration]
        assert kit_stub.get("/_test/namespaces")["count"] == 0  # every case cleaned up

    def test_listing_needs_no_adapter_to_answer(self) -> None:
        done = kit("--list", "--area", "lifecycle")
        assert done.returncode == 0
        assert done.stdout.splitlines()[0].startswith("lifecycle/read-after-shutdown (runtime): ")


class TestMistakes:
    @pytest.mark.parametrize(
        ("args", "said"),
        [
            (["--case", "reads/nope"], "--case/--area selected no case"),
            (["--contracts", "tests", "--junit", "x.xml"], "--contracts runs the fixtures alone"),
            (["--contracts-report", "x.json"], "--contracts-report needs --contracts"),
        ],
    )
    def test_options_that_select_nothing_or_do_not_apply_are_one_line(
        self, args: list[str], said: str
    ) -> None:
        done = kit("--adapter", "http://127.0.0.1:1", *args)
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1
        assert said in done.stderr

    def test_a_stub_url_where_no_stub_answers_is_one_line(self, fireweave_adapter: str) -> None:
        done = kit("--adapter", fireweave_adapter, "--stub", "http://127.0.0.1:1")
        assert (done.returncode, done.stderr.count("\n")) == (2, 1)
        assert "--stub http://127.0.0.1:1: no svc-stub answers there" in done.stderr

    def test_an_adapter_that_answers_html_is_one_line(self, tmp_path: Path) -> None:
        (tmp_path / "index.html").write_text("<html>not an adapter</html>")
        server = ThreadingHTTPServer(
            ("127.0.0.1", 0),
            lambda *a: SimpleHTTPRequestHandler(*a, directory=str(tmp_path)),
        )
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            done = kit("--adapter", f"http://127.0.0.1:{server.server_address[1]}")
        finally:
            server.shutdown()
            server.server_close()
        assert (done.returncode, done.stderr.count("\n")) == (2, 1)
        assert "GET /: the adapter's answer is not JSON" in done.stderr

    def test_an_unreachable_adapter_is_one_line(self) -> None:
        done = kit("--adapter", "http://127.0.0.1:1")
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1
        assert done.stderr.startswith("svc-stub conformance: error: GET /: ")
        assert "is the adapter running there? Start it first" in done.stderr

    def test_a_stub_given_as_the_adapter_is_named_for_what_it_is(
        self, session_stub: SpawnedStub
    ) -> None:
        done = kit("--adapter", session_stub.url)
        assert (done.returncode, done.stderr.count("\n")) == (2, 1)
        assert (
            "the adapter answered 404 (application/json): that is a svc-stub, not an adapter"
            in (done.stderr)
        )
        assert "--adapter takes the URL of your library's adapter" in done.stderr

    def test_an_unknown_area_is_one_line(self) -> None:
        done = kit("--adapter", "http://127.0.0.1:1", "--area", "nope")
        assert done.returncode == 2
        assert "Invalid value for '--area'" in done.stderr

    def test_every_shipped_case_file_loads_and_names_its_area(self) -> None:
        cases = load_cases()
        assert {case.area for case in cases} == set(AREAS)
        assert len({case.id for case in cases}) == len(cases)

    def test_a_case_file_with_an_unknown_key_names_it(self, tmp_path: Path) -> None:
        (tmp_path / "reads.yaml").write_text("cases:\n  - {name: x, description: y, colour: red}\n")
        with pytest.raises(CaseError, match=r"reads.yaml: cases\[0\].colour: unknown key"):
            load_cases(directory=tmp_path)


# ------------------------------------------------------------------------------------------
# A client that breaks the rules on purpose, behind the same protocol.
# ------------------------------------------------------------------------------------------


class WrongClient:
    """A tiny remote client over urllib with switchable sins."""

    def __init__(self, api_url: str, api_key: str, sins: set[str]) -> None:
        self.api_url, self.api_key, self.sins = api_url, api_key, sins
        self.queued: list[Json] = []

    def call(self, path: str, body: Json) -> Json:
        key = "svc_org_not-for-runtime" if "sends an org key" in self.sins else self.api_key
        timeout = 0.3 if "short timeout" in self.sins else 2
        request = urllib.request.Request(
            self.api_url + path,
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {key}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                parsed: Json = json.load(answer)
                return parsed
        except urllib.error.HTTPError as exc:
            exc.close()
            raise ConnectionError(f"HTTP {exc.code}") from None

    def evaluate(self, body: Json) -> Json:
        attempts = 2 if "retries evaluate" in self.sins else 1
        for _ in range(attempts):
            try:
                answer = self.call(
                    "/v1/flags/evaluate", {"targetingKey": "u", "flagKeys": [body["flagKey"]]}
                )
                decision = answer["decisions"][0]
                if "exposes on read" in self.sins:
                    self.call(
                        "/v1/capture",
                        {"events": [{"type": "exposure", "flagKey": body["flagKey"]}]},
                    )
                value = decision["value"] if decision["found"] else body["default"]
                return {
                    "value": value,
                    "variant": decision.get("variant"),
                    "reason": "X",
                    "errorKind": None,
                }
            except (OSError, ValueError) as exc:
                error = exc
        if "raises" in self.sins:
            return {"raised": f"HTTPError: {error}"}
        if "zero on failure" in self.sins:
            return {"value": type(body["default"])(), "reason": None, "errorKind": None}
        message = f"failed with {self.api_key}" if "leaks the key" in self.sins else "failed"
        return {
            "value": body["default"],
            "reason": "ERROR",
            "errorKind": "Oops",
            "errorMessage": message,
        }

    def register(self, body: Json) -> Json:
        try:
            self.call("/v1/targets/register", {"targetingKey": body["targetingKey"]})
            return {"ok": True}
        except OSError:
            return {"ok": False}  # never retried: the rule says once more when retryable

    def record(self, body: Json) -> Json:
        event = dict(body, type="exposure")  # no de-duplication
        if "puts the key in events" in self.sins:
            event["properties"] = {"apiKey": self.api_key}
        self.queued.append(event)
        return {"ok": True}

    def flush(self, body: Json) -> Json:
        if self.queued:
            self.call("/v1/capture", {"events": self.queued})
        self.queued = []
        return {"ok": True}


def serve_wrong_adapter(
    sins: set[str], capabilities: list[str], expected: Json | None = None
) -> tuple[ThreadingHTTPServer, str]:
    clients: dict[str, WrongClient] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.answer(
                {"protocol": 1, "name": "wrong", "language": "none", "capabilities": capabilities}
            )

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path == "/clients":
                if not body["apiKey"]:
                    self.answer({"error": {"kind": "Configuration", "message": "no key"}})
                    return
                clients[str(len(clients))] = WrongClient(body["apiUrl"], body["apiKey"], sins)
                self.answer({"id": str(len(clients) - 1)})
                return
            client = clients[self.path.removeprefix("/clients/")]
            calls = {
                "evaluate": client.evaluate, "register": client.register,
                "recordExposure": client.record, "flushExposures": client.flush,
                "shutdown": client.flush,
            }  # fmt: skip
            self.answer(calls[body["command"]](body))

        def do_DELETE(self) -> None:
            self.answer({})

        def answer(self, body: Json) -> None:
            encoded = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(encoded)))
            self.end_headers()
            self.wfile.write(encoded)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def verdicts(stub: SpawnedStub, sins: set[str], names: list[str], **run: Any) -> dict[str, Result]:
    capabilities = run.pop("capabilities", ["evaluate", "register", "exposures", "shutdown"])
    server, url = serve_wrong_adapter(sins, capabilities, run.pop("expected", None))
    try:
        adapter = Adapter(url)
        kit_run = Run(stub.url, adapter, adapter.info(), **run)
        results = run_cases(kit_run, load_cases(names), 4, lambda result: None)
    finally:
        server.shutdown()
        server.server_close()
    return {result.case.id: result for result in results}


class TestTheKitCatchesAWrongClient:
    def test_a_retried_evaluate_fails_and_says_how_many_were_sent(
        self, kit_stub: SpawnedStub
    ) -> None:
        result = verdicts(kit_stub, {"retries evaluate"}, ["faults/evaluate-500"])
        one = result["faults/evaluate-500"]
        assert one.verdict == "FAIL"
        assert "wire: 1 evaluate request(s) expected, 2 sent" in one.problems

    def test_the_zero_value_with_no_error_on_a_failure_fails(self, kit_stub: SpawnedStub) -> None:
        one = verdicts(kit_stub, {"zero on failure"}, ["faults/evaluate-500"])[
            "faults/evaluate-500"
        ]
        assert one.verdict == "FAIL"
        assert one.problems[:2] == (
            'steps[0] evaluate.value: expected "caller-default", got ""',
            "steps[0] evaluate.errorKind: expected a value (not null), got null",
        )

    def test_a_retry_after_a_timeout_is_seen_though_the_stub_was_still_delaying(
        self, kit_stub: SpawnedStub
    ) -> None:
        case = "faults/evaluate-slower-than-the-timeout"
        one = verdicts(kit_stub, {"retries evaluate", "short timeout"}, [case])[case]
        assert "wire: 1 evaluate request(s) expected, 2 sent" in one.problems

    def test_a_declared_failure_never_hides_a_throw(self, kit_stub: SpawnedStub) -> None:
        case = "faults/evaluate-401"
        expected = {case: "we know"}
        one = verdicts(kit_stub, {"raises"}, [case], expected=expected)[case]
        assert one.verdict == "FAIL"
        assert one.problems[0].startswith("steps[0] evaluate: raised HTTPError")

    def test_a_read_that_raises_fails(self, kit_stub: SpawnedStub) -> None:
        one = verdicts(kit_stub, {"raises"}, ["faults/evaluate-401"])["faults/evaluate-401"]
        assert one.verdict == "FAIL"
        assert one.problems[0].startswith("steps[0] evaluate: raised HTTPError")

    def test_a_message_holding_the_key_fails(self, kit_stub: SpawnedStub) -> None:
        case = "faults/secrets-absent-from-messages"
        one = verdicts(kit_stub, {"leaks the key"}, [case])[case]
        assert one.problems == ("a message the library returned contains the API key",)

    def test_the_key_in_an_event_sent_fails(self, kit_stub: SpawnedStub) -> None:
        case = "exposures/differing-exposures-are-all-sent"
        one = verdicts(kit_stub, {"puts the key in events"}, [case])[case]
        assert one.problems == ("an event or target the client sent contains the API key",)

    def test_an_exposure_sent_by_a_plain_read_fails(self, kit_stub: SpawnedStub) -> None:
        case = "reads/a-plain-read-sends-no-exposure"
        one = verdicts(kit_stub, {"exposes on read"}, [case])[case]
        assert one.problems == (
            "wire: 0 capture request(s) expected, 1 sent",
            "wire: 0 exposures expected on the wire, 1 sent",
        )

    def test_duplicates_sent_twice_and_a_register_never_retried_fail(
        self, kit_stub: SpawnedStub
    ) -> None:
        cases = ["exposures/duplicates-collapse", "registration/retried-once-after-a-500"]
        results = verdicts(kit_stub, set(), cases)
        assert results[cases[0]].problems[0].startswith("wire: 1 exposures expected, 2 sent")
        assert "wire: 2 register request(s) expected, 1 sent" in results[cases[1]].problems

    def test_an_open_question_answered_differently_warns_and_fails_only_when_strict(
        self, kit_stub: SpawnedStub
    ) -> None:
        case = "faults/evaluate-500"
        lenient = verdicts(kit_stub, set(), [case])[case]
        assert lenient.verdict == "WARN"
        assert lenient.problems == (
            'steps[0] evaluate.errorKind: the published clients give "BackendUnavailable", '
            'got "Oops"',
        )
        assert verdicts(kit_stub, set(), [case], strict=True)[case].verdict == "FAIL"

    def test_cases_needing_a_capability_the_adapter_lacks_are_skipped(
        self, kit_stub: SpawnedStub
    ) -> None:
        results = verdicts(
            kit_stub,
            set(),
            ["registration/*", "reads/boolean-reads-true"],
            capabilities=["evaluate"],
        )
        assert results["reads/boolean-reads-true"].verdict == "PASS"
        skipped = {case: r for case, r in results.items() if case.startswith("registration/")}
        assert {r.verdict for r in skipped.values()} == {"SKIP"}
        assert next(iter(skipped.values())).problems == ("the adapter lacks register",)

    def test_a_key_the_service_would_refuse_fails_with_the_stubs_words(
        self, kit_stub: SpawnedStub
    ) -> None:
        case = "reads/boolean-reads-true"
        one = verdicts(kit_stub, {"sends an org key"}, [case])[case]
        assert one.verdict == "FAIL"
        assert one.problems[0].startswith(
            "wire: POST /v1/flags/evaluate: an organisation key (svc_org_...) belongs to the "
            "management plane"
        )

    def test_a_browser_client_is_given_a_browser_key_which_the_runtime_plane_takes(
        self, kit_stub: SpawnedStub
    ) -> None:
        case = "reads/boolean-reads-true"
        capabilities = ["evaluate", "browser"]
        one = verdicts(kit_stub, set(), [case], capabilities=capabilities)[case]
        assert one.verdict == "PASS", one.problems

    def test_without_namespaces_cases_run_one_at_a_time_after_a_reset(
        self, kit_stub: SpawnedStub
    ) -> None:
        """An older stub: no namespaces, so the kit resets it before each case instead."""
        cases = ["reads/boolean-reads-true", "faults/evaluate-500", "reads/integer-reads"]
        results = verdicts(kit_stub, set(), cases, namespaces=False)
        assert [results[case].verdict for case in cases] == ["PASS", "WARN", "PASS"]
        kit_stub.post("/_test/reset")


CONTRACTS = Path(__file__).resolve().parent / "contracts"


class TestContractFixtures:
    def test_a_directory_runs_through_the_adapter_and_is_reported_as_those_repositories_do(
        self, fireweave_adapter: str, tmp_path: Path
    ) -> None:
        report = tmp_path / "report.json"
        done = kit(
            "--adapter", fireweave_adapter, "--contracts", str(CONTRACTS / "agreed"),
            "--contracts-report", str(report),
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        document = json.loads(report.read_text())
        statuses = {row["fixtureId"]: row["status"] for row in document["results"]}
        assert statuses == {
            "context-requires-targeting-key": "skipped-with-documented-limitation",
            "evaluation-match-person": "skipped-with-documented-limitation",
            "evaluation-missing-flag": "fail",  # as declared for python: not a drift
            "evaluation-string-variant": "pass",
            "fault-backend-503": "pass",
            "faults-refusals": "pass",  # all three of its cases
            "lifecycle-shutdown-idempotent": "skipped-with-documented-limitation",
        }
        assert document["summary"] == {
            "pass": 3, "fail": 1, "skipped-with-documented-limitation": 3,
        }  # fmt: skip
        skipped = next(
            r for r in document["results"] if r["fixtureId"] == "evaluation-match-person"
        )
        assert skipped == {
            "fixtureId": "evaluation-match-person",
            "suite": "evaluation",
            "language": "python",
            "status": "skipped-with-documented-limitation",
            "limitation": "the stub has no person matching",
            "message": "given.flags.vip.matchPerson: the stub cannot serve it",
        }
        lines = done.stdout.splitlines()
        assert lines[0].startswith("contracts: 7 fixtures (9 cases) from ")
        assert lines[-1] == (
            "3 passed, 1 failed, 3 skipped (0 of them declared pass or fail here: the kit cannot "
            "drive them), 0 drifted from their declared compatibility"
        )

    def test_a_status_other_than_the_declared_one_is_drift_and_fails_the_run(
        self, fireweave_adapter: str
    ) -> None:
        done = kit("--adapter", fireweave_adapter, "--contracts", str(CONTRACTS / "drifted"))
        assert done.returncode == 1
        assert "PASS  declared-fail-but-passes (DRIFT: declared 'fail' for this language)" in (
            done.stdout.splitlines()
        )
        assert done.stdout.splitlines()[-1].endswith(
            ", 2 drifted from their declared compatibility"
        )

    @pytest.mark.parametrize(
        ("change", "skip"),
        [
            (
                {"given": {"fault": {"mode": "dnsFailure"}}},
                "given.fault.mode: 'dnsFailure' has no equivalent on the stub",
            ),
            (
                {"given": {"providerState": "STALE"}},
                "given.providerState: 'STALE' cannot be set on a remote client",
            ),
            (
                {"given": {"config": {"host": "https://x"}}},
                "given.config.host: not an option the adapter protocol carries",
            ),
            (
                {"expect": {"value": False, "ok": True}},
                "expect.ok: not observable through the adapter protocol",
            ),
            ({"given": {"globalContext": {}}}, "given.globalContext: not expressible on the stub"),
            (
                {"expect": {"flagMetadata": {"fireweave.reasonCode": "condition_match"}}},
                "expect.flagMetadata.fireweave.reasonCode: only a vendor-shaped backend reports it",
            ),
            (
                {
                    "given": {
                        "fault": {"mode": "httpStatus", "status": 500, "applyTo": "definitions"}
                    }
                },
                "given.fault.applyTo: 'definitions' is not a route it calls",
            ),
            ({"when": {"domain": "x"}}, "when.domain: not an argument the protocol carries"),
            ({"schemaVersion": 2}, "schemaVersion: 2 (this kit reads 1)"),
        ],
    )
    def test_what_the_stub_cannot_express_is_a_skip_that_names_it_never_a_pass(
        self, tmp_path: Path, change: Json, skip: str
    ) -> None:
        from stub.conformance.contracts import load_contracts

        fixture = json.loads((CONTRACTS / "agreed" / "fault-backend-503.json").read_text())
        for section, values in change.items():
            merged = {**fixture[section], **values} if isinstance(values, dict) else values
            fixture[section] = merged
        (tmp_path / "one.json").write_text(json.dumps(fixture))
        (contract,) = load_contracts(tmp_path)
        assert (contract.case, contract.skipped) == (None, skip)

    @pytest.mark.parametrize(
        ("change", "armed"),
        [
            ({"mode": "httpStatus", "status": 500, "body": "<html>"},
             {"mode": "status", "status": 500, "body": "<html>", "applyTo": "evaluate"}),
            ({"mode": "invalidJson", "body": "{x", "status": 503},
             {"mode": "invalid_json", "body": "{x", "status": 503, "applyTo": "evaluate"}),
            ({"mode": "httpStatus", "status": 429},
             {"mode": "429", "applyTo": "evaluate"}),
        ],
    )  # fmt: skip
    def test_every_field_of_a_fault_is_armed(
        self, tmp_path: Path, change: Json, armed: Json
    ) -> None:
        from stub.conformance.contracts import load_contracts

        fixture = json.loads((CONTRACTS / "agreed" / "fault-backend-503.json").read_text())
        fixture["given"]["fault"] = change
        (tmp_path / "one.json").write_text(json.dumps(fixture))
        (contract,) = load_contracts(tmp_path)
        assert contract.case is not None
        assert contract.case.fault == armed

    @pytest.mark.parametrize(
        ("local", "skip"),
        [(False, None), (True, "given.config.localEvaluation: not an option the adapter "
                               "protocol carries")],
    )  # fmt: skip
    def test_local_evaluation_off_is_the_default_and_runs_on_is_a_skip(
        self, tmp_path: Path, local: bool, skip: str | None
    ) -> None:
        from stub.conformance.contracts import load_contracts

        fixture = json.loads((CONTRACTS / "agreed" / "fault-backend-503.json").read_text())
        fixture["given"]["config"] = {"localEvaluation": local}
        (tmp_path / "one.json").write_text(json.dumps(fixture))
        (contract,) = load_contracts(tmp_path)
        assert contract.skipped == skip
        assert (contract.case is None) == local

    def test_an_extension_is_skipped_for_what_cannot_be_set_not_for_having_no_wire_effect(
        self, tmp_path: Path
    ) -> None:
        from stub.conformance.contracts import load_contracts

        fixture = json.loads((CONTRACTS / "agreed" / "fault-backend-503.json").read_text())
        fixture["suite"] = "extensions"
        (tmp_path / "one.json").write_text(json.dumps(fixture))
        (contract,) = load_contracts(tmp_path)
        assert contract.skipped is not None
        assert "no wire effect" not in contract.skipped
        assert "cannot set" in contract.skipped
        assert "reach /v1/capture" in contract.skipped

    def test_nested_context_attributes_are_sent_flat(self, tmp_path: Path) -> None:
        from stub.conformance.contracts import load_contracts

        fixture = json.loads((CONTRACTS / "agreed" / "fault-backend-503.json").read_text())
        fixture["when"]["invocationContext"] = {"targetingKey": "u", "attributes": {"plan": "pro"}}
        (tmp_path / "one.json").write_text(json.dumps(fixture))
        (contract,) = load_contracts(tmp_path)
        assert contract.case is not None
        assert contract.case.steps[0].args["context"] == {"targetingKey": "u", "plan": "pro"}

    def test_two_fixtures_with_one_id_are_refused(self, tmp_path: Path) -> None:
        from stub.conformance.contracts import Unsupported, load_contracts

        fixture = (CONTRACTS / "agreed" / "fault-backend-503.json").read_text()
        (tmp_path / "a").mkdir()
        (tmp_path / "a" / "one.json").write_text(fixture)
        (tmp_path / "b.json").write_text(fixture)
        with pytest.raises(Unsupported, match=r"fixture id 'fault-backend-503' is also "):
            load_contracts(tmp_path)

    def test_json_that_is_not_a_fixture_is_left_alone(self, tmp_path: Path) -> None:
        from stub.conformance.contracts import load_contracts

        (tmp_path / "errors.json").write_text('{"kinds": []}')  # the repositories keep one
        (tmp_path / "faults").mkdir()
        fixture = (CONTRACTS / "agreed" / "fault-backend-503.json").read_text()
        (tmp_path / "faults" / "fault-backend-503.json").write_text(fixture)
        assert [c.fixture_id for c in load_contracts(tmp_path)] == ["fault-backend-503"]


class TestTheRunnersClientRepositoriesAlreadyHave:
    """They drive the stub through `/_test/reset` and `/_test/fault` with these bodies (the Go
    runner's `stubFaultBody`, sdks/go/internal/conformance/faults.go): keep every one working."""

    @pytest.mark.parametrize(
        ("fault", "status"),
        [
            ({"mode": "401", "applyTo": "flags"}, 401),
            ({"mode": "429", "applyTo": "flags"}, 429),
            ({"mode": "500", "applyTo": "flags"}, 500),
            ({"mode": "invalid_json", "applyTo": "flags", "body": "{not json"}, 200),
            ({"mode": "delay", "delayMs": 10, "applyTo": "flags"}, 200),
            ({"mode": "quota_limited", "applyTo": "flags"}, 200),
        ],
    )
    def test_each_fault_body_arms_and_fires_on_flags(
        self, kit_stub: SpawnedStub, fault: Json, status: int
    ) -> None:
        kit_stub.post("/_test/reset")
        assert kit_stub.post("/_test/fault", fault)["ok"] is True
        request = urllib.request.Request(
            kit_stub.url + "/flags/?v=2",
            data=json.dumps({"api_key": "phc_x", "distinct_id": "u"}).encode(),
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:
                got, body = answer.status, answer.read()
        except urllib.error.HTTPError as exc:
            with exc:
                got, body = exc.code, exc.read()
        assert got == status
        if fault["mode"] == "invalid_json":
            assert body == b"{not json"
        if fault["mode"] == "quota_limited":
            assert json.loads(body)["quotaLimited"] == ["feature_flags"]
        kit_stub.post("/_test/reset")
