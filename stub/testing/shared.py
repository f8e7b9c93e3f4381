"""One stub for a whole pytest-xdist run: the first worker that needs a stub starts it, every
worker uses it (each test in a namespace of its own), and the controller stops it once the
last worker has left. A file lock in a directory the controller made for the run decides who
starts it; the directory also says where it listens and its PID.

The worker starts it through a launcher process (`python -m stub.testing.shared ARGS`) that
exits once the stub is ready: the stub is then nobody's child, so no worker waits for it or
leaves a still-running subprocess behind when it exits. It is started `--stop-with` the
controller's PID, so a run killed outright (no teardown at all) leaves no stub behind either.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from stub.process import PYTHON_M, START_TIMEOUT_S, StubProcess, StubStartError

SUPPORTED = sys.platform != "win32"
"""Sharing needs fcntl's file locks; elsewhere each worker starts its own stub."""
_STUB_FILE = "stub"
_LOCK_FILE = "lock"
_CONTROLLER_FILE = "controller"
STOP_TIMEOUT_S = 5.0


def new_run_directory() -> Path:
    """The controller's: where this run's workers meet, and the PID the run's stub lives by."""
    directory = Path(tempfile.mkdtemp(prefix="svc-stub-run-"))
    (directory / _CONTROLLER_FILE).write_text(f"{os.getpid()}\n")
    return directory


def shared_stub_url(directory: Path, args: Sequence[str]) -> str:
    """The run's stub, started by whichever worker asks first; it outlives that worker."""
    import fcntl  # POSIX only: callers check SUPPORTED

    with (directory / _LOCK_FILE).open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        started = _read(directory)
        if started is not None:
            return started[0]
        url, pid = _launch([*args, *_stop_with_the_controller(directory)])
        (directory / _STUB_FILE).write_text(f"{url}\n{pid}\n")
        return url


def _stop_with_the_controller(directory: Path) -> list[str]:
    """`--stop-with` the controller, so a run killed outright takes its stub with it; nothing
    if the directory does not say who that is (the controller still stops it at the end)."""
    try:
        controller = int((directory / _CONTROLLER_FILE).read_text())
    except (OSError, ValueError):
        return []
    return ["--stop-with", str(controller)]


def stop_shared_stub(directory: Path) -> None:
    """The controller's, after every worker has gone: stop the run's stub, if one started and
    still answers at its address (so a PID the system has since reused is left alone)."""
    started = _read(directory)
    try:
        if started is not None and _answers(started[0]):
            url, pid = started
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + STOP_TIMEOUT_S
            while _answers(url) and time.monotonic() < deadline:
                time.sleep(0.05)
            if _answers(url):
                os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # gone already
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _launch(args: Sequence[str]) -> tuple[str, int]:
    launcher = subprocess.run(
        [*PYTHON_M, __name__, *args],
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S + 5,
        check=False,
    )
    if launcher.returncode != 0:
        raise StubStartError(launcher.stderr.strip() or f"exit code {launcher.returncode}")
    url, pid = launcher.stdout.split()
    return url, int(pid)


def main(args: Sequence[str]) -> None:
    """The launcher: start the stub, say where it listens and its PID, and leave it running."""
    try:
        process = StubProcess.start(args)
    except StubStartError as exc:
        sys.exit(str(exc))
    if process.process.stdout is not None:
        process.process.stdout.close()  # the stub writes nothing after its ready line
    print(process.url, process.pid)


def _read(directory: Path) -> tuple[str, int] | None:
    try:
        url, pid = (directory / _STUB_FILE).read_text().split()
    except (FileNotFoundError, ValueError):
        return None
    return url, int(pid)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=1) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


if __name__ == "__main__":
    main(sys.argv[1:])
