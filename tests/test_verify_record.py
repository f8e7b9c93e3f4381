"""`svc-stub record` and `svc-stub verify` against a real server: the upstream is a second
svc-stub that refuses every key but its own (as the service does), or a small server of the
test's own that differs from it in known ways."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web
from fireweave import EvaluationContext, FlagType

import foreign_upstream
from conftest import (
    HANG_GUARD_S,
    SERVICE_RUNTIME_KEY,
    SERVICE_VENDOR_KEY,
    OpenFireweave,
    SpawnedStub,
    free_port,
    one_line,
    real_service,
    run_stub,
    spawn_stub,
)
from foreign_upstream import ForeignUpstream
from stub.fixtures import load_fixture_file
from stub.upstream.comparison import Difference, accepted_key
from stub.upstream.record import RECORDED_ORG_KEY, RECORDING_CONTEXT

ROOT = Path(__file__).resolve().parent.parent
RUNTIME_KEY = SERVICE_RUNTIME_KEY  # the service's own keys: it refuses any other
VENDOR_KEY = SERVICE_VENDOR_KEY
ORG_KEY = "svc_org_acme_admin"
FLAGS = """\
flags:
  staging-banner: {type: string, value: from-staging, variant: from-staging}
  staging-limit: {type: number, value: 42, metadata: {version: 3}}
  staging-on: {type: boolean, value: true}
  staging-config: {type: object, value: {a: 1}, payload: {p: 2}}
  staging-off: {type: boolean, value: false, enabled: false}
  staging-split: {type: string, value: b, variant: b, reason: TARGETING_MATCH}
  staging-enterprise: {type: boolean, value: true, matchAttribute: {plan: enterprise}}
"""
KEYS = ("--runtime-key", RUNTIME_KEY, "--org-key", ORG_KEY)


def svc_stub(*args: str) -> subprocess.CompletedProcess[str]:
    return run_stub(*args, cwd=ROOT, timeout=120)


def lines_of(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """verify's output: each probe's name to its line."""
    found = {}
    for line in done.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("SAME", "DIFFERS", "ACCEPTED", "SKIPPED"):
            found[rest.strip().partition(":")[0]] = line
    return found


@pytest.fixture(scope="module")
def flags_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("service") / "flags.yaml"
    path.write_text(FLAGS, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def service(flags_file: Path) -> Iterator[SpawnedStub]:
    """The "real service": its own flags and organisations, only its own keys, strict."""
    management = ROOT / "tests" / "fixtures" / "management.yaml"
    with real_service(
        "--fixtures", str(flags_file), "--fixtures", str(management), "--strict-keys"
    ) as stub:
        yield stub


class TestRecord:
    def test_the_file_loads_and_serves_what_the_service_answered(
        self, service: SpawnedStub, tmp_path: Path, open_fireweave: OpenFireweave
    ) -> None:
        out = tmp_path / "recorded.yaml"
        done = svc_stub("record", "--upstream", service.url, *KEYS, "--out", str(out))
        assert done.returncode == 0, done.stderr
        text = out.read_text(encoding="utf-8")
        assert RUNTIME_KEY not in text
        assert ORG_KEY not in text
        assert RUNTIME_KEY not in done.stdout + done.stderr
        recorded = load_fixture_file(out)
        assert set(recorded.flags) == {
            "staging-banner",
            "staging-limit",
            "staging-on",
            "staging-config",
            "staging-off",
            "staging-split",
            "staging-enterprise",  # not served to this context: kept, matching no context
        }
        context = EvaluationContext(targeting_key=RECORDING_CONTEXT)
        reads = [
            ("staging-banner", FlagType.STRING, "x"),
            ("staging-limit", FlagType.FLOAT, 0.0),
            ("staging-on", FlagType.BOOLEAN, False),
            ("staging-config", FlagType.OBJECT, {}),
            ("staging-off", FlagType.BOOLEAN, True),
            ("staging-split", FlagType.STRING, "x"),
            ("staging-enterprise", FlagType.BOOLEAN, False),
        ]
        with spawn_stub("--fixtures", str(out), read_log=False) as served:
            _, _, from_service = open_fireweave(service.url, RUNTIME_KEY)
            _, _, from_file = open_fireweave(served.url, RUNTIME_KEY)
            for key, kind, default in reads:
                want = from_service.control_points.get_details(key, kind, default, context)
                got = from_file.control_points.get_details(key, kind, default, context)
                assert (got.value, got.variant, got.reason, got.flag_metadata) == (
                    want.value,
                    want.variant,
                    want.reason,
                    want.flag_metadata,
                ), key
            whoami = served_json(served.url + "/v1/whoami", RECORDED_ORG_KEY)
            assert (whoami["orgId"], whoami["scope"]) == ("org_acme", "org:management")

    def test_only_the_flags_asked_for(self, service: SpawnedStub, tmp_path: Path) -> None:
        out = tmp_path / "one.yaml"
        done = svc_stub(
            "record", "--upstream", service.url, "--runtime-key", RUNTIME_KEY,
            "--flag", "staging-on", "--out", str(out),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        recorded = load_fixture_file(out)
        assert (list(recorded.flags), recorded.management) == (["staging-on"], None)

    def test_a_refused_key_is_one_line(self, service: SpawnedStub, tmp_path: Path) -> None:
        done = svc_stub(
            "record", "--upstream", service.url, "--runtime-key", "project-api-key_wrong",
            "--out", str(tmp_path / "x.yaml"),
        )  # fmt: skip
        line = one_line(done, "record")
        assert line.startswith("svc-stub record: error: POST /v1/flags/evaluate answered 401")
        assert "wrong" not in line


def served_json(url: str, key: str) -> Any:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=HANG_GUARD_S) as answer:
        return json.load(answer)


class TestVerifyAgainstAnIdenticalUpstream:
    def test_a_recording_of_the_service_answers_as_it_does_even_with_writes(
        self, service: SpawnedStub, tmp_path: Path
    ) -> None:
        report = tmp_path / "report.json"
        done = svc_stub(
            "verify", "--upstream", service.url, *KEYS, "--vendor-key", VENDOR_KEY,
            "--ci-read-key", "svc_org_acme_ci", "--allow-writes", "--report", str(report),
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        lines = lines_of(done)
        assert lines["ci-read/whoami"].startswith("SAME")
        assert lines["scratch/delete-project"].startswith("SAME")
        assert [line for line in lines.values() if not line.startswith(("SAME", "SKIPPED"))] == []
        assert len([line for line in lines.values() if line.startswith("SAME")]) >= 35
        probes = json.loads(report.read_text())["probes"]
        assert len(probes) == len(lines)
        assert {p["outcome"] for p in probes} == {"same"}  # every probe ran, and agreed
        for secret in (RUNTIME_KEY, ORG_KEY, VENDOR_KEY, "svc_org_acme_ci"):
            assert secret not in done.stdout + done.stderr + report.read_text()
        projects = served_json(service.url + "/v1/projects", ORG_KEY)["projects"]
        assert not [p for p in projects if p["slug"].startswith("svc-stub-verify")]

    def test_a_value_changed_since_the_recording_is_reported(
        self, service: SpawnedStub, tmp_path: Path
    ) -> None:
        out = tmp_path / "recorded.yaml"
        assert (
            svc_stub("record", "--upstream", service.url, *KEYS, "--out", str(out)).returncode == 0
        )
        out.write_text(out.read_text().replace("value: 42", "value: 41"), encoding="utf-8")
        done = svc_stub("verify", "--upstream", service.url, *KEYS, "--fixtures", str(out))
        assert done.returncode == 1
        line = lines_of(done)["evaluate/type-number"]
        assert line.startswith("DIFFERS  evaluate/type-number: ")
        assert "body.decisions[flagKey=staging-limit].value: 42 (upstream) vs 41 (stub)" in line


def differing_server(base: str) -> Callable[[], contextlib.AbstractContextManager[str]]:
    """A server that forwards to `base` (a svc-stub) and answers six probes differently."""

    async def forward(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if request.headers.get("Authorization") == f"Bearer {ECHOED_KEY}":  # a careless service
            said = {"ok": False, "error": "UNAUTHORIZED", "message": f"key {ECHOED_KEY} revoked"}
            return web.json_response(said, status=401)
        if request.method == "PATCH":  # slow writes: time for a CI timeout to strike
            await asyncio.sleep(3)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host",)}
        async with (
            aiohttp.ClientSession() as client,
            client.request(
                request.method, base + request.path_qs, headers=headers, data=body or None
            ) as answer,
        ):
            payload = await answer.read()
            relayed = {
                k: v
                for k, v in answer.headers.items()
                if k.lower() in ("content-type", "etag", "retry-after", "allow")
            }
            status = answer.status
        document, asked = parsed(payload), parsed(body) or {}
        return planted(request, asked, status, document, relayed) or web.Response(
            status=status, body=payload, headers=relayed
        )

    def planted(
        request: web.Request, asked: Any, status: int, document: Any, headers: dict[str, str]
    ) -> web.Response | None:
        path, keys = request.path, asked.get("flagKeys") if isinstance(asked, dict) else None
        if path == "/v1/flags/evaluate" and keys == ["svc-stub-verify-missing-flag"]:
            return web.json_response(document, status=404)  # a status
        if path == "/v1/flags/evaluate" and keys == ["staging-limit"] and status == 200:
            del document["quotaLimited"]  # a missing member
            return web.json_response(document)
        if path == "/v1/flags/evaluate" and isinstance(keys, list) and len(keys) == 3:
            document["requestId"] = 7  # a member of another type
            return web.json_response(document)
        if path.endswith("/control-points") and status == 200:
            return web.json_response({**document, "extra": True})  # an extra member
        if path.startswith("/v1/projects/proj_svcstubverifymissing"):
            envelope = {"ok": False, "error": "NOT_FOUND", "message": "gone"}  # another envelope
            return web.json_response(envelope, status=404)
        if path == "/v1/whoami" and "Authorization" not in request.headers:
            return web.Response(status=status, text=json.dumps(document))  # another media type
        if path == "/api/feature_flag/local_evaluation":
            return web.json_response(document, status=status)  # no ETag
        return None

    def parsed(raw: bytes) -> Any:
        try:
            return json.loads(raw)
        except ValueError:
            return None

    @contextlib.contextmanager
    def served() -> Iterator[str]:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", forward)
        loop = asyncio.new_event_loop()
        runner = web.AppRunner(app)
        loop.run_until_complete(runner.setup())
        port = free_port()
        loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(5)
            loop.run_until_complete(runner.cleanup())
            loop.close()

    return served


PLANTED = {
    "evaluate/missing-flag": "status: 404 (upstream) vs 200 (stub)",
    "evaluate/type-number": "body.quotaLimited: absent (upstream) vs present (stub)",
    "evaluate/several": "body.requestId: number (upstream) vs string (stub)",
    "management/control-points": "body.extra: present (upstream) vs absent (stub)",
    "management/unknown-project": "body.error: string (upstream) vs object (stub)",
    "auth/management-no-key": (
        'header Content-Type: "text/plain" (upstream) vs "application/json" (stub)'
    ),
    "vendor/definitions-local-evaluation": "header ETag: null (upstream) vs present (stub)",
}


@pytest.fixture(scope="module")
def differing(service: SpawnedStub) -> Iterator[str]:
    with differing_server(service.url)() as url:
        yield url


class TestVerifyAgainstAServerThatDiffers:
    def verify(self, differing: str, service: SpawnedStub, *more: str) -> Any:
        return svc_stub(
            "verify", "--upstream", differing, *KEYS, "--vendor-key", VENDOR_KEY,
            "--stub", service.url, "--stub-runtime-key", RUNTIME_KEY,
            "--stub-vendor-key", VENDOR_KEY, "--stub-org-key", ORG_KEY, *more,
        )  # fmt: skip

    def test_each_planted_difference_is_reported_in_its_probe_and_nothing_else(
        self, differing: str, service: SpawnedStub
    ) -> None:
        done = self.verify(differing, service)
        assert done.returncode == 1, done.stderr
        lines = lines_of(done)
        differing_probes = {name for name, line in lines.items() if line.startswith("DIFFERS")}
        assert differing_probes == set(PLANTED)
        for name, difference in PLANTED.items():
            assert difference in lines[name], lines[name]
        assert done.stdout.strip().splitlines()[-1].startswith(f"{len(lines)} probes: ")

    def test_accepted_differences_fail_only_when_new_ones_appear(
        self, differing: str, service: SpawnedStub, tmp_path: Path
    ) -> None:
        baseline = tmp_path / "accepted.json"
        written = self.verify(differing, service, "--write-accepted", str(baseline))
        assert written.returncode == 0
        accepted = json.loads(baseline.read_text())["accepted"]
        assert {entry["probe"] for entry in accepted} == set(PLANTED)
        again = self.verify(differing, service, "--accept", str(baseline))
        assert again.returncode == 0, again.stdout
        accepted_lines = [line for line in lines_of(again).values() if line.startswith("ACCEPTED")]
        assert len(accepted_lines) == len(PLANTED)
        document = json.loads(baseline.read_text())
        dropped = "management/control-points"
        document["accepted"] = [e for e in document["accepted"] if e["probe"] != dropped]
        baseline.write_text(json.dumps(document))
        drifted = self.verify(differing, service, "--accept", str(baseline))
        assert drifted.returncode == 1
        assert lines_of(drifted)[dropped].startswith("DIFFERS")


ECHOED_KEY = "project-api-key_echoed"


class TestInterruptionsAndMishaps:
    def test_a_sigterm_mid_run_still_removes_the_scratch_project(
        self, differing: str, service: SpawnedStub
    ) -> None:
        running = subprocess.Popen(
            [sys.executable, "-m", "stub", "verify", "--upstream", differing, *KEYS,
             "--allow-writes"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 30
            while not scratch_projects(service):  # created: the slow patch comes next
                assert time.monotonic() < deadline, "verify never made its scratch project"
                time.sleep(0.05)
            running.send_signal(signal.SIGTERM)
            _, said = running.communicate(timeout=30)
        finally:
            running.kill()
        assert running.returncode == 130
        assert said.strip() == "svc-stub verify: interrupted (scratch data removed)"
        assert scratch_projects(service) == []

    def test_a_key_the_service_echoes_is_not_repeated(self, differing: str, tmp_path: Path) -> None:
        done = svc_stub(
            "record", "--upstream", differing, "--runtime-key", ECHOED_KEY,
            "--out", str(tmp_path / "x.yaml"),
        )  # fmt: skip
        line = one_line(done, "record")
        assert "key project-api-key_[redacted] revoked" in line
        assert ECHOED_KEY not in done.stdout + done.stderr

    def test_the_stub_it_starts_takes_none_of_verifys_environment(
        self, service: SpawnedStub
    ) -> None:
        """SVC_STUB_UPSTREAM is verify's --upstream; the stub it starts must not proxy."""
        environment = {
            **os.environ,
            "SVC_STUB_UPSTREAM": service.url,
            "SVC_STUB_RUNTIME_KEY": RUNTIME_KEY,
            "SVC_STUB_ORG_KEY": ORG_KEY,
            "SVC_STUB_VENDOR_KEY": VENDOR_KEY,
        }
        done = run_stub("verify", cwd=ROOT, env=environment, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        assert " 0 differ" in done.stdout.splitlines()[-1]

    def test_an_accepted_difference_that_drifts_again_is_new(self) -> None:
        first = Difference("body.value", 42, 41)
        again = Difference("body.value", 43, 41)
        assert accepted_key("evaluate/all", first) != accepted_key("evaluate/all", again)


def scratch_projects(service: SpawnedStub) -> list[str]:
    projects = served_json(service.url + "/v1/projects", ORG_KEY)["projects"]
    return [p["slug"] for p in projects if p["slug"].startswith("svc-stub-verify")]


class TestVerifyUsage:
    @pytest.mark.parametrize(
        ("arguments", "said"),
        [
            (["--upstream", "http://staging.example"], "is plain http off loopback"),
            ([], "Missing option '--upstream'"),
            (["--upstream", "http://127.0.0.1:1"], "did not answer (cannot connect"),
        ],
    )
    def test_a_usage_error_or_an_unreachable_upstream_is_one_line_and_exit_2(
        self, arguments: list[str], said: str
    ) -> None:
        done = svc_stub("verify", *arguments, "--runtime-key", "project-api-key_TOPSECRET")
        assert said in one_line(done, "verify")
        assert "TOPSECRET" not in done.stdout + done.stderr


# Against a foreign upstream: software svc-stub did not write, answering in shapes it never does


@pytest.fixture(scope="module")
def foreign_server() -> Iterator[ForeignUpstream]:
    with foreign_upstream.running() as server:
        yield server


@pytest.fixture
def foreign(foreign_server: ForeignUpstream) -> ForeignUpstream:
    """The foreign upstream as the plain service, with nothing received yet."""
    foreign_server.reset()
    return foreign_server


FOREIGN_KEYS = (
    "--runtime-key", foreign_upstream.RUNTIME_KEY,
    "--vendor-key", foreign_upstream.VENDOR_KEY,
    "--org-key", foreign_upstream.ORG_KEY,
)  # fmt: skip


def against(foreign: ForeignUpstream, command: str, *more: str) -> Any:
    return svc_stub(command, "--upstream", foreign.url, *FOREIGN_KEYS, *more)


def no_key_in(*texts: str) -> None:
    """No key of the foreign service, in any case, whole or in a telling piece: its end, and
    the start of the one of no known family (a family's prefix is shown on purpose)."""
    seen = "\n".join(texts).lower()
    pieces = [*foreign_upstream.KEYS, *(key[-6:] for key in foreign_upstream.KEYS)]
    pieces.append(foreign_upstream.ORG_KEY[:12])
    for piece in pieces:
        assert piece.lower() not in seen, piece


class TestEverySpellingOfTheVendorRoutes:
    def test_record_keeps_the_definitions_of_a_service_serving_only_the_new_path(
        self, foreign: ForeignUpstream, tmp_path: Path
    ) -> None:
        out = tmp_path / "recorded.yaml"
        done = against(foreign, "record", "--out", str(out))
        assert done.returncode == 0, done.stderr
        assert load_fixture_file(out).vendor_definitions == foreign_upstream.DEFINITIONS
        header = [line for line in out.read_text().splitlines() if line.startswith("#")]
        assert any(
            line.startswith("# vendor definitions: recorded from GET /flags/definitions?")
            for line in header
        ), header
        polls = [path for path in foreign.paths() if path.startswith("/flags/definitions?")]
        assert polls == [f"/flags/definitions?token={foreign_upstream.VENDOR_KEY}&send_cohorts"]

    def test_verify_probes_each_spelling_and_says_which_the_service_answered(
        self, foreign: ForeignUpstream
    ) -> None:
        lines = lines_of(against(foreign, "verify"))
        assert lines["vendor/definitions"].startswith("SAME")
        for spelling in ("vendor/definitions-local-evaluation", "vendor/flags-no-slash"):
            assert lines[spelling] == (
                f"SKIPPED  {spelling}: the upstream does not serve this spelling (404)"
            )
        assert lines["vendor/flags-v4"].startswith("SAME")


class TestTheKeyTheStubIsSent:
    @pytest.mark.parametrize(
        ("fixtures", "said"),
        [
            (None, "svc_org_default, the default organisation's (flags.yaml: no management:"),
            ("management.yaml", "svc_org_[redacted], from the management: section of"),
        ],
    )
    def test_the_stub_gets_a_management_key_it_serves_and_the_header_says_which(
        self, foreign: ForeignUpstream, flags_file: Path, fixtures: str | None, said: str
    ) -> None:
        files = [flags_file] if fixtures is None else [ROOT / "tests" / "fixtures" / fixtures]
        chosen = [arg for path in files for arg in ("--fixtures", str(path))]
        done = against(foreign, "verify", *chosen)
        assert f"\nstub management key: {said}" in done.stdout
        whoami = lines_of(done)["management/whoami"]
        assert "status" not in whoami, whoami


class TestNoProbeSendsAPlaceholder:
    def test_a_scratch_project_the_service_did_not_make_skips_the_probes_that_need_it(
        self, foreign: ForeignUpstream
    ) -> None:
        refused = {"error": {"code": "INTERNAL", "message": "no projects today"}}
        foreign.answer("POST", "/v1/projects", foreign_upstream.json_reply(refused, 500))
        done = against(foreign, "verify", "--allow-writes")
        sent = " ".join(foreign.paths()).lower()
        assert "{" not in sent, sent
        assert "%7b" not in sent, sent
        lines = lines_of(done)
        assert lines["scratch/create-project"].startswith("DIFFERS")
        for name in ("scratch/project", "scratch/environment", "scratch/delete-project"):
            assert lines[name] == (
                f"SKIPPED  {name}: no {{scratch}} on the upstream: scratch/create-project "
                "did not make one"
            )


INGESTING = ("/v1/capture", "/batch", "/batch/", "/v1/targets/register")
"""Routes that store what they are sent: a permissive service keeps even an empty batch."""
ONLY_EVALUATING = ("/v1/flags/evaluate", "/flags/", "/flags")
"""The only routes a read-only run may POST to: they answer, and store nothing."""


def route_of(seen: foreign_upstream.Received) -> str:
    return seen.raw_path.partition("?")[0]


class TestReadOnlyUnlessAllowed:
    def test_without_allow_writes_no_request_reaches_a_route_that_ingests(
        self, foreign: ForeignUpstream
    ) -> None:
        done = against(foreign, "verify")
        assert " probes: " in done.stdout.strip().splitlines()[-1], done.stdout + done.stderr
        ingested = [seen for seen in foreign.received if route_of(seen) in INGESTING]
        assert ingested == []
        beyond_reads = {
            f"{seen.method} {route_of(seen)}"
            for seen in foreign.received
            if seen.method != "GET" and route_of(seen) not in ONLY_EVALUATING
        }
        assert beyond_reads == set()

    def test_without_allow_writes_each_probe_to_an_ingesting_route_is_skipped_saying_why(
        self, foreign: ForeignUpstream
    ) -> None:
        lines = lines_of(against(foreign, "verify"))
        ingesting = ("capture/valid", "capture/empty", "capture/bad", "register/target")
        for name in (*ingesting, "vendor/batch", "vendor/batch-no-slash"):
            assert lines[name] == f"SKIPPED  {name}: writes only with --allow-writes"

    def test_the_read_only_header_names_the_probes_left_out_and_why_in_one_line(
        self, foreign: ForeignUpstream
    ) -> None:
        done = against(foreign, "verify")
        (said,) = [
            line for line in done.stdout.splitlines() if line.startswith("writes to the service")
        ]
        assert said == (
            "writes to the service: nothing (read-only; left out, as their routes store what "
            "they are sent, even an empty or malformed batch: capture/*, vendor/batch, "
            "vendor/batch-no-slash, register/target, scratch/*; --allow-writes sends them)"
        )

    def test_with_allow_writes_the_ingesting_probes_are_sent_and_compared(
        self, foreign: ForeignUpstream
    ) -> None:
        lines = lines_of(against(foreign, "verify", "--allow-writes"))
        for name in ("capture/empty", "capture/bad", "vendor/batch", "register/target"):
            assert not lines[name].startswith("SKIPPED"), lines[name]
        sent = {route_of(seen) for seen in foreign.received if seen.method == "POST"}
        assert {"/v1/capture", "/batch/", "/batch", "/v1/targets/register"} <= sent

    def test_with_allow_writes_the_header_says_the_signal_is_kept(
        self, foreign: ForeignUpstream
    ) -> None:
        done = against(foreign, "verify", "--allow-writes")
        assert "one signal captured (capture/valid)" in done.stdout
        signals = [
            seen for seen in foreign.received if seen.raw_path == "/v1/capture" and
            isinstance(seen.json()["events"], list) and seen.json()["events"]
        ]  # fmt: skip
        assert len(signals) == 1


def echoing_evaluate(foreign: ForeignUpstream) -> foreign_upstream.Reply:
    """The service's evaluate, but for a body that is not JSON: then its error code echoes
    the keys (upper-cased, and one cut where verify shows only 80 characters)."""
    code = f"BAD {foreign_upstream.RUNTIME_KEY.upper()} {'x' * 38} {foreign_upstream.ORG_KEY}"

    async def reply(request: web.Request, body: bytes) -> web.StreamResponse:
        if foreign_upstream.Received("", "", {}, body).json() is None:
            return await foreign_upstream.json_reply({"ok": False, "error": code}, 400)(
                request, body
            )
        return await foreign.evaluate(request, body)

    return reply


class TestNoKeyInAFileWritten:
    def test_a_recording_of_a_service_that_echoes_keys_holds_none_in_any_form(
        self, foreign: ForeignUpstream, tmp_path: Path
    ) -> None:
        runtime, vendor, org = foreign_upstream.KEYS
        escaped = "".join(f"\\u{ord(c):04x}" for c in org).encode()
        cut = ("m" * 180 + " " + org)[:200]
        foreign.answer(
            "POST",
            "/v1/flags/evaluate",
            foreign_upstream.raw_reply(
                foreign_upstream.evaluate_answer(
                    orjson.dumps(foreign_upstream.decision("upper", f"key {runtime.upper()}")),
                    orjson.dumps(foreign_upstream.decision("cut", True, payload={"said": cut})),
                    b'{"flagKey": "escaped", "found": true, "value": "' + escaped + b'"}',
                    orjson.dumps(foreign_upstream.decision("json", json.dumps({"t": vendor}))),
                )
            ),
        )
        whoami = {"userId": org, "orgId": "org_foreign", "scope": "org:management"}
        foreign.answer("GET", "/v1/whoami", foreign_upstream.json_reply(whoami))
        out = tmp_path / "recorded.yaml"
        done = against(foreign, "record", "--out", str(out))
        assert done.returncode == 0, done.stderr
        no_key_in(out.read_text(encoding="utf-8"), done.stdout, done.stderr)
        recorded = load_fixture_file(out)
        assert recorded.flags["upper"].value == "key project-api-key_[redacted]"
        assert recorded.flags["escaped"].value == "[redacted]"

    def test_a_baseline_of_differences_that_echo_keys_holds_none_and_still_accepts_them(
        self, foreign: ForeignUpstream, tmp_path: Path
    ) -> None:
        foreign.answer("POST", "/v1/flags/evaluate", echoing_evaluate(foreign))
        baseline, report = tmp_path / "accepted.json", tmp_path / "report.json"
        written = against(
            foreign, "verify", "--write-accepted", str(baseline), "--report", str(report)
        )
        assert written.returncode == 0, written.stderr
        assert lines_of(written)["evaluate/malformed-body"].startswith("DIFFERS")
        no_key_in(baseline.read_text(), report.read_text(), written.stdout, written.stderr)
        again = against(foreign, "verify", "--accept", str(baseline))
        assert again.returncode == 0, again.stdout
        assert lines_of(again)["evaluate/malformed-body"].startswith("ACCEPTED")


class TestTheHeaderIsNeverYaml:
    @pytest.mark.parametrize("breaking", ["\n", "\r", "\u2028", "\x85"])
    def test_a_flag_key_or_reason_with_a_line_break_stays_in_its_comment(
        self, foreign: ForeignUpstream, tmp_path: Path, breaking: str
    ) -> None:
        injected = f"x{breaking}keys:{breaking}  strict: true{breaking}  accepted: [{{key: k}}]"
        foreign.decisions.append(
            {"flagKey": injected, "found": False, "value": None, "reason": injected}
        )
        foreign.decisions.append(foreign_upstream.decision(f"served{breaking}flag", True))
        out = tmp_path / "recorded.yaml"
        done = against(foreign, "record", "--out", str(out))
        assert done.returncode == 0, done.stderr
        recorded = load_fixture_file(out)
        assert recorded.keys is None
        assert {injected, f"served{breaking}flag"} <= set(recorded.flags)


class TestOneLineNeverATraceback:
    def test_a_value_nested_four_hundred_levels_deep(
        self, foreign: ForeignUpstream, tmp_path: Path
    ) -> None:
        deep = b'{"flagKey": "deep", "found": true, "value": ' + foreign_upstream.nested_json(400)
        answer = foreign_upstream.evaluate_answer(deep + b"}")
        foreign.answer("POST", "/v1/flags/evaluate", foreign_upstream.raw_reply(answer))
        done = against(foreign, "record", "--out", str(tmp_path / "x.yaml"))
        line = one_line(done, "record")
        assert 'flag "deep"\'s value nests more than 250 levels deep' in line
        assert "--flag" in line
        assert not (tmp_path / "x.yaml").exists()

    @pytest.mark.parametrize("command", ["record", "verify", "server"])
    @pytest.mark.parametrize(
        "address", ["http://a\\@127.0.0.1:1", "http://[::1", "http://127.0.0.1:99999"]
    )
    def test_a_malformed_upstream_address(self, command: str, address: str, tmp_path: Path) -> None:
        if command == "server":
            done = svc_stub("--port", "0", "--upstream", address)
            assert one_line(done).startswith("svc-stub: error: --upstream: ")
            return
        out = ("--out", str(tmp_path / "x.yaml")) if command == "record" else ()
        done = svc_stub(command, "--upstream", address, "--runtime-key", "k" * 8, *out)
        assert "not a valid address" in one_line(done, command) or "port" in done.stderr


class TestNoDotSegmentReachesTheUpstream:
    @pytest.mark.parametrize("target", ["/v1/..%2f..%2fx", "/v1/..%5cx", "/v1/..;/x"])
    def test_an_encoded_or_parameterised_dot_segment_is_refused_under_a_prefix(
        self, foreign: ForeignUpstream, target: str
    ) -> None:
        with spawn_stub("--upstream", foreign.url + "/prefix", read_log=False) as proxy:
            connection = http.client.HTTPConnection(
                proxy.url.removeprefix("http://"), timeout=HANG_GUARD_S
            )
            try:
                connection.request("GET", target, headers={"Authorization": "Bearer k"})
                answer = connection.getresponse()
                said = json.loads(answer.read())
            finally:
                connection.close()
        assert answer.status == 400
        assert "'..' segment is not forwarded" in said["message"]
        assert foreign.received == []


class TestWhatTheToolsRead:
    def test_an_answer_past_the_bound_given_is_one_line_naming_the_option(
        self, foreign: ForeignUpstream, tmp_path: Path
    ) -> None:
        endless = foreign_upstream.oversized_reply(4 * 1024 * 1024, declared=False)
        foreign.answer("POST", "/v1/flags/evaluate", endless)
        done = against(
            foreign, "record", "--max-answer-bytes", "65536", "--out", str(tmp_path / "x.yaml")
        )
        assert one_line(done, "record") == (
            "svc-stub record: error: POST /v1/flags/evaluate: the answer is larger than 65,536 "
            "bytes, the most record and verify read; raise it with --max-answer-bytes"
        )

    def test_by_default_an_answer_past_sixty_four_mebibytes_is_refused_unread(
        self, foreign: ForeignUpstream
    ) -> None:
        declared = foreign_upstream.oversized_reply(70 * 1024 * 1024, declared=True)
        foreign.answer("POST", "/v1/flags/evaluate", declared)
        line = one_line(against(foreign, "verify"), "verify")
        assert "larger than 67,108,864 bytes" in line
        assert line.endswith("raise it with --max-answer-bytes")
