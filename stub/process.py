"""A stub as a child process on an ephemeral port: started, read ready, stopped by PID."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

READY_PREFIX = "svc-stub listening on "
"""The first line a stub prints, once its port is bound; the rest of it is the stub's URL."""
PYTHON_M = (sys.executable, "-P", "-m")
"""`python -m`, without the working directory first on sys.path (-P): a project's own module
named `stub` must not be what runs."""
START_TIMEOUT_S = 30.0


def ready_line(url: str) -> str:
    """What `svc-stub` prints when it is ready, and what `url_of` reads back."""
    return f"{READY_PREFIX}{url}"


def url_of(line: str) -> str | None:
    """The URL in a ready line; None if the line is not one."""
    return line[len(READY_PREFIX) :].strip() if line.startswith(READY_PREFIX) else None


class StubStartError(RuntimeError):
    """The stub exited, or said nothing, before its ready line."""


class StubProcess:
    """`python -m stub --port 0 ARGS`; `url` comes from its ready line, never from guessing."""

    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        self.url = url

    @classmethod
    def start(
        cls,
        args: Sequence[str] = (),
        *,
        stderr: int | IO[Any] | None = None,
        own_settings_only: bool = False,
        detached: bool = False,
    ) -> StubProcess:
        """`stderr` defaults to a private file, so the stub's log never lands in the output of
        whichever test happens to run; a failed start quotes it. `own_settings_only`: none of
        the caller's SVC_STUB_* variables reach the stub (they are the caller's options).
        `detached`: in a session of its own, so a Ctrl-C to the caller's group is not the
        stub's (`svc-stub shared`: a run's stub stops with the run's owner)."""
        environment = None
        if own_settings_only:
            environment = {k: v for k, v in os.environ.items() if not k.startswith("SVC_STUB_")}
        # closed in the finally below; a with-block cannot hold a file that may not exist
        log = tempfile.TemporaryFile(mode="w+") if stderr is None else None  # noqa: SIM115
        process = subprocess.Popen(
            [*PYTHON_M, "stub", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=log if log is not None else stderr,
            stdin=subprocess.DEVNULL,  # a stub reads nothing there: not the caller's terminal
            text=True,
            env=environment,
            start_new_session=detached,
        )
        try:
            line = _ready_line(process, START_TIMEOUT_S, log)
        except BaseException:
            _stop(process)
            raise
        finally:
            if log is not None:
                log.close()
        return cls(process, line)

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self, timeout_s: float = 5.0) -> int:
        """SIGTERM, then SIGKILL after `timeout_s`; the exit code."""
        return _stop(self.process, timeout_s)

    def __enter__(self) -> StubProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _ready_line(process: subprocess.Popen[str], timeout_s: float, log: IO[str] | None) -> str:
    """The stub's URL, from its ready line; StubStartError with what it said if none came."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout_s
    # select on the pipe (not a sleep loop): the line arrives the moment the port is bound
    readable, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
    line = process.stdout.readline() if readable else ""
    url = url_of(line)
    if url is None:
        _stop(process)
        said = _said(process, log)
        reason = said or (f"exit code {process.returncode}" if line == "" else repr(line))
        raise StubStartError(f"svc-stub did not start: {reason}")
    return url


def _said(process: subprocess.Popen[str], log: IO[str] | None) -> str:
    """What the stub wrote to stderr before it gave up, wherever that went."""
    if log is not None:
        log.seek(0)
        return log.read().strip()
    if process.stderr is not None and process.stderr.readable():
        return process.stderr.read().strip()
    return ""


def _stop(process: subprocess.Popen[str], timeout_s: float = 5.0) -> int:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for stream in (process.stdout,):
        if stream is not None:
            stream.close()
    return process.returncode


def is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # no signal sent: only whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's, but there
    return not _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    """Ended, but not yet reaped by its parent (a run killed under a parent that has not
    waited for it): signal 0 still finds it, Linux's /proc says it is over."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False  # no /proc (macOS): signal 0's answer stands
    return stat.rpartition(")")[2].split()[0] == "Z"  # the state follows the command's name
