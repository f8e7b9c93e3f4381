"""The servers a scenario measures, started pinned to one CPU and stopped by PID.

Three servers answer evaluate, capture and the vendor's /flags: this checkout's svc-stub, a bare
aiohttp app that does the same work with the standard `json` module (bench/baseline.py) and
aiohttp's ceiling (the same answers encoded once). svc-stub can also run from a `worktree` of
another commit, beside this checkout's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from harness.client import get
from stub.process import url_of

BENCH = Path(__file__).resolve().parents[1]
CHECKOUT = BENCH.parent
SERVER_CPU, LOAD_CPU = "0", "1"
"""The server on one CPU and whatever loads it on the other, so neither takes the other's."""
ANY_PORT = ["--port", "0"]
SERVERS = {
    "svc-stub": [sys.executable, "-m", "stub", *ANY_PORT],
    "bare aiohttp": [sys.executable, "-m", "bench.baseline"],
    "aiohttp ceiling": [sys.executable, "-m", "bench.baseline", "--fixed"],
}
"""Every server by name: each prints svc-stub's ready line once its port is bound. The baseline
runs as a module, as svc-stub does, so that its bytecode is cached too (a script is compiled
anew on every start: 2.7 ms)."""
COMMAND = Path(sys.executable).with_name("svc-stub")
"""The `svc-stub` command of this interpreter's environment: svc-stub as a test runner starts
it (`started(..., command=True)`), rather than `python -m stub`."""


@dataclass
class Server:
    """A started server (see `started`), read from /proc while it runs."""

    name: str
    """The label its figures print under."""
    process: subprocess.Popen[str]
    url: str
    startup_s: float

    @property
    def cpu_s(self) -> float:
        """User plus system CPU time so far: a host that steals CPU does not charge it here."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    @property
    def ran_s(self) -> float:
        """CPU time so far, every thread's, to the nanosecond (the scheduler's own count):
        `cpu_s` counts clock ticks of 10 ms, too coarse for a start-up."""
        tasks = Path(f"/proc/{self.process.pid}/task").iterdir()
        return sum(int((task / "schedstat").read_text().split()[0]) for task in tasks) / 1e9

    @property
    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        match = re.search(r"VmRSS:\s+(\d+) kB", status)
        return int(match.group(1)) / 1024 if match else float("nan")


@contextmanager
def started(
    name: str,
    *options: str,
    tree: Path | None = None,
    label: str | None = None,
    command: bool = False,
) -> Iterator[Server]:
    """The server `name` (see SERVERS) with `options`, healthy, stopped by PID on leaving.
    `tree`: a worktree of another commit (see `worktree`) whose svc-stub runs instead of this
    checkout's, named `svc-stub @ <commit>`. `label`: the name its figures print under.
    `command`: svc-stub started by its `svc-stub` command (COMMAND), from `tree` too."""
    began = time.perf_counter()
    command_line, cwd, env = launch(name, tree)
    if command:
        if name != "svc-stub":
            raise ValueError(f"only svc-stub has a command, not {name}")
        if not COMMAND.exists():
            raise RuntimeError(f"no {COMMAND}: install this checkout (pip install -e .)")
        command_line = [str(COMMAND), *ANY_PORT]
    process = subprocess.Popen(
        ["taskset", "-c", SERVER_CPU, *command_line, *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
        env=env,
    )
    try:
        url = ready_url(process, f"{name} did not start")
        get(url + "/health")
        default_label = name if tree is None else f"{name} @ {tree.name}"
        yield Server(label or default_label, process, url, time.perf_counter() - began)
    finally:
        stop(process)


def launch(name: str, tree: Path | None) -> tuple[list[str], Path, dict[str, str] | None]:
    """The command, working directory and environment that start `name`: from this checkout,
    or (svc-stub only) from `tree`, with that tree's own `stub` package first on the path and
    this checkout's interpreter and virtualenv."""
    if tree is None:
        return SERVERS[name], CHECKOUT, None
    if name != "svc-stub":
        raise ValueError(f"only svc-stub runs from another tree, not {name}")
    return SERVERS[name], tree, {**os.environ, "PYTHONPATH": str(tree)}


def ready_url(process: subprocess.Popen[str], failure: str) -> str:
    """The URL in the server's first line; RuntimeError(`failure`: the line) if it is not the
    ready line. Read with this checkout's `stub.process`, whichever tree the server runs
    from: an old commit prints the same line, and bench never imports its code."""
    assert process.stdout is not None
    line = process.stdout.readline()
    url = url_of(line)
    if url is None:
        raise RuntimeError(f"{failure}: {line!r}")
    return url


def stop(process: subprocess.Popen[str]) -> None:
    """SIGTERM, and SIGKILL if the process is still there after 5 s."""
    process.terminate()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def worktree(commit: str) -> Iterator[Path]:
    """A `git worktree` of `commit` in a temporary directory (named by the commit), checked to
    be the `stub` package its servers import, and removed afterwards."""
    git = ["git", "-C", str(CHECKOUT), "worktree"]
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / commit
        subprocess.run([*git, "add", "--quiet", "--detach", str(tree), commit], check=True)
        try:
            _check_imports_its_own_stub(tree, commit)
            yield tree
        finally:
            subprocess.run([*git, "remove", "--force", str(tree)], check=True)


def _check_imports_its_own_stub(tree: Path, commit: str) -> None:
    """An installed or this checkout's `stub` shadowing the tree's would measure the wrong
    commit without a word."""
    command, cwd, env = launch("svc-stub", tree)
    imported = subprocess.run(
        [command[0], "-c", "import stub; print(stub.__file__)"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(imported).resolve().is_relative_to(tree.resolve()):
        raise RuntimeError(f"the worktree of {commit} imports the stub from {imported}")
