"""The CPU instructions a request costs, counted by valgrind's callgrind: the same count on a
fast or a slow minute of a shared machine (±1 %), so a change of a few percent shows where
timings drift by a tenth."""

from __future__ import annotations

import re
import signal
import subprocess
import tempfile
from pathlib import Path

from harness.client import EVALUATE, Route, send_requests
from harness.servers import launch, ready_url


def instructions_per_evaluate(
    name: str,
    requests: int,
    tree: Path | None = None,
    warm: int = 200,
    origin: str | None = None,
) -> float:
    """`instructions_per_request` of evaluate (`origin`: as its `Origin`)."""
    return instructions_per_request(name, requests, tree, warm, Route(origin=origin))


def instructions_per_request(
    name: str,
    requests: int,
    tree: Path | None = None,
    warm: int = 200,
    route: Route = EVALUATE,
) -> float:
    """The server `name` (`tree`: as `servers.started`'s) runs under callgrind with counting
    off until it is ready and has answered `warm` of `route`; one keep-alive connection then
    sends `requests` more, and only those are counted."""
    command, cwd, env = launch(name, tree)
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "callgrind.out"
        callgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
        process = subprocess.Popen(
            [*callgrind, f"--callgrind-out-file={out}", *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=cwd,
            env=env,
        )
        try:
            url = ready_url(process, f"{name} did not start under valgrind")
            send_requests(url, warm, route)  # first-request work is not what a request costs
            _instrumentation(process, "on")
            send_requests(url, requests, route)
            _instrumentation(process, "off")
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(60)
        return _total(out, name) / requests


def _instrumentation(process: subprocess.Popen[str], state: str) -> None:
    """Counting `on` or `off` in the running process (callgrind_control --instr)."""
    command = ["callgrind_control", "--instr", state, str(process.pid)]
    subprocess.run(command, check=True, capture_output=True)


def _total(out: Path, name: str) -> int:
    totals = re.search(r"^totals: (\d+)", out.read_text(), flags=re.M)
    if totals is None:
        raise RuntimeError(f"{name}: callgrind wrote no totals")
    return int(totals.group(1))
