"""`svc-stub shared`: a test run's one stub, started by the first of its processes to ask, the
same for the rest, gone with the run (killed outright included) or at `--stop`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import HANG_GUARD_S
from stub import __version__
from stub.process import PYTHON_M, url_of
from stub.testing.shared import nearest_named, parsed, run_directory


def shared(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PYTHON_M, "stub", "shared", *args],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        check=False,
    )


def url_from(*args: str) -> str:
    said = shared(*args)
    assert said.returncode == 0, said.stderr
    url = url_of(said.stdout)
    assert url is not None, said.stdout
    assert said.stdout.count("\n") == 1  # its ready line, and nothing else
    return url


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=HANG_GUARD_S) as answer:
            return bool(answer.status == 200)
    except urllib.error.HTTPError as refused:
        refused.close()
        return False
    except OSError:
        return False


def wait_until_gone(url: str) -> None:
    guard = time.monotonic() + HANG_GUARD_S
    while answers(url):
        assert time.monotonic() < guard, f"{url} still answers"
        time.sleep(0.1)


@pytest.fixture
def owner() -> Iterator[int]:
    """A stand-in for a test run's process (a `go test`, a `cargo test`): its PID."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    yield process.pid
    process.kill()
    process.wait()


class TestOneRunOneStub:
    def test_the_run_gets_one_stub_and_stop_ends_it(self, owner: int) -> None:
        first = url_from("--owner", str(owner))
        assert url_from("--owner", str(owner)) == first
        assert answers(first)
        assert shared("--stop", "--owner", str(owner)).returncode == 0
        assert not answers(first)
        assert shared("--stop", "--owner", str(owner)).returncode == 0  # nothing to stop: fine

    def test_other_options_or_another_run_get_another_stub(self, owner: int) -> None:
        plain = url_from("--owner", str(owner))
        keyed = url_from("--owner", str(owner), "--", "--api-key", "k1")
        assert keyed != plain
        assert url_from("--owner", str(owner), "--", "--api-key", "k1") == keyed
        request = urllib.request.Request(
            keyed + "/v1/flags/evaluate", data=b"{}", headers={"Authorization": "Bearer k2"}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=HANG_GUARD_S)
        refused.value.close()
        assert refused.value.code == 401  # the options reached the stub
        shared("--stop", "--owner", str(owner))
        shared("--stop", "--owner", str(owner), "--", "--api-key", "k1")
        assert not answers(plain)
        assert not answers(keyed)

    def test_the_stub_goes_when_the_run_is_killed_outright(self) -> None:
        run = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        url = url_from("--owner", str(run.pid))
        run.send_signal(signal.SIGKILL)
        run.wait()
        wait_until_gone(url)

    def test_the_directory_of_an_ended_run_is_removed_by_the_next_run(self, owner: int) -> None:
        ended = subprocess.Popen([sys.executable, "-c", "pass"])
        ended.wait()
        left = run_directory(parsed(["--owner", str(owner)], caller=owner)).parent
        stale = left / f"run-{ended.pid}-0123456789ab"
        stale.mkdir()
        url_from("--owner", str(owner))
        assert not stale.exists()
        shared("--stop", "--owner", str(owner))


class TestTheOwner:
    def test_the_nearest_process_of_that_name_up_from_the_caller(self) -> None:
        parent = Path(f"/proc/{os.getppid()}/comm").read_text().strip()
        assert nearest_named(parent, os.getpid()) == os.getppid()
        assert nearest_named("no-such-runner", os.getpid()) == os.getpid()

    def test_without_an_owner_the_caller_owns_it(self) -> None:
        assert parsed([], caller=4242).owner == 4242


class TestMistakes:
    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (["--port", "3"], "--port: unknown option (stub options go after --); see --help"),
            (["--", "--port", "3"], "--port: the command sets it; leave it out"),
            (["--", "--stop-with=1"], "--stop-with: the command sets it; leave it out"),
            (["--owner"], "--owner needs a value"),
            (["--owner", "999999999"], "--owner 999999999: no such process"),
            (["--owner", "1", "--owner-named", "go"], "give --owner or --owner-named, not both"),
            (["--require", "x.y"], "--require x.y: expected a version like 0.1.0"),
        ],
    )
    def test_a_mistake_is_one_line_and_exit_2(self, args: list[str], message: str) -> None:
        said = shared(*args)
        assert said.returncode == 2
        assert said.stdout == ""
        assert said.stderr.startswith(f"svc-stub: error: shared: {message}")
        assert said.stderr.count("\n") == 1

    def test_a_helper_newer_than_the_stub_is_told_how_to_upgrade(self) -> None:
        said = shared("--require", "99.0.0")
        assert said.returncode == 2
        assert said.stderr == (
            f"svc-stub: error: shared: this svc-stub is {__version__}, older than the 99.0.0 "
            f"the helper needs; upgrade it ({sys.executable} -m pip install --upgrade "
            f"{Path.cwd()})\n"
        )
        assert shared("--require", __version__, "--stop").returncode == 0

    def test_a_stub_that_does_not_start_says_why_in_its_own_words(self, owner: int) -> None:
        said = shared("--owner", str(owner), "--", "--fixtures", "no-such-file.yaml")
        assert said.returncode == 1
        assert said.stderr.startswith("svc-stub: error: shared: the stub did not start: ")
        assert "no-such-file.yaml" in said.stderr
        assert said.stderr.count("svc-stub: error:") == 1
        assert said.stderr.count("\n") == 1

    def test_help_says_how_to_use_it(self) -> None:
        said = shared("--help")
        assert said.returncode == 0
        assert said.stdout.startswith("usage: svc-stub shared [--owner PID | --owner-named NAME]")
