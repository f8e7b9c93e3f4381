"""Load on a server: wrk on the load's CPU repeating one `Route`, the server's CPU per request
beside it, and rounds taken in turns so that drift on a shared machine hits every run alike;
or evaluates paced at a fixed rate, for the server's CPU under the same offered load."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from harness.client import (
    EVALUATE,
    Route,
    check_evaluate,
    connection_to,
    evaluate_headers,
    evaluate_once,
)
from harness.servers import BENCH, LOAD_CPU, Server

T = TypeVar("T")
K = TypeVar("K")


@dataclass
class Load:
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    non_2xx: int
    requests: int = 0
    cpu_us: float = float("nan")
    """Server CPU per request: steadier than req/s on a shared machine."""

    @property
    def failed(self) -> int:
        """Requests answered non-2xx or lost to a socket error: a refused request is cheap."""
        return self.non_2xx + self.errors


def measured(server: Server, connections: int, seconds: float, route: Route = EVALUATE) -> Load:
    """`wrk` against `server`, with the server's CPU per request over the run."""
    before = server.cpu_s
    load = wrk(server.url, connections, seconds, route)
    load.cpu_us = (server.cpu_s - before) / max(load.requests, 1) * 1e6
    return load


def wrk(url: str, connections: int, seconds: float, route: Route = EVALUATE) -> Load:
    """One wrk thread on LOAD_CPU keeping `connections` busy with `route` for `seconds`."""
    command = ["taskset", "-c", LOAD_CPU, "wrk", "-t1", f"-c{connections}", f"-d{seconds}s"]
    command += ["--latency", "--timeout", "5s", "-s", str(BENCH / "post.lua"), url]
    out = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=_wrk_environment(route),
        timeout=seconds + 30,
        check=True,
    ).stdout
    return _parsed(out)


def _wrk_environment(route: Route) -> dict[str, str]:
    """bench/post.lua's request, in BENCH_* variables (none left over from the caller's)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("BENCH_")}
    env |= {"BENCH_PATH": route.path, "BENCH_METHOD": route.method, "BENCH_TOKEN": route.token}
    if route.body is not None:
        env["BENCH_BODY"] = route.body
    if route.origin is not None:
        env["BENCH_ORIGIN"] = route.origin
    return env


def _parsed(out: str) -> Load:
    return Load(
        rps=float(_find(r"Requests/sec:\s+([\d.]+)", out)),
        p50_ms=_latency_ms(out, "50%"),
        p99_ms=_latency_ms(out, "99%"),
        errors=sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", out)),
        non_2xx=int(_find(r"Non-2xx or 3xx responses: (\d+)", out, "0")),
        requests=int(_find(r"(\d+) requests in", out)),
    )


def _find(pattern: str, text: str, default: str | None = None) -> str:
    match = re.search(pattern, text)
    if match:
        return match.group(1)
    if default is None:
        raise ValueError(f"{pattern!r} not in wrk output:\n{text}")
    return default


def _latency_ms(out: str, percentile: str) -> float:
    match = re.search(rf"{percentile}\s+([\d.]+)(us|ms|s)", out)
    if match is None:
        raise ValueError(f"no {percentile} latency in wrk output:\n{out}")
    value, unit = match.groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def alternated(runs: Mapping[K, Callable[[], T]], rounds: int) -> dict[K, list[T]]:
    """Each run once a round, the order swapped every round, so drift on the machine hits
    every run alike. A run's label is any key: a server's name, or a tuple (route, connections,
    server) when a round takes every cell of a table."""
    loads: dict[K, list[T]] = {label: [] for label in runs}
    for round_ in range(rounds):
        order = list(runs.items())
        for label, run in order if round_ % 2 == 0 else reversed(order):
            loads[label].append(run())
    return loads


def side_by_side(
    servers: Iterable[Server],
    connections: int,
    seconds: float,
    rounds: int,
    route: Route = EVALUATE,
) -> dict[str, list[Load]]:
    """`route` at `connections` on each server in turn, `rounds` times (`alternated`), by the
    servers' names: this checkout against a worktree's, one option on against off, or any
    server against aiohttp's ceiling."""
    runs = {
        server.name: functools.partial(measured, server, connections, seconds, route)
        for server in servers
    }
    return alternated(runs, rounds)


def warm_up(server: Server, seconds: float, connections: int = 16) -> None:
    """Checks `server` finds the bench flags, then loads it for `seconds` unmeasured: its
    journal fills, and every measured round then sees it full, as a long test session does."""
    check_evaluate(server.url + EVALUATE.path)
    measured(server, connections, seconds)


def pin_to_load_cpu() -> None:
    """Pins the calling thread (it alone) to the load's CPU: it is a client, not the server."""
    os.sched_setaffinity(0, {int(LOAD_CPU)})


@dataclass
class Paced:
    rate: float
    """Evaluates answered a second."""
    cpu_ms_per_s: float
    """The server's CPU time a second (user plus system, from /proc/<pid>/stat)."""
    cpu_us: float
    """The same per evaluate."""


def paced_round(server: Server, rate: float, seconds: float) -> Paced:
    """Evaluates at `rate` a second for `seconds`, from a thread on the load's CPU over one
    keep-alive connection: each sent at its time (at once when behind), so the server is
    offered the same load whatever else it does meanwhile (wrk offers as much as it takes)."""
    sent: list[int] = []
    cpu, began = server.cpu_s, time.perf_counter()
    sender = threading.Thread(target=_send_paced, args=(server.url, rate, seconds, sent))
    sender.start()
    sender.join()
    elapsed, cpu = time.perf_counter() - began, server.cpu_s - cpu
    if not sent or not sent[0]:
        raise RuntimeError("the paced client sent nothing")
    return Paced(sent[0] / elapsed, cpu / elapsed * 1000, cpu / sent[0] * 1e6)


def _send_paced(url: str, rate: float, seconds: float, sent: list[int]) -> None:
    """The paced client's thread; appends how many it sent to `sent`, even on failing."""
    pin_to_load_cpu()
    connection = connection_to(url, timeout=10)
    headers = evaluate_headers()
    began, count = time.perf_counter(), 0
    try:
        while (due := began + count / rate) < began + seconds:
            time.sleep(max(0.0, due - time.perf_counter()))
            evaluate_once(connection, headers)
            count += 1
    finally:
        connection.close()
        sent.append(count)
