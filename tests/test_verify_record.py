"""`svc-stub record` and `svc-stub verify` against a real server: the upstream is a second
svc-stub that refuses every key but its own (as the service does), or a small server of the
test's own that differs from it in known ways."""

from __future__ import annotations

import asyncio
import contextlib
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
import pytest
from aiohttp import web
from fireweave import EvaluationContext, FlagType

from conftest import OpenFireweave, SpawnedStub, free_port, spawn_stub
from stub.fixtures import load_fixture_file
from stub.upstream.record import RECORDED_ORG_KEY, RECORDING_CONTEXT
from stub.upstream.verify import Difference, accepted_key

ROOT = Path(__file__).resolve().parent.parent
RUNTIME_KEY = "project-api-key_staging"
VENDOR_KEY = "phc_staging"
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
    return subprocess.run(
        [sys.executable, "-m", "stub", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


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
    with spawn_stub(
        "--fixtures",
        str(flags_file),
        "--fixtures",
        str(ROOT / "tests" / "fixtures" / "management.yaml"),
        "--api-key",
        RUNTIME_KEY,
        "--api-key",
        VENDOR_KEY,
        "--strict-keys",
        read_log=False,
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
        assert done.returncode == 2
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("svc-stub record: error: POST /v1/flags/evaluate answered 401")
        assert "wrong" not in line


def served_json(url: str, key: str) -> Any:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=5) as answer:
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
        if path == "/v1/capture" and asked.get("events") and status == 200:
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
    "capture/valid": "body.extra: present (upstream) vs absent (stub)",
    "management/unknown-project": "body.error: string (upstream) vs object (stub)",
    "auth/management-no-key": (
        'header Content-Type: "text/plain" (upstream) vs "application/json" (stub)'
    ),
    "vendor/definitions": "header ETag: null (upstream) vs present (stub)",
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
        document["accepted"] = [e for e in document["accepted"] if e["probe"] != "capture/valid"]
        baseline.write_text(json.dumps(document))
        drifted = self.verify(differing, service, "--accept", str(baseline))
        assert drifted.returncode == 1
        assert lines_of(drifted)["capture/valid"].startswith("DIFFERS")


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
        assert done.returncode == 2
        (line,) = done.stderr.strip().splitlines()
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
        done = subprocess.run(
            [sys.executable, "-m", "stub", "verify"],
            cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
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
        assert done.returncode == 2
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("svc-stub verify: error: ")
        assert said in line
        assert "TOPSECRET" not in done.stdout + done.stderr
