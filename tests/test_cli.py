"""The `svc-stub` command as a process: ready line, options, exit codes, signals, logging."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

import stub
from conftest import HANG_GUARD_S, SpawnedStub, free_port, one_line, run_stub, spawn_stub
from stub.process import url_of

ROOT = Path(__file__).resolve().parent.parent
STUB = [sys.executable, "-m", "stub"]


def evaluate(stub: SpawnedStub, key: str, api_key: str = "k") -> dict[str, object]:
    request = urllib.request.Request(
        stub.url + "/v1/flags/evaluate",
        data=json.dumps({"targetingKey": "u", "flagKeys": [key]}).encode(),
        headers={"Authorization": f"Bearer {api_key}"},
    )
    with urllib.request.urlopen(request, timeout=HANG_GUARD_S) as response:
        return json.load(response)["decisions"][0]  # type: ignore[no-any-return]


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


class TestReadyLine:
    def test_port_zero_binds_a_free_loopback_port_and_says_so_first(self) -> None:
        with spawn_stub() as stub:
            host, port = stub.url.removeprefix("http://").rsplit(":", 1)
            assert host == "127.0.0.1"
            assert int(port) > 0
            assert stub.get("/health") == {"ok": True}

    def test_python_dash_m_and_the_console_script_are_the_same_command(self) -> None:
        script = Path(sys.executable).with_name("svc-stub")
        out = subprocess.run([str(script), "--version"], capture_output=True, text=True)
        assert out.returncode == 0
        assert out.stdout == run_stub("--version").stdout
        assert "svc-stub" in out.stdout

    def test_the_default_fixtures_are_served_from_any_directory(self, tmp_path: Path) -> None:
        process = subprocess.Popen(
            [*STUB, "--port", "0"], cwd=tmp_path, stdout=subprocess.PIPE, text=True
        )
        try:
            assert process.stdout is not None
            url = url_of(process.stdout.readline())
            assert url is not None
            stub = SpawnedStub(process, url)
            assert evaluate(stub, "checkout-v2")["value"] == "treatment-b"
        finally:
            process.terminate()
            process.wait(timeout=HANG_GUARD_S)
            process.stdout.close()  # type: ignore[union-attr]


class TestFixtureOptions:
    def test_files_and_directories_load_in_order_later_wins(self, tmp_path: Path) -> None:
        directory = tmp_path / "dir"
        directory.mkdir()
        (directory / "a.yaml").write_text(
            "flags: {x: {type: number, value: 1}, y: {type: number, value: 1}}"
        )
        (directory / "b.json").write_text('{"flags": {"y": {"type": "number", "value": 2}}}')
        last = tmp_path / "last.yml"
        last.write_text("flags: {x: {type: number, value: 3}}")
        with spawn_stub("--fixtures", str(directory), "--fixtures", str(last)) as stub:
            assert (evaluate(stub, "x")["value"], evaluate(stub, "y")["value"]) == (3, 2)
            assert evaluate(stub, "new-checkout")["found"] is False


class TestApiKeyOption:
    def test_only_configured_keys_are_accepted(self) -> None:
        with spawn_stub("--api-key", "one", "--api-key", "two") as stub:
            assert evaluate(stub, "new-checkout", api_key="two")["found"] is True
            with pytest.raises(urllib.error.HTTPError) as refused:
                evaluate(stub, "new-checkout", api_key="three")
            assert refused.value.code == 401
            refused.value.close()


class TestControlTokenOption:
    def test_a_given_token_guards_the_control_plane(self) -> None:
        with spawn_stub("--control-token", "ctl") as stub:
            with pytest.raises(urllib.error.HTTPError) as refused:
                stub.get("/_test/events")
            assert refused.value.code == 401
            refused.value.close()
            request = urllib.request.Request(
                stub.url + "/_test/events", headers={"Authorization": "Bearer ctl"}
            )
            with urllib.request.urlopen(request, timeout=HANG_GUARD_S) as response:
                assert response.status == 200


class TestConfigurationErrors:
    """Exit 2, exactly one line on stderr, nothing on stdout, never a traceback."""

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (["--bogus"], "svc-stub: error: No such option"),
            (["--port", "70000"], "svc-stub: error: Invalid value for '--port'"),
            (
                ["--port", "abc"],
                "svc-stub: error: Invalid value for '--port' (env var: 'SVC_STUB_PORT'): "
                "'abc' is not a valid integer.",
            ),
            (
                ["--host", "0.0.0.0"],
                "svc-stub: error: --host 0.0.0.0 is not a loopback address; "
                "add --allow-non-loopback",
            ),
            (["--host", "10.1.2.3"], "svc-stub: error: --host 10.1.2.3 is not a loopback address"),
            (
                ["--fixtures", "/no/such/file.yaml"],
                "svc-stub: error: /no/such/file.yaml: no such file",
            ),
            (["--api-key", ""], "svc-stub: error: --api-key: a key cannot be empty"),
            (
                ["--watch"],
                "svc-stub: error: --watch: add --fixtures FILE_OR_DIR (the shipped set never "
                "changes)",
            ),
            (["--max-recorded", "0"], "svc-stub: error: Invalid value for '--max-recorded'"),
            (
                ["--allow-origin", "localhost:5173"],
                "svc-stub: error: --allow-origin: 'localhost:5173' is not an origin: write "
                "scheme, host and port, as http://localhost:5173 (no path)",
            ),
            (
                ["--allow-origin", "http://localhost:5173/app"],
                "svc-stub: error: --allow-origin: 'http://localhost:5173/app' is not an origin",
            ),
            (
                ["--allow-host", "http://svc-stub/"],
                "svc-stub: error: --allow-host: 'http://svc-stub/' is not a host name: write it "
                "as the Host header names it, as svc-stub or svc-stub:3901",
            ),
            (["--max-namespaces", "0"], "svc-stub: error: Invalid value for '--max-namespaces'"),
            (
                ["--namespace-max-recorded", "x"],
                "svc-stub: error: Invalid value for '--namespace-max-recorded'",
            ),
            (
                ["--max-recorded-in-namespaces", "-1"],
                "svc-stub: error: Invalid value for '--max-recorded-in-namespaces'",
            ),
        ],
    )
    def test_usage_errors(self, args: list[str], message: str) -> None:
        assert one_line(run_stub(*args)).startswith(message)

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (
                ["conformance", "--adapter", "http://127.0.0.1:9", "--parallel", "x"],
                "svc-stub conformance: error: Invalid value for '--parallel': 'x' is not a "
                "valid integer.",
            ),
            (
                ["record", "--upstream", "http://127.0.0.1:9", "--runtime-key", "k", "--out",
                 "staging.yaml", "--max-answer-bytes", "x"],
                "svc-stub record: error: Invalid value for '--max-answer-bytes' (env var: "
                "'SVC_STUB_MAX_ANSWER_BYTES'): 'x' is not a valid integer.",
            ),
        ],
    )  # fmt: skip
    def test_every_command_refuses_a_word_for_a_number_alike(
        self, args: list[str], message: str
    ) -> None:
        assert one_line(run_stub(*args), args[0]) == message

    def test_the_namespace_bounds_are_the_ones_given(self) -> None:
        options = ("--max-namespaces", "1", "--namespace-max-recorded", "2")
        with spawn_stub(*options, "--max-recorded-in-namespaces", "7") as stub:
            for _ in range(3):
                stub.post("/ns/first/batch", {"api_key": "k", "batch": []})
            requests = stub.get("/ns/first/_test/requests")
            assert (len(requests["requests"]), requests["dropped"]) == (2, 1)
            stub.get("/ns/second/_test/events")  # one more namespace evicts the first
            listed = stub.get("/_test/namespaces")
            assert [n["name"] for n in listed["namespaces"]] == ["default", "second"]
            assert (listed["max"], listed["evicted"], listed["maxRecorded"]) == (1, 1, 7)

    def test_a_bad_fixture_names_the_file_and_key_path(self, tmp_path: Path) -> None:
        bad = tmp_path / "bad.yaml"
        bad.write_text("flags:\n  checkout:\n    type: string\n    value: 5\n")
        assert one_line(run_stub("--fixtures", str(bad))) == (
            f"svc-stub: error: {bad}: flags.checkout.value: expected string (type string), got 5"
        )

    @pytest.mark.parametrize(
        ("text", "said"),
        [
            (
                "flags:\n  a: {type: string, value: x}\n  a: {type: string, value: y}\n",
                "invalid YAML at line 3, column 3: the key 'a' appears twice",
            ),
            (
                "management:\n  orgs:\n    org_a: {}\n    org_a: {}\n",
                "invalid YAML at line 4, column 5: the key 'org_a' appears twice",
            ),
            (
                "",
                "empty: a fixture document holds at least one of flags, vendor, management, "
                "keys (see docs/reference/fixtures.md)",
            ),
        ],
        ids=["duplicate-flag", "duplicate-organisation", "empty"],
    )
    def test_an_ambiguous_or_empty_fixture_file_is_one_line(
        self, tmp_path: Path, text: str, said: str
    ) -> None:
        path = tmp_path / "flags.yaml"
        path.write_text(text)
        assert one_line(run_stub("--fixtures", str(path))) == f"svc-stub: error: {path}: {said}"

    def test_a_port_in_use_is_a_one_line_error(self, busy_port: int) -> None:
        assert one_line(run_stub("--port", str(busy_port))) == (
            f"svc-stub: error: cannot listen on 127.0.0.1:{busy_port}: Address already in use; "
            "another process holds the port: pick a free one with --port N, or --port 0 for any "
            "(the ready line names it)"
        )

    def test_every_example_in_help_parses(self) -> None:
        from stub.cli import command
        from stub.upstream.commands import record, verify

        helped = run_stub("--help").stdout
        examples = helped.split("Examples:")[1].split("\n\n")[0].strip().splitlines()
        assert len(examples) >= 6
        for example in examples:
            words = example.split("   ")[0].split()[1:]  # the command, less its comment
            if words[:1] == ["conformance"]:
                continue  # its own command, tested with the kit
            chosen = {"record": record, "verify": verify}.get(words[0]) if words else None
            parser = chosen or command
            parser.make_context("svc-stub", words[1:] if chosen else words)


class TestEnvironment:
    """Every option reads SVC_STUB_<OPTION>, as CI sets things; the command line wins."""

    def test_help_names_every_options_variable_and_where_the_control_plane_is(self) -> None:
        done = run_stub("--help")
        flat = " ".join(done.stdout.split())
        options = re.findall(r"^  (--[a-z-]+)", done.stdout, flags=re.M)
        assert len(options) >= 14
        for option in options:
            if option != "--version":
                assert f"SVC_STUB_{option[2:].upper().replace('-', '_')}" in flat, option
        assert (
            flat.endswith(
                "The test-control plane (/_test/...) is described in the docs "
                "(docs/reference/control-plane.md) and served as OpenAPI at GET "
                "/_test/openapi.json. -h, --help Show this message and exit."
            )
            or "served as OpenAPI at GET /_test/openapi.json." in flat.split("Options:")[-1]
        )

    def test_fixtures_and_keys_come_from_the_environment(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        first = tmp_path / "first.yaml"
        first.write_text("flags: {a: {type: string, value: first}, b: {type: string, value: x}}")
        second = tmp_path / "second.yaml"
        second.write_text("flags: {a: {type: string, value: second}}")
        monkeypatch.setenv("SVC_STUB_FIXTURES", f"{first}:{second}")
        monkeypatch.setenv("SVC_STUB_API_KEY", "good other")
        with spawn_stub() as stub:
            assert evaluate(stub, "a", api_key="good")["value"] == "second"
            assert evaluate(stub, "b", api_key="other")["value"] == "x"
            with pytest.raises(urllib.error.HTTPError) as refused:
                evaluate(stub, "a", api_key="bad")
            refused.value.close()
            assert refused.value.code == 401

    def test_origins_and_hosts_the_control_plane_answers_come_from_the_environment(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("SVC_STUB_ALLOW_ORIGIN", "http://a.test http://B.test:8080/")
        monkeypatch.setenv("SVC_STUB_ALLOW_HOST", "svc-stub")
        with spawn_stub() as stub:
            port = stub.url.rsplit(":", 1)[1]
            asked = [
                stub.status("/_test/requests", {"Origin": "http://b.test:8080"}),
                stub.status("/_test/requests", {"Origin": "http://a.test"}),
                stub.status("/_test/requests", {"Origin": "http://c.test"}),
                stub.status("/_test/requests", {"Host": f"svc-stub:{port}"}),
                stub.status("/_test/requests", {"Host": f"other:{port}"}),
            ]
        assert asked == [200, 200, 403, 200, 403]

    def test_the_command_line_wins_over_the_environment(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("SVC_STUB_MAX_NAMESPACES", "1")
        with spawn_stub() as stub:
            assert stub.get("/_test/namespaces")["max"] == 1
        with spawn_stub("--max-namespaces", "3") as stub:
            assert stub.get("/_test/namespaces")["max"] == 3

    def test_a_bad_value_in_the_environment_is_one_line_naming_the_variable(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("SVC_STUB_PORT", "eighty")
        assert one_line(run_stub()).startswith(
            "svc-stub: error: Invalid value for '--port' (env var: 'SVC_STUB_PORT'): 'eighty'"
        )


class TestStartUp:
    def test_the_entry_point_collects_garbage_again_once_the_app_is_built(self) -> None:
        """The collector is off while start-up imports and builds (stub/entry.py), and back on,
        with start-up's objects frozen, by the time the stub serves."""
        script = (
            "import gc, sys\n"
            "import stub.cli\n"
            "async def serve(*args, **kwargs):\n"
            "    print(gc.isenabled(), gc.get_freeze_count() > 0)\n"
            "stub.cli.serve = serve\n"
            "sys.argv = ['svc-stub', '--port', '0']\n"
            "from stub.entry import main\n"
            "main()\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=30, check=False
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, "True True\n", "")


class TestSignals:
    @pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
    def test_a_signal_stops_the_stub_cleanly_with_exit_zero(self, signum: int) -> None:
        with spawn_stub() as stub:
            stub.process.send_signal(signum)
            # With nothing in flight, only a hang can hold the stop, and HANG_GUARD_S guards that:
            # how soon it stops is no claim of this test (a stop not held by a request in flight is
            # test_reliability's).
            assert stub.process.wait(timeout=HANG_GUARD_S) == 0
            assert stub.process.stderr is not None
            assert "Traceback" not in stub.process.stderr.read()


class TestStopWith:
    """`--stop-with PID`: the stub outlives no test run, however the run ended."""

    def test_the_stub_stops_cleanly_once_the_process_has_ended(self) -> None:
        run = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            with spawn_stub("--stop-with", str(run.pid)) as stub:
                assert stub.get("/health") == {"ok": True}
                run.kill()  # as a test run killed outright ends
                run.wait()
                assert stub.process.wait(timeout=HANG_GUARD_S) == 0
                assert stub.process.stderr is not None
                assert "Traceback" not in stub.process.stderr.read()
        finally:
            run.kill()

    def test_a_process_ended_but_not_yet_reaped_counts_as_ended(self) -> None:
        """Killed, and its parent (here, this test) has not waited for it: a zombie, which
        signal 0 still finds."""
        run = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            with spawn_stub("--stop-with", str(run.pid)) as stub:
                assert stub.get("/health") == {"ok": True}
                run.kill()  # and no wait: it stays a zombie until the finally below
                assert stub.process.wait(timeout=HANG_GUARD_S) == 0
        finally:
            run.kill()
            run.wait()

    def test_it_serves_while_the_process_runs(self) -> None:
        with spawn_stub("--stop-with", str(os.getpid())) as stub:
            time.sleep(0.5)  # a few of its looks
            assert stub.process.poll() is None
            assert stub.get("/health") == {"ok": True}

    def test_a_process_that_is_not_there_is_one_line(self) -> None:
        gone = subprocess.Popen([sys.executable, "-c", "pass"])
        gone.wait()
        assert one_line(run_stub("--port", "0", "--stop-with", str(gone.pid))) == (
            f"svc-stub: error: --stop-with {gone.pid}: no such process (give the test run's PID)"
        )


class TestLogging:
    def test_debug_logs_one_line_per_request_without_secrets(self) -> None:
        with spawn_stub("--log-level", "debug") as stub:
            request = urllib.request.Request(
                stub.url + "/v1/flags/evaluate?token=phc_query_secret",
                data=b'{"targetingKey": "u"}',
                headers={"Authorization": "Bearer sk_header_secret"},
            )
            urllib.request.urlopen(request, timeout=HANG_GUARD_S).close()
            stub.post("/ns/t-1/batch", {"api_key": "k", "batch": []})
            stub.process.terminate()
            stub.process.wait(timeout=HANG_GUARD_S)
            assert stub.process.stderr is not None
            log = stub.process.stderr.read()
        lines = [line for line in log.splitlines() if "/v1/flags/evaluate" in line]
        assert len(lines) == 1
        assert "token=phc_[redacted]" in lines[0]
        assert " POST /ns/t-1/batch 200 " in log  # with its namespace
        assert "phc_query_secret" not in log
        assert "sk_header_secret" not in log

    def test_info_level_logs_no_request_lines(self) -> None:
        with spawn_stub() as stub:
            stub.get("/health")
            stub.process.terminate()
            stub.process.wait(timeout=HANG_GUARD_S)
            assert stub.process.stderr is not None
            assert stub.process.stderr.read() == ""


class TestAReinstallUnderARunningStub:
    def test_it_keeps_serving_its_openapi_document_and_inspector_page(self, tmp_path: Path) -> None:
        """`pip install` into the environment a stub runs from replaces its package's files:
        the running stub serves the files it started with."""
        copy = tmp_path / "stub"
        shutil.copytree(Path(stub.__file__).parent, copy)
        environment = {**os.environ, "PYTHONPATH": str(tmp_path)}
        process = subprocess.Popen(
            [sys.executable, "-P", "-m", "stub", "--port", "0"],
            cwd=tmp_path,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert process.stdout is not None
            url = url_of(process.stdout.readline())
            assert url is not None
            shutil.rmtree(copy)  # what an uninstall leaves
            with urllib.request.urlopen(
                url + "/_test/openapi.json", timeout=HANG_GUARD_S
            ) as answer:
                assert json.load(answer)["info"]["title"] == "svc-stub"
            with urllib.request.urlopen(url + "/_test/ui", timeout=HANG_GUARD_S) as answer:
                assert "inspector.js" in answer.read().decode()
            with urllib.request.urlopen(
                url + "/_test/ui/inspector.js", timeout=HANG_GUARD_S
            ) as answer:
                assert answer.status == 200
        finally:
            process.terminate()
            process.wait(timeout=HANG_GUARD_S)
            assert process.stdout is not None
            process.stdout.close()


class TestCheck:
    """`svc-stub check FILE ...`: fixture files checked as a start checks them, nothing served."""

    def test_files_a_start_would_serve_pass_and_say_what_they_serve(self) -> None:
        done = run_stub("check", str(ROOT / "fixtures" / "default.yaml"))
        assert (done.returncode, done.stderr) == (0, "")
        assert (
            done.stdout
            == f"svc-stub check: ok, 9 flags from {ROOT / 'fixtures' / 'default.yaml'}\n"
        )

    def test_a_file_a_start_would_refuse_is_the_starts_own_line_and_exit_2(
        self, tmp_path: Path
    ) -> None:
        bad = tmp_path / "flags.yaml"
        bad.write_text("flags:\n  banner:\n    type: strin\n    value: 1\n")
        checked = run_stub("check", str(bad))
        started = run_stub("--port", "0", "--fixtures", str(bad))
        assert (checked.returncode, checked.stdout) == (2, "")
        assert one_line(checked) == one_line(started)
        assert f"{bad}: flags.banner.type: expected one of" in one_line(checked)

    def test_a_missing_file_and_no_file_are_one_line(self, tmp_path: Path) -> None:
        assert one_line(run_stub("check", str(tmp_path / "nope.yaml"))) == (
            f"svc-stub: error: {tmp_path / 'nope.yaml'}: no such file"
        )
        assert one_line(run_stub("check")) == (
            "svc-stub: error: check: give the fixture files to check (svc-stub check flags.yaml)"
        )

    def test_help_says_what_it_is_for(self) -> None:
        done = run_stub("check", "--help")
        assert done.returncode == 0
        assert done.stdout.startswith("usage: svc-stub check FILE_OR_DIR ...\n")


class TestTheLinesAfterTheReadyLine:
    def test_they_name_the_inspector_and_in_proxy_mode_the_upstream(self) -> None:
        """For a person at a terminal; a parent reads the first line only."""
        process = subprocess.Popen(
            [*STUB, "--port", "0", "--upstream", "http://127.0.0.1:9"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert process.stdout is not None
            url = url_of(process.stdout.readline())
            assert url is not None
            assert process.stdout.readline() == f"svc-stub inspector: {url}/_test/ui\n"
            assert process.stdout.readline() == "svc-stub forwarding to: http://127.0.0.1:9\n"
            with urllib.request.urlopen(url + "/_test/ui", timeout=HANG_GUARD_S) as answer:
                assert answer.status == 200
        finally:
            process.terminate()
            process.wait(timeout=HANG_GUARD_S)
            assert process.stdout is not None
            process.stdout.close()

    def test_a_parent_that_has_closed_the_pipe_leaves_a_stub_serving(self) -> None:
        """A parent may read the ready line and close stdout before the stub is done writing
        (the pytest plugin's launcher does): a closed pipe never stops the stub. Here it is
        closed before the stub writes at all, so every write of it meets the closed pipe."""
        port = free_port()
        read_end, write_end = os.pipe()
        os.close(read_end)
        process = subprocess.Popen(
            [*STUB, "--port", str(port)],
            stdout=write_end,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        os.close(write_end)
        try:
            url = f"http://127.0.0.1:{port}"
            # It waits for the answer; HANG_GUARD_S guards a hang, not a speed budget.
            deadline = time.monotonic() + HANG_GUARD_S
            answered = False
            while not answered and process.poll() is None and time.monotonic() < deadline:
                try:
                    with urllib.request.urlopen(url + "/health", timeout=HANG_GUARD_S) as answer:
                        answered = answer.status == 200
                except OSError:
                    time.sleep(0.05)
            assert process.poll() is None, "the stub stopped on its closed stdout"
            assert answered, f"the stub did not answer within {HANG_GUARD_S} s"
            time.sleep(0.3)
            assert process.poll() is None
        finally:
            process.terminate()
            process.wait(timeout=HANG_GUARD_S)
