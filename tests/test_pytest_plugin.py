"""The pytest plugin as a user's suite meets it.

Every test runs an inner pytest as a separate process (`pytester.runpytest_subprocess`), with no
conftest: the plugin loads through its `pytest11` entry point, exactly as after `pip install`.
Inner tests report what they saw (URLs, worker ids) as JSON lines in `seen.jsonl`; the outer
test checks those, the inner outcomes, and that every stub the inner session started is gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.parse
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from conftest import INNER_PYTEST, closed_within
from stub.client import StubClient, StubError
from stub.config import DEFAULT_PORT
from stub.process import StubProcess
from stub.testing.pytest_plugin import TOKEN_VARIABLE, URL_VARIABLE

pytest_plugins = ["pytester"]

INNER_TIMEOUT_S = 60

# Put at the top of every inner test module: a flag read over plain HTTP, a note to the outer test.
INNER_HELPERS = '''\
import json
import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def post(url, path, body):
    """(status, JSON body or None) of a runtime call, with any API key."""
    request = urllib.request.Request(
        url + path,
        data=json.dumps(body).encode(),
        headers={"Authorization": "Bearer k", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        with error:
            return error.code, None


def served(url):
    """Every served flag's decision for one user, by flag key."""
    status, body = post(url, "/v1/flags/evaluate", {"targetingKey": "u1"})
    assert status == 200, status
    return {decision["flagKey"]: decision for decision in body["decisions"]}


def note(**values):
    """One JSON line for the outer test (one write with O_APPEND: safe across xdist workers)."""
    fd = os.open(HERE / "seen.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, (json.dumps(values) + "\\n").encode())
    finally:
        os.close(fd)

'''

FLAGS_YAML = """\
flags:
  only-flag: {type: boolean, value: true}
  shared-flag: {type: string, value: from-flags}
"""

OVERLAY_YAML = """\
flags:
  shared-flag: {type: string, value: from-overlay}
  extra-flag: {type: number, value: 7}
"""

DEFAULT_KEYS = {"new-checkout", "dark-mode", "checkout-v2", "max-items"}  # some of default.yaml


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inner runs inherit the environment: no stub of the developer's, no outer xdist worker."""
    for name in (URL_VARIABLE, TOKEN_VARIABLE, "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT"):
        monkeypatch.delenv(name, raising=False)


def write_tests(pytester: pytest.Pytester, body: str, name: str = "test_inner") -> None:
    pytester.makepyfile(**{name: INNER_HELPERS + textwrap.dedent(body)})


def write_flag_files(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", flags=FLAGS_YAML, overlay=OVERLAY_YAML)


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    assert not list(pytester.path.rglob("conftest.py"))  # the entry point alone loads the plugin
    return pytester.runpytest_subprocess(*INNER_PYTEST, *args, timeout=INNER_TIMEOUT_S)


def seen(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    path = pytester.path / "seen.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def port_of(url: str) -> int:
    match = re.fullmatch(r"http://127\.0\.0\.1:(\d+)", url)
    assert match is not None, url
    return int(match.group(1))


def assert_gone(url: str) -> None:
    """Nothing listens at the stub's address any more: its process was stopped."""
    parts = urllib.parse.urlsplit(url)
    assert parts.hostname is not None
    assert parts.port is not None
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((parts.hostname, parts.port), timeout=2).close()


@pytest.fixture
def outer_stub() -> Iterator[StubProcess]:
    """A stub this test started itself, for `SVC_STUB_URL`."""
    with StubProcess.start(stderr=subprocess.DEVNULL) as process:
        yield process


class TestTheSessionStub:
    def test_a_plain_suite_reads_the_default_flags_from_an_ephemeral_port(
        self, pytester: pytest.Pytester
    ) -> None:
        write_tests(
            pytester,
            """
            def test_reads_a_default_flag(svc_stub):
                note(url=svc_stub.base_url, scoped=svc_stub.url, namespace=svc_stub.namespace)
                decision = served(svc_stub.url)["new-checkout"]
                assert decision["value"] is True
                assert decision["found"] is True
            """,
        )
        result = run(pytester)
        result.assert_outcomes(passed=1)
        result.stdout.fnmatch_lines(["plugins:*svc-stub*"])
        [line] = seen(pytester)
        url = line["url"]
        assert port_of(url) not in (0, DEFAULT_PORT)
        assert line["namespace"].startswith("test_reads_a_default_flag-")
        assert line["scoped"] == f"{url}/ns/{line['namespace']}"
        assert_gone(url)

    def test_each_test_starts_with_nothing_armed_and_nothing_recorded(
        self, pytester: pytest.Pytester
    ) -> None:
        write_tests(
            pytester,
            """
            def test_a_leaves_a_fault_and_recordings_behind(svc_stub):
                svc_stub.arm("500", apply_to="evaluate")
                event = {"type": "exposure", "flagKey": "new-checkout", "targetingKey": "u1"}
                assert post(svc_stub.url, "/v1/capture", {"events": [event]})[0] == 200
                assert post(svc_stub.url, "/v1/flags/evaluate", {"targetingKey": "u1"})[0] == 500
                assert len(svc_stub.armed()) == 1
                assert len(svc_stub.recorded().svc_events) == 1
                assert len(svc_stub.requests()) == 2

            def test_b_sees_none_of_it(svc_stub):
                assert svc_stub.armed() == []
                recorded = svc_stub.recorded()
                assert (recorded.events, recorded.svc_events, recorded.targets) == ([], [], [])
                assert svc_stub.requests() == []
                assert served(svc_stub.url)["new-checkout"]["value"] is True  # no fault fires
            """,
        )
        run(pytester).assert_outcomes(passed=2)

    def test_one_stub_process_serves_the_whole_session(self, pytester: pytest.Pytester) -> None:
        write_tests(
            pytester,
            """
            def test_first(svc_stub):
                note(url=svc_stub.base_url)

            def test_second(svc_stub):
                note(url=svc_stub.base_url)
            """,
        )
        run(pytester).assert_outcomes(passed=2)
        first, second = (line["url"] for line in seen(pytester))
        assert first == second
        port_of(first)
        assert_gone(first)

    def test_the_stub_is_stopped_at_session_end_when_a_test_fails(
        self, pytester: pytest.Pytester
    ) -> None:
        write_tests(
            pytester,
            """
            def test_fails(svc_stub):
                note(url=svc_stub.url)
                assert served(svc_stub.url)["new-checkout"]["value"] is False, "on purpose"
            """,
        )
        result = run(pytester)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["*AssertionError: on purpose*"])
        [line] = seen(pytester)
        assert_gone(line["url"])


class TestTheMarker:
    def test_a_file_beside_the_test_is_served_alone(self, pytester: pytest.Pytester) -> None:
        write_flag_files(pytester)
        write_tests(
            pytester,
            """
            @pytest.mark.svc_stub(fixtures="flags.yaml")
            def test_only_those_flags(svc_stub):
                flags = served(svc_stub.url)
                assert set(flags) == {"only-flag", "shared-flag"}
                assert flags["shared-flag"]["value"] == "from-flags"
            """,
        )
        run(pytester).assert_outcomes(passed=1)

    def test_a_list_of_files_overlays_later_winning_per_key(
        self, pytester: pytest.Pytester
    ) -> None:
        write_flag_files(pytester)
        write_tests(
            pytester,
            """
            @pytest.mark.svc_stub(fixtures=["flags.yaml", "overlay.yaml"])
            def test_overlaid(svc_stub):
                flags = served(svc_stub.url)
                assert set(flags) == {"only-flag", "shared-flag", "extra-flag"}
                assert flags["shared-flag"]["value"] == "from-overlay"
                assert flags["extra-flag"]["value"] == 7
            """,
        )
        run(pytester).assert_outcomes(passed=1)

    def test_an_inline_document_is_served(self, pytester: pytest.Pytester) -> None:
        write_tests(
            pytester,
            """
            INLINE = {"flags": {"inline-flag": {"type": "number", "value": 42}}}

            @pytest.mark.svc_stub(fixtures=INLINE)
            def test_inline(svc_stub):
                flags = served(svc_stub.url)
                assert set(flags) == {"inline-flag"}
                assert flags["inline-flag"]["value"] == 42
            """,
        )
        run(pytester).assert_outcomes(passed=1)

    def test_the_next_test_without_the_marker_gets_the_default_fixtures_back(
        self, pytester: pytest.Pytester
    ) -> None:
        write_flag_files(pytester)
        write_tests(
            pytester,
            f"""
            @pytest.mark.svc_stub(fixtures="flags.yaml")
            def test_marked(svc_stub):
                note(url=svc_stub.base_url)
                assert "new-checkout" not in served(svc_stub.url)

            def test_unmarked(svc_stub):
                note(url=svc_stub.base_url)
                flags = served(svc_stub.url)
                assert set(flags) >= {DEFAULT_KEYS!r}
                assert "only-flag" not in flags
            """,
        )
        run(pytester).assert_outcomes(passed=2)
        first, second = (line["url"] for line in seen(pytester))
        assert first == second  # the same stub; the marked test's fixtures were its own

    def test_a_missing_file_fails_the_tests_setup_naming_the_path(
        self, pytester: pytest.Pytester
    ) -> None:
        write_tests(
            pytester,
            """
            @pytest.mark.svc_stub(fixtures="no-such-file.yaml")
            def test_missing(svc_stub):
                pass

            def test_others_still_run(svc_stub):
                assert "new-checkout" in served(svc_stub.url)
            """,
        )
        result = run(pytester)
        result.assert_outcomes(passed=1, errors=1)
        missing = pytester.path / "no-such-file.yaml"
        result.stdout.fnmatch_lines([f"@pytest.mark.svc_stub: no fixture file at {missing}"])


class TestSessionFixtureOptions:
    INNER = """
    def test_serves_the_given_fixtures(svc_stub):
        flags = served(svc_stub.url)
        assert set(flags) == {EXPECTED!r}
        assert flags["shared-flag"]["value"] == {SHARED!r}
    """

    def test_the_command_line_option_serves_its_files_later_winning_per_key(
        self, pytester: pytest.Pytester
    ) -> None:
        write_flag_files(pytester)
        expected = {"only-flag", "shared-flag", "extra-flag"}
        write_tests(pytester, self.INNER.format(EXPECTED=expected, SHARED="from-overlay"))
        result = run(
            pytester, "--svc-stub-fixtures", "flags.yaml", "--svc-stub-fixtures", "overlay.yaml"
        )
        result.assert_outcomes(passed=1)

    def test_the_ini_option_serves_its_files_relative_to_the_ini_file(
        self, pytester: pytest.Pytester
    ) -> None:
        data = pytester.mkdir("stubdata")
        (data / "flags.yaml").write_text(FLAGS_YAML)
        pytester.makeini("[pytest]\nsvc_stub_fixtures = stubdata/flags.yaml\n")
        expected = {"only-flag", "shared-flag"}
        write_tests(pytester, self.INNER.format(EXPECTED=expected, SHARED="from-flags"))
        run(pytester).assert_outcomes(passed=1)

    def test_a_missing_session_fixture_file_errors_every_test_and_the_output_names_it(
        self, pytester: pytest.Pytester
    ) -> None:
        write_tests(
            pytester,
            """
            def test_one(svc_stub):
                pass

            def test_two(svc_stub):
                pass
            """,
        )
        result = run(pytester, "--svc-stub-fixtures", "no-such-file.yaml")
        result.assert_outcomes(errors=2)
        result.stdout.fnmatch_lines(
            [
                "*StubStartError: svc-stub did not start: "
                "svc-stub: error: no-such-file.yaml: no such file*"
            ]
        )
        result.stdout.no_fnmatch_line("*Captured stderr setup*")  # the stub's log stays private


class TestAnAlreadyRunningStub:
    def test_svc_stub_url_is_used_instead_of_starting_a_stub(
        self,
        pytester: pytest.Pytester,
        monkeypatch: pytest.MonkeyPatch,
        outer_stub: StubProcess,
    ) -> None:
        client = StubClient(outer_stub.url)
        client.arm("500", apply_to="evaluate")  # someone else's: the inner test must not see it
        monkeypatch.setenv(URL_VARIABLE, outer_stub.url)
        write_tests(
            pytester,
            f"""
            def test_uses_the_running_stub(svc_stub):
                assert svc_stub.base_url == {outer_stub.url!r}
                assert svc_stub.url == {outer_stub.url!r} + "/ns/" + svc_stub.namespace
                assert svc_stub.armed() == []
                assert served(svc_stub.url)["new-checkout"]["value"] is True
                [request] = svc_stub.requests("evaluate")
                assert (request.path, request.status) == ("/v1/flags/evaluate", 200)
            """,
        )
        run(pytester).assert_outcomes(passed=1)
        assert client.requests() == []  # the default namespace saw nothing
        assert len(client.armed()) == 1  # and kept what was armed in it
        assert [n.name for n in client.namespaces()] == ["default"]  # the test's was deleted
        assert client.health()  # the plugin leaves a stub it did not start running


class TestMistakes:
    @pytest.mark.parametrize("url", ["http://127.0.0.1:1", "HTML"])
    def test_an_svc_stub_url_that_does_not_answer_stops_the_session_in_one_line(
        self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, url: str
    ) -> None:
        if url == "HTML":  # something else answers there
            server = ThreadingHTTPServer(("127.0.0.1", 0), SimpleHTTPRequestHandler)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            url = f"http://127.0.0.1:{server.server_address[1]}"
        monkeypatch.setenv(URL_VARIABLE, url)
        write_tests(
            pytester, "def test_one(svc_stub):\n    pass\n\ndef test_two(svc_stub):\n    pass\n"
        )
        result = run(pytester)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        said = [line for line in result.stdout.lines if f"SVC_STUB_URL={url}" in line]
        assert len(said) == 1, result.stdout.str()
        assert "; start one there (svc-stub --port PORT) or unset SVC_STUB_URL" in said[0]
        assert "Traceback" not in result.stdout.str()

    def test_the_in_process_fixture_without_pytest_aiohttp_says_what_to_install(
        self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        blocked = pytester.mkdir("blocked")  # first on the path: pytest-asyncio "is missing"
        (blocked / "pytest_asyncio.py").write_text("raise ImportError('not installed')\n")
        monkeypatch.setenv("PYTHONPATH", str(blocked))
        write_tests(pytester, "def test_in_process(svc_stub_in_process):\n    pass\n")
        result = pytester.runpytest_subprocess(
            *INNER_PYTEST, "-p", "no:asyncio", "-p", "no:aiohttp",
            timeout=INNER_TIMEOUT_S,
        )  # fmt: skip
        result.assert_outcomes(errors=1)
        clone = Path(__file__).resolve().parents[1]  # svc-stub runs from this clone here
        assert (
            f"svc_stub_in_process needs pytest-aiohttp: pip install '{clone}[in-process]' "
            "(or pytest-aiohttp)"
        ) in result.stdout.lines

    @pytest.mark.parametrize("style", ["long", "short"])
    def test_a_refused_control_call_or_a_wait_that_ran_out_is_one_line(
        self, pytester: pytest.Pytester, style: str
    ) -> None:
        """The test's own line and one `E` line: none of the control client's frames."""
        write_tests(
            pytester,
            """
            def test_refused(svc_stub):
                svc_stub.arm("bogus")

            def test_waited(svc_stub):
                svc_stub.wait_for_svc_events(1, timeout=0.1)

            def test_refused_for_a_block(svc_stub):
                with svc_stub.fault(500):
                    pass
            """,
        )
        result = run(pytester, f"--tb={style}")
        result.assert_outcomes(failed=3)
        said = result.stdout.lines
        errors = [line for line in said if line.startswith("E ")]
        assert len(errors) == 4, result.stdout.str()  # the wait's message shows what came: []
        assert errors[3].split(maxsplit=1)[1] == (
            "stub.client.models.StubError: 400 INVALID_BODY: mode: 500 is a number; send the "
            'mode as a string, "500"'
        )
        assert not [line for line in said if "contextlib" in line], result.stdout.str()
        assert errors[0].split(maxsplit=1)[1] == (
            "stub.client.models.StubError: 400 INVALID_BODY: mode: unknown fault mode 'bogus' "
            "(valid: none, delay, 401, 429, 500, invalid_json, truncated, quota_limited, "
            "status, reset, empty_response, slow_body, hang)"
        )
        assert [line.split(maxsplit=1)[1] for line in errors[1:3]] == [
            "stub.client.models.WaitTimeout: waited 0.1s for 1 svcEvents, got 0:",
            "[]",
        ]
        assert not [line for line in said if "stub/client" in line], result.stdout.str()

    def test_a_failed_assertion_is_the_tests_line_and_its_message(
        self, pytester: pytest.Pytester
    ) -> None:
        write_tests(
            pytester,
            """
            def test_exposed(svc_stub):
                svc_stub.assert_exposure("checkout-v2", "user-2")
            """,
        )
        result = run(pytester)
        result.assert_outcomes(failed=1)
        errors = [
            line.split(maxsplit=1)[1] for line in result.stdout.lines if line.startswith("E ")
        ]
        assert errors == [
            "stub.client.models.StubAssertionError: no exposure of checkout-v2 for user-2; "
            "exposures recorded:",
            "(none)",
        ]
        assert not [line for line in result.stdout.lines if "stub/client" in line]

    def test_a_markers_fixture_file_refused_is_one_line_naming_the_file(
        self, pytester: pytest.Pytester
    ) -> None:
        pytester.path.joinpath("banner.yaml").write_text(
            "flags:\n  banner-text:\n    type: string\n    valeu: x\n"
        )
        write_tests(
            pytester,
            """
            @pytest.mark.svc_stub(fixtures="banner.yaml")
            def test_marked(svc_stub):
                pass
            """,
        )
        result = run(pytester)
        result.assert_outcomes(errors=1)
        said = result.stdout.str()
        expected = (
            f"@pytest.mark.svc_stub(fixtures=...): {pytester.path / 'banner.yaml'}: "
            "flags.banner-text.valeu: unknown key"
        )
        assert expected in said, said
        assert "pytest_plugin.py" not in said, said
        assert "During handling" not in said, said

    def test_anything_else_raised_inside_the_client_keeps_its_frames(
        self, pytester: pytest.Pytester
    ) -> None:
        """Only the stub's refusals hide the client's frames: anything else is worth seeing."""
        write_tests(
            pytester,
            """
            def test_missing_file(svc_stub):
                svc_stub.set_fixtures(Path("/no/such/fixtures.yaml"))
            """,
        )
        result = run(pytester)
        result.assert_outcomes(failed=1)
        assert [line for line in result.stdout.lines if "stub/client/calls.py" in line]
        result.stdout.fnmatch_lines(["E * FileNotFoundError: *"])

    def test_a_stub_error_survives_pickling(self) -> None:
        """As a process pool sends it back: with its own status, code and message."""
        error = pickle.loads(pickle.dumps(StubError(409, "NAMESPACE_EXISTS", "name: taken")))
        assert (error.status, error.code, error.message) == (409, "NAMESPACE_EXISTS", "name: taken")
        assert str(error) == "409 NAMESPACE_EXISTS: name: taken"

    @pytest.mark.parametrize("theirs", ["stub.py", "stub/__init__.py"])
    def test_a_project_module_named_stub_that_hides_the_package_is_one_line(
        self, pytester: pytest.Pytester, theirs: str
    ) -> None:
        """`python -m pytest` (as pytester runs it) puts the project first on sys.path: its
        `stub` wins. Tests that use no svc-stub fixture still run."""
        own = pytester.path / theirs
        own.parent.mkdir(exist_ok=True)
        own.write_text("ANSWER = 42\n")
        pytester.makepyfile(
            test_inner="""
            import pytest
            import stub

            def test_their_own_stub():
                assert stub.ANSWER == 42

            @pytest.mark.svc_stub(keys=["k"])
            def test_ours(svc_stub):
                pass
            """
        )
        result = run(pytester, "--strict-markers")
        result.assert_outcomes(passed=1, errors=1)
        said = [line for line in result.stdout.lines if "'import stub' finds" in line]
        assert said[0] == (  # the one line, in full
            f"svc-stub: 'import stub' finds {own}, not svc-stub's package of that name, so "
            "its fixtures cannot load; rename that module or package (it wins wherever its "
            "folder leads sys.path: under `python -m pytest`, and in pytest-xdist's workers)"
        )
        assert said[1] == said[0]  # in the report header, then in the error section
        assert said[2].startswith("ERROR test_inner.py::test_ours - Failed: svc-stub: 'import")
        assert len(said) == 3
        assert "Traceback" not in result.stdout.str()
        assert "ImportError" not in result.stdout.str()
        assert "its package 'stub' is loaded" not in result.stdout.str()

    def test_run_as_pytest_a_project_stub_py_neither_breaks_nor_replaces_the_stub(
        self, pytester: pytest.Pytester
    ) -> None:
        """`pytest`, not `python -m pytest` (-P here): svc-stub's package loads first, and the
        stub it starts is svc-stub, not the project's stub.py, though both share a directory."""
        (pytester.path / "stub.py").write_text("raise SystemExit('the project module ran')\n")
        write_tests(
            pytester,
            """
            def test_reads_a_default_flag(svc_stub):
                assert served(svc_stub.url)["new-checkout"]["value"] is True
            """,
        )
        # the console script, from the project's directory, with nothing added to the path
        # (pytester's own runs put the directory on PYTHONPATH)
        environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        done = subprocess.run(
            [str(Path(sys.executable).parent / "pytest"), *INNER_PYTEST],
            cwd=pytester.path,
            env=environment,
            capture_output=True,
            text=True,
            timeout=INNER_TIMEOUT_S,
        )
        assert done.returncode == 0, done.stdout
        assert "1 passed" in done.stdout
        assert "svc-stub: its package 'stub' is loaded, so " in done.stdout

    def test_loaded_by_name_it_brings_its_options_and_marker(
        self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With plugin autoloading off, `-p stub.testing.pytest_plugin` still works."""
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        write_tests(
            pytester,
            """
            @pytest.mark.svc_stub(keys=["named-key"])
            def test_marked(svc_stub):
                assert served(svc_stub.url)["new-checkout"]["value"] is True
            """,
        )
        result = run(pytester, "-p", "stub.testing.pytest_plugin", "--strict-markers")
        result.assert_outcomes(passed=1)

    def test_a_project_stub_hidden_by_the_package_is_named_in_the_header(
        self, pytester: pytest.Pytester
    ) -> None:
        """The other way round: svc-stub's package loaded first, the project's `stub` hidden."""
        project = pytester.mkdir("project")
        (project / "stub.py").write_text("ANSWER = 42\n")
        (project / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
        result = run(pytester, "--rootdir", str(project), str(project))
        result.assert_outcomes(passed=1)
        assert (
            f"svc-stub: its package 'stub' is loaded, so 'import stub' in these tests gets it, "
            f"not {project / 'stub.py'}; rename yours to use both"
        ) in result.stdout.lines


class TestXdist:
    def test_every_worker_shares_one_stub_which_is_stopped_after_the_last_leaves(
        self, pytester: pytest.Pytester
    ) -> None:
        write_tests(
            pytester,
            """
            @pytest.mark.parametrize("n", range(8))
            def test_notes_its_stub(svc_stub, worker_id, n):
                note(worker=worker_id, url=svc_stub.base_url, namespace=svc_stub.namespace)
                assert served(svc_stub.url)["new-checkout"]["value"] is True
                assert [r.route for r in svc_stub.requests()] == ["evaluate"]  # its own only
            """,
        )
        run(pytester, "-n", "2").assert_outcomes(passed=8)
        lines = seen(pytester)
        assert {line["worker"] for line in lines} == {"gw0", "gw1"}
        assert len({line["namespace"] for line in lines}) == 8
        (url,) = {line["url"] for line in lines}
        port_of(url)
        assert_gone(url)

    def test_parallel_tests_on_one_shared_stub_never_see_each_other_run_after_run(
        self,
        pytester: pytest.Pytester,
        monkeypatch: pytest.MonkeyPatch,
        outer_stub: StubProcess,
    ) -> None:
        """A CI service stub (`SVC_STUB_URL`) and `-n 4`: tests that arm faults and read
        events at the same moment see exactly their own, and a second run finds nothing left
        of the first."""
        monkeypatch.setenv(URL_VARIABLE, outer_stub.url)
        write_tests(
            pytester,
            """
            import time

            @pytest.mark.parametrize("n", range(16))
            def test_arms_and_records_its_own(svc_stub, n):
                event = {"type": "signal", "targetingKey": f"user-{n}", "name": "mine"}
                if n % 2:
                    svc_stub.arm("500", apply_to="evaluate")
                time.sleep(0.05)  # overlap with the other workers' tests
                status, _ = post(svc_stub.url, "/v1/flags/evaluate", {"targetingKey": "u"})
                assert status == (500 if n % 2 else 200)
                assert post(svc_stub.url, "/v1/capture", {"events": [event]})[0] == 200
                time.sleep(0.05)
                assert svc_stub.recorded().svc_events == [event]
                assert [r.route for r in svc_stub.requests()] == ["evaluate", "capture"]
                assert len(svc_stub.armed()) == n % 2
            """,
        )
        for _ in range(2):
            run(pytester, "-n", "4").assert_outcomes(passed=16)
        control = StubClient(outer_stub.url)
        assert [n.name for n in control.namespaces()] == ["default"]
        assert control.requests() == []

    def test_read_after_response_holds_in_fifty_tests_on_four_workers(
        self, pytester: pytest.Pytester
    ) -> None:
        """The real client's answered request and flushed exposures are already recorded when
        the test reads them, with no wait, whatever fault delayed or shaped the answer."""
        write_tests(
            pytester,
            """
            from fireweave import (
                EvaluationContext, FireweaveClient, FireweaveRemoteAdapter, FireweaveRuntime
            )

            FAULTS = [
                ("delay", {"delay_ms": 30}), ("slow_body", {"delay_ms": 20}),
                ("truncated", {}), ("500", {}), (None, {}),
            ]

            @pytest.mark.parametrize("n", range(50))
            def test_recorded_as_soon_as_answered(svc_stub, n):
                mode, options = FAULTS[n % len(FAULTS)]
                adapter = FireweaveRemoteAdapter(api_url=svc_stub.url, api_key="k")
                runtime = FireweaveRuntime(adapter)
                runtime.initialize()
                client = FireweaveClient(runtime)
                if mode is not None:
                    svc_stub.arm(mode, apply_to=["evaluate", "capture"], **options)
                user = EvaluationContext(targeting_key=f"user-{n}")
                client.control_points.get_string_value("checkout-v2", "control", user)
                assert len(svc_stub.requests("evaluate")) == 1
                client.exposures.record(f"user-{n}", "checkout-v2", "treatment-b", "treatment-b")
                client.exposures.flush()
                adapter.flush()
                assert len(svc_stub.requests("capture")) == 1
                if mode in (None, "delay"):  # answered in full: the events were accepted
                    assert [e["targetingKey"] for e in svc_stub.svc_events()] == [f"user-{n}"]
                client.shutdown()
            """,
        )
        run(pytester, "-n", "4").assert_outcomes(passed=50)

    def test_a_bound_key_routes_a_client_that_cannot_take_a_path_prefix(
        self, pytester: pytest.Pytester
    ) -> None:
        write_tests(
            pytester,
            """
            def post_with_key(url, path, body, key):
                request = urllib.request.Request(
                    url + path,
                    data=json.dumps(body).encode(),
                    headers={"Authorization": "Bearer " + key},
                )
                with urllib.request.urlopen(request, timeout=5) as answer:
                    return answer.status

            # a key routes to one namespace at a time: one key per test that may run at once
            BOUND = [pytest.param(n, marks=pytest.mark.svc_stub(keys=[f"k{n}"])) for n in range(4)]

            @pytest.mark.parametrize("n", BOUND)
            def test_bound(svc_stub, n):
                body = {"events": [{"type": "signal", "targetingKey": "t", "name": str(n)}]}
                assert post_with_key(svc_stub.base_url, "/v1/capture", body, f"k{n}") == 200
                assert svc_stub.recorded().svc_events == body["events"]
            """,
        )
        run(pytester, "-n", "2").assert_outcomes(passed=4)


class TestARunKilledOutright:
    """A run SIGKILLed (a cancelled CI job, the OOM killer) runs no teardown at all; its stub
    stops by itself all the same, so none is left serving."""

    @pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one process", "xdist"])
    def test_leaves_no_stub_behind(
        self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
    ) -> None:
        write_tests(
            pytester,
            """
            import time

            def test_is_killed_while_it_runs(svc_stub_url):
                note(url=svc_stub_url)
                time.sleep(INNER_SLEEP_S)
            """.replace("INNER_SLEEP_S", str(INNER_TIMEOUT_S)),
        )
        # the killed controller cannot remove its run directory: keep it in the test's own
        monkeypatch.setenv("TMPDIR", str(pytester.mkdir("tmp")))
        inner = pytester.popen(
            [sys.executable, "-m", "pytest", *INNER_PYTEST, *workers],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its workers too can be stopped after, by group
        )
        try:
            url = self._noted_url(pytester, inner)
            os.kill(inner.pid, signal.SIGKILL)  # the run's own process: pytest, or xdist's
            inner.wait()
            assert closed_within(port_of(url), seconds=5), f"{url} still answers"
        finally:
            with contextlib.suppress(ProcessLookupError):  # xdist's workers, left by it
                os.killpg(inner.pid, signal.SIGKILL)
            inner.wait()

    @staticmethod
    def _noted_url(pytester: pytest.Pytester, inner: subprocess.Popen[bytes]) -> str:
        deadline = time.monotonic() + INNER_TIMEOUT_S
        while not ((pytester.path / "seen.jsonl").exists() and seen(pytester)):  # written whole
            assert inner.poll() is None, "the inner run ended before its test began"
            assert time.monotonic() < deadline, "the inner test never began"
            time.sleep(0.05)
        (line,) = seen(pytester)
        return str(line["url"])


class TestWithoutNamespaces:
    def test_the_ini_switch_brings_back_one_state_reset_before_each_test(
        self, pytester: pytest.Pytester
    ) -> None:
        pytester.makeini("[pytest]\nsvc_stub_namespaces = false\n")
        write_tests(
            pytester,
            """
            def test_a(svc_stub):
                assert svc_stub.url == svc_stub.base_url and svc_stub.namespace is None
                svc_stub.arm("500", apply_to="evaluate")

            def test_b(svc_stub):
                assert svc_stub.armed() == []

            @pytest.mark.svc_stub(keys=["k"])
            def test_keys_need_namespaces(svc_stub):
                pass
            """,
        )
        result = run(pytester, "-p", "no:randomly")
        result.assert_outcomes(passed=2, errors=1)
        result.stdout.fnmatch_lines(["*@pytest.mark.svc_stub(keys=...) needs namespaces*"])

    def test_under_xdist_each_worker_then_keeps_a_stub_of_its_own(
        self, pytester: pytest.Pytester
    ) -> None:
        """Resets would cut across workers sharing one stub, so none is shared."""
        pytester.makeini("[pytest]\nsvc_stub_namespaces = false\n")
        write_tests(
            pytester,
            """
            import time

            @pytest.mark.parametrize("n", range(8))
            def test_arms_one(svc_stub, worker_id, n):
                note(worker=worker_id, url=svc_stub.url)
                svc_stub.arm("500", apply_to="evaluate")
                time.sleep(0.05)
                assert len(svc_stub.armed()) == 1
            """,
        )
        run(pytester, "-n", "2").assert_outcomes(passed=8)
        urls = {line["worker"]: line["url"] for line in seen(pytester)}
        assert len(set(urls.values())) == 2


class TestInProcess:
    ASYNC_INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"

    def test_an_async_test_evaluates_over_aiohttp_and_arms_a_fault(
        self, pytester: pytest.Pytester
    ) -> None:
        pytester.makeini(self.ASYNC_INI)
        write_tests(
            pytester,
            """
            import aiohttp
            from stub.client import AsyncStubClient


            async def evaluate(url):
                async with aiohttp.ClientSession() as session:
                    async with session.post(
                        url + "/v1/flags/evaluate",
                        json={"targetingKey": "u1", "flagKeys": ["new-checkout"]},
                        headers={"Authorization": "Bearer k"},
                    ) as answer:
                        body = await answer.json() if answer.status == 200 else None
                        return answer.status, body


            async def test_in_process(svc_stub_in_process):
                stub = svc_stub_in_process
                assert isinstance(stub, AsyncStubClient)
                assert stub.url.startswith("http://127.0.0.1:")
                status, body = await evaluate(stub.url)
                assert status == 200
                assert body["decisions"][0]["value"] is True

                armed = await stub.arm("500", apply_to="evaluate", ttl_requests=1)
                assert [fault.id for fault in await stub.armed()] == [armed.id]
                status, _ = await evaluate(stub.url)
                assert status == 500
                requests = await stub.requests("evaluate")
                assert [r.status for r in requests] == [200, 500]
                assert requests[1].fault.mode == "500"
            """,
        )
        run(pytester).assert_outcomes(passed=1)

    def test_the_marker_applies_to_the_in_process_stub(self, pytester: pytest.Pytester) -> None:
        pytester.makeini(self.ASYNC_INI)
        write_flag_files(pytester)
        write_tests(
            pytester,
            """
            @pytest.mark.svc_stub(fixtures=["flags.yaml", "overlay.yaml"])
            async def test_marked(svc_stub_in_process):
                # overlaying nothing answers with the keys served now
                served = await svc_stub_in_process.set_fixtures({"flags": {}}, merge=True)
                assert set(served) == {"only-flag", "shared-flag", "extra-flag"}
            """,
        )
        run(pytester).assert_outcomes(passed=1)


def snapshot_data(page: Path) -> dict[str, Any]:
    """The view a journal page carries inside it."""
    found = re.search(r'id="svc-stub-snapshot">(.*?)</script>', page.read_text(), re.S)
    assert found is not None, "no data in the page"
    data: dict[str, Any] = json.loads(found.group(1))
    return data


class TestTheJournalOfAFailedTest:
    def test_a_failed_test_leaves_its_namespaces_page_and_the_report_names_it(
        self, pytester: pytest.Pytester
    ) -> None:
        write_tests(
            pytester,
            """
            def test_fails(svc_stub):
                post(svc_stub.url, "/v1/capture", {"events": [{"type": "signal", "name": "h"}]})
                assert svc_stub.svc_events() == []

            def test_passes(svc_stub):
                post(svc_stub.url, "/v1/capture", {"events": []})

            def test_fails_without_a_stub():
                assert False
            """,
        )
        result = run(pytester, "--svc-stub-journal", "journals")

        result.assert_outcomes(passed=1, failed=2)
        (page,) = (pytester.path / "journals").glob("*.html")
        assert re.fullmatch(r"test_inner\.py_test_fails-[0-9a-f]{8}\.html", page.name)
        result.stdout.fnmatch_lines(
            ["*- svc-stub journal -*", f"the stub's journal of this test: {page} (open it*"]
        )
        shown = snapshot_data(page)
        (request,) = shown["requests"]
        assert json.loads(request["body"]["text"]) == {"events": [{"type": "signal", "name": "h"}]}
        assert shown["recorded"]["svcEvents"] == [{"type": "signal", "name": "h"}]
        assert shown["namespace"].startswith("test_fails-")

    def test_without_the_option_nothing_is_written(self, pytester: pytest.Pytester) -> None:
        write_tests(pytester, "def test_fails(svc_stub):\n    assert False\n")
        result = run(pytester)

        result.assert_outcomes(failed=1)
        assert "svc-stub journal" not in result.stdout.str()
        assert not list(pytester.path.rglob("*.html"))

    def test_under_xdist_each_failed_test_has_its_own(self, pytester: pytest.Pytester) -> None:
        write_tests(
            pytester,
            """
            @pytest.mark.parametrize("n", range(4))
            def test_fails(svc_stub, n):
                post(svc_stub.url, "/v1/targets/register", {"targetingKey": f"user-{n}"})
                assert False
            """,
        )
        run(pytester, "-n", "2", "--svc-stub-journal", "out").assert_outcomes(failed=4)

        pages = sorted((pytester.path / "out").glob("*.html"))
        assert len(pages) == 4
        for n, page in enumerate(pages):
            assert snapshot_data(page)["recorded"]["targets"] == [{"targetingKey": f"user-{n}"}]

    def test_tests_whose_ids_read_alike_keep_a_page_each(self, pytester: pytest.Pytester) -> None:
        write_tests(
            pytester,
            """
            @pytest.mark.parametrize("word", ["a b", "a/b", "a:b"])
            def test_fails(svc_stub, word):
                assert False
            """,
        )
        run(pytester, "--svc-stub-journal", "out").assert_outcomes(failed=3)

        pages = {page.name.rsplit("-", 1)[0] for page in (pytester.path / "out").glob("*.html")}
        assert len(list((pytester.path / "out").glob("*.html"))) == 3
        assert pages == {"test_inner.py_test_fails_a_b"}

    def test_the_in_process_stub_leaves_one_too(self, pytester: pytest.Pytester) -> None:
        pytester.makeini(TestInProcess.ASYNC_INI)
        write_tests(
            pytester,
            """
            async def test_fails(svc_stub_in_process):
                await svc_stub_in_process.arm("500", apply_to="evaluate")
                assert False
            """,
        )
        run(pytester, "--svc-stub-journal", "out").assert_outcomes(failed=1)

        (page,) = (pytester.path / "out").glob("*.html")
        assert [fault["mode"] for fault in snapshot_data(page)["faults"]] == ["500"]

    def test_a_journal_that_cannot_be_written_is_one_line_in_the_report(
        self, pytester: pytest.Pytester
    ) -> None:
        pytester.makefile(".txt", taken="a file where the directory would be")
        write_tests(pytester, "def test_fails(svc_stub):\n    assert False\n")
        result = run(pytester, "--svc-stub-journal", "taken.txt")

        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["*- svc-stub journal -*", "not written: *taken.txt*"])


class TestTheRunsCoverage:
    TESTS = """
        def test_survives_an_outage(svc_stub):
            svc_stub.arm("500", apply_to="evaluate", ttl_requests=1)
            asked = {"targetingKey": "u", "flagKeys": ["checkout-v2"]}
            assert post(svc_stub.url, "/v1/flags/evaluate", asked)[0] == 500
            assert post(svc_stub.url, "/v1/flags/evaluate", asked)[0] == 200
        """

    @pytest.mark.parametrize("workers", [[], ["-n", "2"]])
    def test_the_summary_names_what_the_run_never_met(
        self, pytester: pytest.Pytester, workers: list[str]
    ) -> None:
        write_tests(pytester, self.TESTS)
        result = run(pytester, *workers, "--svc-stub-journal", "out")
        result.assert_outcomes(passed=1)
        result.stdout.fnmatch_lines(
            [
                "*- svc-stub coverage -*",
                "svc-stub coverage: runtime 2 of 15 cells met; gaps: evaluate never met a 401; "
                "evaluate never met a 429 with Retry-After; *; and 8 more",
                "svc-stub coverage: fixture flags read 1 of 9; never read: dark-mode, *",
            ]
        )
        report = json.loads((pytester.path / "out" / "coverage.json").read_text())
        assert report["scope"] == "run"
        assert {"route": "evaluate", "outcome": "fault 500", "count": 1} in report["cells"]
