"""Benchmark svc-stub against bare aiohttp, side by side in one run, on loopback only.

Each server is pinned to CPU 0 and wrk to CPU 1 (`taskset`); the two servers take turns under
the same load so drift on the machine hits both alike. Prints throughput ratios, p50/p99,
start-up to a healthy /health, RSS idle and after load, the 1,000-connection and the
delay-fault scenarios, the management plane's reads and a repeatable write against evaluate
on the same server (seeded from bench/management.yaml), evaluate with a per-key rate limit
that never fires against evaluate without one, evaluate in a namespace against the default one,
1,000 live namespaces (creation cost, RSS), the instructions an evaluate costs under
callgrind (steady where timings drift), the inspector's cost: evaluate against the commit
before it (BASELINE, run from a `git worktree`) with no page open, and with a simulated page
open against none; and CORS's: evaluate with no Origin against the commit before it, and a
cross-origin evaluate against a same-origin one. Every process it starts is stopped by PID.
Needs `wrk` and `valgrind` (Debian: wrk, valgrind).

    python bench/run.py                       # about twelve minutes
    python bench/run.py --quick               # shorter runs, for a smoke check
    python bench/run.py --only startup        # one scenario (repeatable; see SCENARIOS)
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the stub's own defaults, from the checkout
from stub.config import DEFAULT_MAX_RECORDED, DEFAULT_NAMESPACE_MAX_RECORDED  # noqa: E402

T = TypeVar("T")

SERVER_CPU, LOAD_CPU = "0", "1"
EVALUATE_BODY = json.dumps({"targetingKey": "user-1", "flagKeys": ["checkout-v2", "pricing-page"]})
ROUTE_BODIES = {
    "/v1/capture": {"events": [{"type": "exposure", "targetingKey": "u", "flagKey": "k"}]},
    "/flags": {"api_key": "phc", "distinct_id": "u", "flag_keys_to_evaluate": ["checkout-v2"]},
}
MANAGEMENT_KEY = "svc_org_bench"
"""The bench organisation's key, seeded by MANAGEMENT_SEED with one project."""
MANAGEMENT_SEED = (
    "--fixtures",
    str(HERE.parent / "fixtures"),
    "--fixtures",
    str(HERE / "management.yaml"),
)
"""The default fixtures (evaluate's flags) and then the bench organisation."""
PROJECT = "/v1/projects/proj_bench"
SEEDED_ENVIRONMENTS = 4
SERVERS = {
    "svc-stub": [sys.executable, "-m", "stub", "--port", "0"],
    "bare aiohttp": [sys.executable, str(HERE / "baseline.py")],
    "aiohttp ceiling": [sys.executable, str(HERE / "baseline.py"), "--fixed"],
}
READY = "svc-stub listening on "
YAML = "application/yaml"
NEVER_FIRES = 1_000_000.0
"""A per-key rate limit (requests a second) far above anything one key sends here."""
RATE_LIMIT_BOUND = 1.03
"""The issue's bound on evaluate's CPU per request, limit on over off."""


@dataclass
class Server:
    name: str
    process: subprocess.Popen[str]
    url: str
    startup_s: float

    @property
    def cpu_s(self) -> float:
        """User plus system CPU time so far: a host that steals CPU does not charge it here."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    @property
    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        match = re.search(r"VmRSS:\s+(\d+) kB", status)
        return int(match.group(1)) / 1024 if match else float("nan")


@dataclass(frozen=True)
class Route:
    """The one request wrk repeats in a scenario (bench/post.lua reads it from the environment)."""

    path: str = "/v1/flags/evaluate"
    method: str = "POST"
    body: str | None = EVALUATE_BODY
    token: str = "bench-key"
    origin: str | None = None
    """Sent as `Origin`: a page on another origin calls (the answer then carries CORS)."""

    @property
    def label(self) -> str:
        return self.path if self.method == "POST" else f"{self.method} {self.path}"


EVALUATE = Route()
MANAGEMENT_ROUTES = (
    Route(PROJECT, "GET", None, MANAGEMENT_KEY),
    Route(PROJECT + "/environments", "GET", None, MANAGEMENT_KEY),
    # Sets the same name every time: repeats forever without growing state or conflicting.
    Route(PROJECT, "PATCH", json.dumps({"name": "Bench renamed"}), MANAGEMENT_KEY),
)


def posted(path: str) -> Route:
    return Route(path, body=json.dumps(ROUTE_BODIES[path]))


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


@contextmanager
def started(name: str, *options: str, tree: Path | None = None) -> Iterator[Server]:
    """`tree`: a worktree of another commit (see `worktree`) whose svc-stub runs instead of
    this checkout's, named `svc-stub @ <commit>`."""
    began = time.perf_counter()
    command, cwd, env = _launch(name, tree)
    process = subprocess.Popen(
        ["taskset", "-c", SERVER_CPU, *command, *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
        env=env,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith(READY):
            raise RuntimeError(f"{name} did not start: {line!r}")
        url = line[len(READY) :].strip()
        get(url + "/health")
        label = name if tree is None else f"{name} @ {tree.name}"
        yield Server(label, process, url, time.perf_counter() - began)
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _launch(name: str, tree: Path | None) -> tuple[list[str], Path, dict[str, str] | None]:
    """The command, working directory and environment that start `name`: from this checkout,
    or (svc-stub only) from `tree`, with that tree's own `stub` package first on the path and
    this checkout's interpreter and virtualenv."""
    if tree is None:
        return SERVERS[name], HERE.parent, None
    if name != "svc-stub":
        raise ValueError(f"only svc-stub runs from another tree, not {name}")
    return SERVERS[name], tree, {**os.environ, "PYTHONPATH": str(tree)}


@contextmanager
def worktree(commit: str) -> Iterator[Path]:
    """A `git worktree` of `commit` in a temporary directory (named by the commit), checked to
    be the `stub` package its servers import, and removed afterwards."""
    git = ["git", "-C", str(HERE.parent), "worktree"]
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / commit
        subprocess.run([*git, "add", "--quiet", "--detach", str(tree), commit], check=True)
        try:
            command, cwd, env = _launch("svc-stub", tree)
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
            yield tree
        finally:
            subprocess.run([*git, "remove", "--force", str(tree)], check=True)


def get(
    url: str,
    body: bytes | None = None,
    timeout: float = 5,
    method: str | None = None,
    token: str | None = None,
    content_type: str = "application/json",
) -> bytes:
    headers = {"Content-Type": content_type}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=body, headers=headers, method=method)
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        received: bytes = answer.read()
        return received


def measured(server: Server, connections: int, seconds: float, route: Route = EVALUATE) -> Load:
    before = server.cpu_s
    load = wrk(server.url, connections, seconds, route)
    load.cpu_us = (server.cpu_s - before) / max(load.requests, 1) * 1e6
    return load


def wrk(url: str, connections: int, seconds: float, route: Route = EVALUATE) -> Load:
    env = {name: value for name, value in os.environ.items() if not name.startswith("BENCH_")}
    env |= {"BENCH_PATH": route.path, "BENCH_METHOD": route.method, "BENCH_TOKEN": route.token}
    if route.body is not None:
        env["BENCH_BODY"] = route.body
    if route.origin is not None:
        env["BENCH_ORIGIN"] = route.origin
    out = subprocess.run(
        [
            "taskset",
            "-c",
            LOAD_CPU,
            "wrk",
            "-t1",
            f"-c{connections}",
            f"-d{seconds}s",
            "--latency",
            "--timeout",
            "5s",
            "-s",
            str(HERE / "post.lua"),
            url,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=seconds + 30,
        check=True,
    ).stdout
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
    value, unit = re.search(rf"{percentile}\s+([\d.]+)(us|ms|s)", out).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def throughput(seconds: float, rounds: int) -> None:
    print("\n## Evaluate throughput (keep-alive POST, two keys)\n")
    print(
        "| connections | svc-stub req/s | bare aiohttp req/s | ceiling req/s | ratio to bare "
        "| CPU per request, stub / bare (ratio) | svc-stub p50 / p99 | bare p50 / p99 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    with (
        started("svc-stub", *MANAGEMENT_SEED) as stub,
        started("bare aiohttp") as bare,
        started("aiohttp ceiling") as ceiling,
    ):
        for connections in (1, 16, 64):
            results: dict[str, list[Load]] = {stub.name: [], bare.name: [], ceiling.name: []}
            for _ in range(rounds):  # alternate, so drift hits all alike
                for server in (stub, bare, ceiling):
                    results[server.name].append(measured(server, connections, seconds))
            best = {name: max(loads, key=lambda load: load.rps) for name, loads in results.items()}
            cpu = {name: min(load.cpu_us for load in loads) for name, loads in results.items()}
            s, b, c = best[stub.name], best[bare.name], best[ceiling.name]
            print(
                f"| {connections} | {s.rps:,.0f} | {b.rps:,.0f} | {c.rps:,.0f} | "
                f"{s.rps / b.rps:.2f} | "
                f"{cpu[stub.name]:.1f} / {cpu[bare.name]:.1f} µs "
                f"({cpu[bare.name] / cpu[stub.name]:.2f}); ceiling {cpu[ceiling.name]:.1f} µs | "
                f"{s.p50_ms:.2f} / {s.p99_ms:.2f} ms | {b.p50_ms:.2f} / {b.p99_ms:.2f} ms |"
            )
        print("\nOther routes, 64 connections, against evaluate on the same server:\n")
        print("| route | req/s | CPU per request | CPU relative to evaluate |")
        print("|---|---|---|---|")
        evaluate = min((measured(stub, 64, seconds) for _ in range(2)), key=lambda x: x.cpu_us)
        for route in ("/v1/capture", "/flags"):
            load = min(
                (measured(stub, 64, seconds, posted(route)) for _ in range(2)),
                key=lambda x: x.cpu_us,
            )
            print(
                f"| {route} | {load.rps:,.0f} | {load.cpu_us:.1f} µs | "
                f"{load.cpu_us / evaluate.cpu_us:.2f} |"
            )
        management(stub, seconds, evaluate)


def management(stub: Server, seconds: float, evaluate: Load) -> None:
    """The management plane's reads and a write, against the evaluate figure just taken."""
    check_management(stub.url)
    print(
        f"\nManagement plane (organisation key, seeded project with {SEEDED_ENVIRONMENTS} "
        "environments), 64 connections, against evaluate on the same server:\n"
    )
    print("| route | req/s | CPU per request | CPU relative to evaluate | failed requests |")
    print("|---|---|---|---|---|")
    for route in MANAGEMENT_ROUTES:
        loads = [measured(stub, 64, seconds, route) for _ in range(2)]
        load = min(loads, key=lambda x: x.cpu_us)
        failed = sum(one.non_2xx + one.errors for one in loads)
        verdict = f"**{failed:,} FAILED** (non-2xx or socket errors)" if failed else "0"
        print(
            f"| {route.label} | {load.rps:,.0f} | {load.cpu_us:.1f} µs | "
            f"{load.cpu_us / evaluate.cpu_us:.2f} | {verdict} |"
        )


def check_management(url: str) -> None:
    """Each management request answers 200 with the seeded rows before it is measured: a 401
    or 404 is cheap, and would make the plane look faster than it is."""
    answers = {
        route: json.loads(
            get(
                url + route.path,
                route.body.encode() if route.body is not None else None,
                method=route.method,
                token=route.token,
            )
        )
        for route in MANAGEMENT_ROUTES
    }
    project, environments, patched = (answers[route] for route in MANAGEMENT_ROUTES)
    if project["project"]["projectId"] != "proj_bench":
        raise RuntimeError(f"GET {PROJECT}: not the seeded project: {project}")
    if len(environments["environments"]) != SEEDED_ENVIRONMENTS:
        raise RuntimeError(f"GET {PROJECT}/environments: not the seeded ones: {environments}")
    if patched["project"]["name"] != "Bench renamed":
        raise RuntimeError(f"PATCH {PROJECT}: the name did not change: {patched}")


def rate_limit_cost(round_s: float, rounds: int, connections: int = 16) -> None:
    """Evaluate on a stub with `--rate-limit` set too high to fire against one without it: the
    key checks run in both, so the difference is the limiter. Two servers in turn, the order
    swapped every round; a 429 is cheap, so any non-2xx fails the run."""
    print(
        f"\n## Rate limit on ({NEVER_FIRES:,.0f}/s, never fires) against off: evaluate, "
        f"{connections} connections, {rounds} alternating rounds of {round_s:g} s\n"
    )
    with (
        started("svc-stub", "--rate-limit", f"{NEVER_FIRES:.0f}/s") as on,
        started("svc-stub") as off,
    ):
        check_rate_limit(on.url, NEVER_FIRES)
        check_rate_limit(off.url, None)
        runs = {
            "limit on": lambda: measured(on, connections, round_s),
            "limit off": lambda: measured(off, connections, round_s),
        }
        _ratio_table(alternated(runs, rounds), "limit on", "limit off", RATE_LIMIT_BOUND)


def check_rate_limit(url: str, per_second: float | None) -> None:
    """The stub runs with the limit it was started with, and evaluate answers 200 with both
    decisions found (a 401 or 429 would be cheaper than a real answer)."""
    limits = json.loads(get(url + "/_test/rate-limit"))
    if limits.get("perSecond") != per_second or limits.get("perKey"):
        raise RuntimeError(f"{url}: expected a limit of {per_second} a second, got {limits}")
    check_evaluate(url + EVALUATE.path)


WATCH_BOUND = 1.05
"""A request's CPU with `--watch` over the same without: the poll runs beside requests, so
this is noise around 1."""


def watch_cost(round_s: float, rounds: int, connections: int = 16) -> None:
    """Evaluate on a stub watching its fixture file against one that is not, in alternating
    rounds: the difference is the four polls a second, which no request waits on."""
    print(
        f"\n## --watch on against off: evaluate, {connections} connections, {rounds} "
        f"alternating rounds of {round_s:g} s\n"
    )
    fixtures = ("--fixtures", str(HERE.parent / "fixtures" / "default.yaml"))
    with started("svc-stub", *fixtures, "--watch") as on, started("svc-stub", *fixtures) as off:
        if json.loads(get(on.url + "/_test/fixtures"))["watching"] is not True:
            raise RuntimeError("watch scenario: the stub is not watching its fixtures")
        for server in (on, off):
            check_evaluate(server.url + EVALUATE.path)
        runs = {
            "watch on": lambda: measured(on, connections, round_s),
            "watch off": lambda: measured(off, connections, round_s),
        }
        _ratio_table(alternated(runs, rounds), "watch on", "watch off", WATCH_BOUND)


NAMESPACE_BOUND = 1.05
"""The issue's bound on a request's CPU in a namespace over the same in the default one."""
LIVE_NAMESPACES = 1_000


def namespace_cost(round_s: float, rounds: int, connections: int = 16) -> None:
    """Evaluate through a `/ns/{name}` prefix against the same request with none, on one
    server, in alternating rounds: the difference is taking the prefix off and picking the
    namespace."""
    print(
        f"\n## A request in a namespace against the default namespace: evaluate, "
        f"{connections} connections, {rounds} alternating rounds of {round_s:g} s\n"
    )
    routes = {"default": EVALUATE, "namespace": Route("/ns/bench/v1/flags/evaluate")}
    with started("svc-stub") as stub:
        for route in routes.values():
            check_evaluate(stub.url + route.path)
        runs = {
            label: functools.partial(measured, stub, connections, round_s, route)
            for label, route in routes.items()
        }
        _ratio_table(alternated(runs, rounds), "namespace", "default", NAMESPACE_BOUND)
        held = json.loads(get(stub.url + "/_test/namespaces/bench"))["recorded"]["requests"]
        if held == 0:
            raise RuntimeError("namespace scenario: nothing was recorded in the namespace")


def alternated(runs: Mapping[str, Callable[[], T]], rounds: int) -> dict[str, list[T]]:
    """Each run once a round, the order swapped every round, so drift on the machine hits
    every run alike."""
    loads: dict[str, list[T]] = {label: [] for label in runs}
    for round_ in range(rounds):
        order = list(runs.items())
        for label, run in order if round_ % 2 == 0 else reversed(order):
            loads[label].append(run())
    return loads


def _ratio_table(loads: dict[str, list[Load]], over: str, under: str, bound: float) -> None:
    failed = {label: sum(one.non_2xx + one.errors for one in runs) for label, runs in loads.items()}
    print("| run | median req/s | CPU per request, median (min) | failed requests |")
    print("|---|---|---|---|")
    for label, runs in loads.items():
        print(
            f"| {label} | {statistics.median(one.rps for one in runs):,.0f} | "
            f"{statistics.median(one.cpu_us for one in runs):.2f} µs "
            f"({min(one.cpu_us for one in runs):.2f} µs) | {failed[label]:,} |"
        )
    ratios = [a.cpu_us / b.cpu_us for a, b in zip(loads[over], loads[under], strict=True)]
    median = statistics.median(ratios)
    print(
        f"\nCPU per request, {over} / {under}: median of per-round ratios {median:.3f} "
        f"(range {min(ratios):.3f}-{max(ratios):.3f}; bound < {bound}: "
        f"{'met' if median < bound else '**NOT MET**'}); per round: "
        + ", ".join(f"{ratio:.3f}" for ratio in ratios)
    )
    if any(failed.values()):
        raise RuntimeError(
            f"requests failed (non-2xx or socket errors): {failed}; a refused request is "
            "cheap, so the ratio above means nothing"
        )


def check_evaluate(url: str) -> None:
    answer = json.loads(get(url, EVALUATE_BODY.encode(), token=EVALUATE.token))
    found = [decision["flagKey"] for decision in answer["decisions"] if decision["found"]]
    if found != json.loads(EVALUATE_BODY)["flagKeys"]:
        raise RuntimeError(f"{url}: evaluate did not find the bench flags: {answer}")


def live_namespaces(per_list: int, threads: int = 8) -> None:
    """1,000 namespaces, each filled as a test would leave it and then to its recording bound:
    RSS before and after, and what creating one costs the server."""
    print(f"\n## {LIVE_NAMESPACES:,} live namespaces\n")
    with started("svc-stub") as stub:
        idle = stub.rss_mb
        host, port = stub.url.removeprefix("http://").split(":")

        def call(
            connection: http.client.HTTPConnection, method: str, path: str, body: object = None
        ) -> int:
            data = None if body is None else json.dumps(body)
            headers = {"Authorization": "Bearer bench-key", "Content-Type": "application/json"}
            connection.request(method, path, data, headers)
            answer = connection.getresponse()
            answer.read()
            if answer.status >= 300:
                raise RuntimeError(f"{method} {path}: {answer.status}")
            return answer.status

        def create(names: list[str]) -> None:
            connection = http.client.HTTPConnection(host, int(port), timeout=10)
            for name in names:
                call(connection, "POST", "/_test/namespaces", {"name": name})
            connection.close()

        def health(count: int) -> None:
            connection = http.client.HTTPConnection(host, int(port), timeout=10)
            for _ in range(count):
                call(connection, "GET", "/health")
            connection.close()

        names = [f"test-{n:04d}" for n in range(LIVE_NAMESPACES)]
        before = stub.cpu_s
        health(LIVE_NAMESPACES)
        health_cpu = stub.cpu_s - before
        before = stub.cpu_s
        create(names)
        create_cpu = stub.cpu_s - before
        created = stub.rss_mb
        print(
            f"- Creating one: {create_cpu / LIVE_NAMESPACES * 1000:.3f} ms of server CPU per "
            f"`POST /_test/namespaces` ({health_cpu / LIVE_NAMESPACES * 1000:.3f} ms for a "
            f"`GET /health` on the same connection); RSS {idle:.1f} MB idle, "
            f"{created:.1f} MB with {LIVE_NAMESPACES:,} empty namespaces"
        )

        def fill(names: list[str], events: int, registrations: int) -> None:
            """What a test leaves: an evaluation, a capture and a batch of `events` each, and
            `registrations` target registrations."""
            connection = http.client.HTTPConnection(host, int(port), timeout=10)
            for name in names:
                prefix = f"/ns/{name}"
                try:
                    call(
                        connection, "POST", prefix + "/v1/flags/evaluate", json.loads(EVALUATE_BODY)
                    )
                except RuntimeError:
                    if registrations:  # filling to the bound evicts the least recently used
                        raise
                    continue
                exposures = [_exposure(name, k) for k in range(events)]
                call(connection, "POST", prefix + "/v1/capture", {"events": exposures})
                batch = [_vendor_event(name, k) for k in range(events)]
                call(connection, "POST", prefix + "/batch/", {"api_key": "phc", "batch": batch})
                for k in range(registrations):
                    target = {"targetingKey": f"{name}-{k}", "kind": "user"}
                    call(connection, "POST", prefix + "/v1/targets/register", target)
            connection.close()

        def in_threads(events: int, registrations: int) -> dict[str, Any]:
            chunks = [names[n::threads] for n in range(threads)]
            workers = [
                threading.Thread(target=fill, args=(chunk, events, registrations))
                for chunk in chunks
            ]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
            listed: dict[str, Any] = json.loads(get(stub.url + "/_test/namespaces"))
            return listed

        listed = in_threads(events=10, registrations=10)
        held = listed["namespaces"][-1]["recorded"]
        print(
            f"- {listed['count']:,} namespaces each holding what a test leaves ({held}): "
            f"RSS {stub.rss_mb:.1f} MB; {listed['recorded']:,} entries together, "
            f"{listed['evicted']} evicted"
        )
        if listed["count"] != LIVE_NAMESPACES or listed["evicted"]:
            raise RuntimeError(f"namespaces were lost: {listed}")
        listed = in_threads(events=per_list, registrations=0)
        print(
            f"- The same {LIVE_NAMESPACES:,} each then sent {per_list:,} events and "
            f"{per_list:,} vendor events (their lists' bound): RSS {stub.rss_mb:.1f} MB; "
            f"{listed['recorded']:,} entries together (bound {listed['maxRecorded']:,}), "
            f"{listed['evicted']:,} least recently used evicted, {listed['count']:,} live"
        )


def _exposure(name: str, k: int) -> dict[str, object]:
    return {
        "type": "exposure",
        "targetingKey": f"{name}-user-{k}",
        "flagKey": "checkout-v2",
        "value": "treatment-b",
        "variant": "treatment-b",
    }


def _vendor_event(name: str, k: int) -> dict[str, object]:
    return {
        "event": "$feature_flag_called",
        "distinct_id": f"{name}-user-{k}",
        "properties": {
            "$feature_flag": "checkout-v2",
            "$feature_flag_response": "treatment-b",
            "$lib": "posthog-python",
        },
    }


STARTUP_BOUND = 1.10
"""The issue's bound on the stub's start-up over a bare aiohttp app's."""


def startup(times: int) -> None:
    """Spawn to a healthy /health, the stub and a bare aiohttp app taking turns (the order
    swapped every round), with the stub's bytecode compiled first, as an installed wheel has
    it: what every CI job and every test session pays."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(HERE.parent / "stub")], check=True
    )
    print(f"\n## Start-up to a healthy /health, and idle RSS ({times} alternating rounds)\n")
    names = ("svc-stub", "bare aiohttp")
    samples: dict[str, list[float]] = {name: [] for name in names}
    rss: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(times):
        for name in names if round_ % 2 == 0 else reversed(names):
            with started(name) as server:
                samples[name].append(server.startup_s)
                rss[name].append(server.rss_mb)
    print("| server | median start-up | idle RSS |")
    print("|---|---|---|")
    for name in names:
        print(
            f"| {name} | {statistics.median(samples[name]) * 1000:.0f} ms "
            f"| {statistics.median(rss[name]):.1f} MB |"
        )
    ratios = [
        stub / bare for stub, bare in zip(samples["svc-stub"], samples["bare aiohttp"], strict=True)
    ]
    median = statistics.median(ratios)
    print(
        f"\nStart-up, svc-stub / bare aiohttp: median of per-round ratios {median:.3f} "
        f"(range {min(ratios):.3f}-{max(ratios):.3f}; bound < {STARTUP_BOUND}: "
        f"{'met' if median < STARTUP_BOUND else '**NOT MET**'})"
    )


def instructions(requests: int) -> None:
    """CPU instructions a request costs, counted by valgrind's callgrind: the same count on a
    fast or a slow minute of a shared machine (±1 %), so a change of a few percent shows. Each
    server runs under callgrind with counting off until it is ready and warmed up; one
    keep-alive connection then sends `requests` evaluates, and only those are counted."""
    print(f"\n## Instructions per evaluate (callgrind, {requests:,} requests, one connection)\n")
    counted = {name: _instructions(name, requests) for name in SERVERS}
    print("| server | instructions per request | relative to bare aiohttp |")
    print("|---|---|---|")
    for name, count in counted.items():
        print(f"| {name} | {count:,.0f} | {count / counted['bare aiohttp']:.3f} |")


def _instructions(
    name: str,
    requests: int,
    tree: Path | None = None,
    warm: int = 200,
    origin: str | None = None,
) -> float:
    """`tree`: as `started`'s; `warm`: evaluates sent before counting starts; `origin`: sent
    as the evaluates' `Origin`."""
    server, cwd, env = _launch(name, tree)
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "callgrind.out"
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
        command += [f"--callgrind-out-file={out}", *server]
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=cwd, env=env
        )
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            if not line.startswith(READY):
                raise RuntimeError(f"{name} did not start under valgrind: {line!r}")
            port = int(line.rsplit(":", 1)[1])
            _evaluates(port, warm, origin)  # first-request work is not what a request costs
            toggle = ["callgrind_control", "--instr"]
            subprocess.run([*toggle, "on", str(process.pid)], check=True, capture_output=True)
            _evaluates(port, requests, origin)
            subprocess.run([*toggle, "off", str(process.pid)], check=True, capture_output=True)
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(60)
        totals = re.search(r"^totals: (\d+)", out.read_text(), flags=re.M)
        if totals is None:
            raise RuntimeError(f"{name}: callgrind wrote no totals")
        return int(totals.group(1)) / requests


def _evaluates(port: int, count: int, origin: str | None = None) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Bearer {EVALUATE.token}", "Content-Type": "application/json"}
    if origin is not None:
        headers["Origin"] = origin
    try:
        for _ in range(count):
            connection.request("POST", EVALUATE.path, EVALUATE_BODY, headers)
            answer = connection.getresponse()
            answer.read()
            if answer.status != 200:
                raise RuntimeError(f"evaluate answered {answer.status}")
    finally:
        connection.close()


def thousand_connections(seconds: float) -> None:
    print("\n## 1,000 concurrent connections (svc-stub)\n")
    with started("svc-stub") as stub:
        probes: list[float] = []
        done = threading.Event()

        def probe() -> None:
            while not done.is_set():
                began = time.perf_counter()
                get(stub.url + "/health", timeout=10)
                probes.append(time.perf_counter() - began)
                time.sleep(0.2)

        prober = threading.Thread(target=probe)
        prober.start()
        load = wrk(stub.url, 1000, seconds)
        done.set()
        prober.join()
        print(
            f"- {load.rps:,.0f} req/s, p99 {load.p99_ms:.1f} ms, socket errors {load.errors}, "
            f"non-2xx {load.non_2xx}"
        )
        print(
            f"- /health during the load: slowest of {len(probes)} probes "
            f"{max(probes) * 1000:.0f} ms"
        )
        print(f"- RSS after: {stub.rss_mb:.1f} MB")


def delayed(seconds: float, delay_ms: int = 50, connections: int = 1000) -> None:
    print(f"\n## {connections:,} concurrent requests, each delayed {delay_ms} ms by a fault\n")
    with started("svc-stub") as stub:
        get(
            stub.url + "/_test/fault",
            json.dumps({"mode": "delay", "delayMs": delay_ms, "applyTo": "evaluate"}).encode(),
        )
        load = wrk(stub.url, connections, seconds)
        ideal = connections / (delay_ms / 1000)
        print(
            f"- {load.rps:,.0f} req/s of an ideal {ideal:,.0f} ({load.rps / ideal:.0%}), "
            f"p50 {load.p50_ms:.0f} ms, p99 {load.p99_ms:.0f} ms, errors {load.errors}"
        )


def stop(rounds: int) -> None:
    """SIGTERM with a 10 s delay fault in flight, to the process's exit."""
    print(f"\n## Stop on SIGTERM with a 10 s delay in flight ({rounds} rounds)\n")
    took: list[float] = []
    for _ in range(rounds):
        with started("svc-stub") as stub:
            armed = {"mode": "delay", "delayMs": 10_000, "applyTo": "evaluate"}
            get(stub.url + "/_test/fault", json.dumps(armed).encode())
            in_flight = threading.Thread(target=_evaluate_ignoring_the_end, args=(stub.url,))
            in_flight.start()
            time.sleep(0.3)
            began = time.perf_counter()
            stub.process.send_signal(signal.SIGTERM)
            stub.process.wait(10)
            took.append(time.perf_counter() - began)
            in_flight.join()
    print(f"- to exit: median {statistics.median(took):.3f} s, slowest {max(took):.3f} s")


def _evaluate_ignoring_the_end(url: str) -> None:
    with contextlib.suppress(OSError):  # the stub stops under it: any ending will do
        get(url + EVALUATE.path, EVALUATE_BODY.encode(), timeout=15, token="bench")


def fixture_documents() -> None:
    """/health while a 1 MB YAML document is posted (parsed off the event loop), and what an
    alias-heavy document costs, refused and accepted."""
    print("\n## Fixture documents: /health during a 1 MB post, and what aliases cost\n")
    rows = "".join(
        f"  flag-{n}: {{type: object, value: {{a: [1, 2, 3, 'text {n}'], b: {{c: x}}}}}}\n"
        for n in range(13_000)
    )
    document = f"flags:\n{rows}".encode()
    with started("svc-stub", "--max-body-bytes", str(4 << 20)) as stub:
        probes: list[float] = []
        done = threading.Event()

        def upload() -> None:
            get(stub.url + "/_test/fixtures", document, 120, content_type=YAML)
            done.set()

        began = time.perf_counter()
        threading.Thread(target=upload).start()
        while not done.is_set():
            sent = time.perf_counter()
            get(stub.url + "/health")
            probes.append(time.perf_counter() - sent)
            time.sleep(0.02)
        posted_s = time.perf_counter() - began
        print(
            f"- {len(document) / 1e6:.2f} MB of YAML ({13_000:,} flags) served after "
            f"{posted_s:.2f} s; /health meanwhile: {len(probes)} probes, median "
            f"{statistics.median(probes) * 1000:.1f} ms, slowest {max(probes) * 1000:.1f} ms"
        )
    with started("svc-stub") as stub:
        before = stub.rss_mb
        for name, text in (
            ("8 KB alias bomb", _aliased(1000, 1000, 40)),
            ("one within the bound", _aliased(20, 20, 9, '"xxxxxxx"')),
        ):
            try:
                get(stub.url + "/_test/fixtures", text.encode(), 60, content_type=YAML)
                outcome = "served"
            except urllib.error.HTTPError as refused:
                outcome = f"refused, {refused.code}"
                refused.close()
            print(f"- {name} ({len(text):,} bytes): {outcome}; RSS +{stub.rss_mb - before:.1f} MB")


def _aliased(values: int, uses: int, flags: int, value: str = "1") -> str:
    """A fixture document whose aliases expand it (as tests/test_shared_stub.py's)."""
    base = f"&a [{', '.join([value] * values)}]"
    wide = f"&b [{', '.join(['*a'] * uses)}]"
    first = f"  f0: {{type: object, value: {{base: {base}, w: {wide}}}}}\n"
    rows = "".join(f"  f{n}: {{type: object, value: {{w: *b}}}}\n" for n in range(1, flags))
    return f"flags:\n{first}{rows}"


PROXY_BOUND_MS = 1.0
"""The issue's bound on what proxy mode adds to a request's median latency."""


def proxy_latency(requests: int, rounds: int) -> None:
    """Sequential evaluates on one keep-alive connection, straight to an upstream (a second
    svc-stub) and through svc-stub in front of it (`--upstream`), taking turns."""
    print(f"\n## Proxy mode: median latency added ({rounds} rounds of {requests:,} requests)\n")
    with started("svc-stub") as upstream, started("svc-stub", "--upstream", upstream.url) as proxy:
        direct: list[float] = []
        through: list[float] = []
        for _ in range(rounds):
            direct.append(_median_latency_ms(upstream.url, requests))
            through.append(_median_latency_ms(proxy.url, requests))
    added = statistics.median(through) - statistics.median(direct)
    print(f"- straight to the upstream: median {statistics.median(direct):.3f} ms")
    print(f"- through svc-stub --upstream: median {statistics.median(through):.3f} ms")
    verdict = "met" if added <= PROXY_BOUND_MS else "**NOT MET**"
    print(f"- added: {added:.3f} ms (bound {PROXY_BOUND_MS} ms: {verdict})")


def _median_latency_ms(url: str, count: int) -> float:
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    headers = {"Authorization": f"Bearer {EVALUATE.token}", "Content-Type": "application/json"}
    took: list[float] = []
    try:
        for _ in range(count):
            began = time.perf_counter()
            connection.request("POST", EVALUATE.path, EVALUATE_BODY, headers)
            answer = connection.getresponse()
            answer.read()
            took.append((time.perf_counter() - began) * 1000)
            if answer.status != 200:
                raise RuntimeError(f"evaluate answered {answer.status}")
    finally:
        connection.close()
    return statistics.median(took)


BASELINE = "8c178b9"
"""The commit before the journal kept each request's body and answer and the inspector page
came: `inspector` runs its svc-stub, from a worktree, beside this checkout's."""
SAME_BOUND = 1.05
"""CPU per evaluate, this checkout over BASELINE with no page open: noise around 1."""
PAGE_BOUND = 0.90
"""The issue's bound on evaluate's throughput with an inspector page open over without."""
PAGE_RATE = 1000
"""Evaluates a second, the fixed offered load the page's CPU is measured under."""
PAGE_WAIT_MS = 25_000
"""The page's long-poll, as `/_test/ui` sends it."""


def inspector(round_s: float, rounds: int, paced_s: float, paced_rounds: int, calls: int) -> None:
    """What the inspector costs. With no page open: evaluate's instructions (callgrind) and
    throughput against BASELINE's, in alternating rounds. With a page open (`Page`) against
    none, on one server: evaluate's throughput under wrk, and the server's CPU a second at a
    fixed PAGE_RATE evaluates a second."""
    with worktree(BASELINE) as tree:
        print(f"\n## The inspector: evaluate at this checkout against {tree.name}, no page open\n")
        against_baseline(tree, round_s, rounds, calls)
    print("\n## The inspector: evaluate with a page open against none (one server)\n")
    with started("svc-stub") as stub:
        check_evaluate(stub.url + EVALUATE.path)
        measured(stub, 16, round_s)  # fills the journal: what every round then sees
        page_throughput(stub, round_s, rounds)
        page_at_fixed_load(stub, paced_s, paced_rounds)


def against_baseline(tree: Path, round_s: float, rounds: int, calls: int) -> None:
    """Evaluate's instructions and throughput at this checkout against `tree`'s svc-stub."""
    before = f"svc-stub @ {tree.name}"
    warm = DEFAULT_MAX_RECORDED + 200  # the journal full: each request also drops the oldest
    print(
        f"Instructions per evaluate (callgrind, {calls:,} requests on one connection, after "
        f"{warm:,} that fill the journal):\n"
    )
    counted = {"svc-stub": _instructions("svc-stub", calls, warm=warm)}
    counted[before] = _instructions("svc-stub", calls, tree, warm)
    print(f"| server | instructions per request | relative to {tree.name} |")
    print("|---|---|---|")
    for label, count in counted.items():
        print(f"| {label} | {count:,.0f} | {count / counted[before]:.3f} |")
    print(f"\nEvaluate, 16 connections, {rounds} alternating rounds of {round_s:g} s:\n")
    with started("svc-stub") as new, started("svc-stub", tree=tree) as old:
        for server in (new, old):
            check_evaluate(server.url + EVALUATE.path)
            measured(server, 16, round_s)  # fills the journal: what every round then sees
        runs = {
            server.name: functools.partial(measured, server, 16, round_s) for server in (new, old)
        }
        loads = alternated(runs, rounds)
        _ratio_table(loads, new.name, old.name, SAME_BOUND)
        _rps_ratio(loads, new.name, old.name)


CORS_BASELINE = "428762e"
"""The commit before the runtime plane answered pages on other origins: `cors` runs its
svc-stub, from a worktree, beside this checkout's."""
CROSS_ORIGIN_BOUND = 1.05
"""The issue's bound on a cross-origin evaluate's cost over a same-origin one."""
PAGE_ORIGIN = "http://localhost:5173"


def cors(round_s: float, rounds: int, calls: int) -> None:
    """What answering pages costs. A request with no `Origin` (every server-side client's):
    evaluate against CORS_BASELINE's. A cross-origin evaluate (its answer carries CORS)
    against a same-origin one, on this checkout: instructions, then CPU under wrk."""
    with worktree(CORS_BASELINE) as tree:
        print(f"\n## CORS: evaluate with no Origin at this checkout against {tree.name}\n")
        against_baseline(tree, round_s, rounds, calls)
    print("\n## CORS: a cross-origin evaluate against a same-origin one (one server)\n")
    warm = DEFAULT_MAX_RECORDED + 200
    print(f"Instructions per evaluate (callgrind, {calls:,} requests on one connection):\n")
    counted = {
        "cross-origin": _instructions("svc-stub", calls, warm=warm, origin=PAGE_ORIGIN),
        "same-origin": _instructions("svc-stub", calls, warm=warm),
    }
    print("| request | instructions per request | relative to same-origin |")
    print("|---|---|---|")
    for label, count in counted.items():
        print(f"| {label} | {count:,.0f} | {count / counted['same-origin']:.3f} |")
    print(f"\nEvaluate, 16 connections, {rounds} alternating rounds of {round_s:g} s:\n")
    cross = Route(origin=PAGE_ORIGIN)
    with started("svc-stub") as stub:
        check_evaluate(stub.url + EVALUATE.path)
        measured(stub, 16, round_s)  # fills the journal: what every round then sees
        runs = {
            "cross-origin": functools.partial(measured, stub, 16, round_s, cross),
            "same-origin": functools.partial(measured, stub, 16, round_s),
        }
        loads = alternated(runs, rounds)
    _ratio_table(loads, "cross-origin", "same-origin", CROSS_ORIGIN_BOUND)
    _rps_ratio(loads, "cross-origin", "same-origin", round(1 / CROSS_ORIGIN_BOUND, 3))


def page_throughput(stub: Server, round_s: float, rounds: int, connections: int = 16) -> None:
    """Evaluate under wrk, a page opened for every other round (its first look taken before
    the round starts)."""
    pages: list[Page] = []

    def with_page() -> Load:
        with Page(stub.url) as page:
            load = measured(stub, connections, round_s)
        pages.append(page)
        return load

    print(f"Evaluate, {connections} connections, {rounds} alternating rounds of {round_s:g} s:\n")
    runs = {"page open": with_page, "no page": lambda: measured(stub, connections, round_s)}
    loads = alternated(runs, rounds)
    _ratio_table(loads, "page open", "no page", round(1 / PAGE_BOUND, 3))
    _rps_ratio(loads, "page open", "no page", PAGE_BOUND)
    print(f"\nThe page meanwhile: {_page_summary(pages)}")


def page_at_fixed_load(stub: Server, seconds: float, rounds: int) -> None:
    """Evaluate paced at PAGE_RATE a second, a page opened for every other round: the server's
    CPU time a second, which the page's answers add to."""
    pages: list[Page] = []

    def with_page() -> Paced:
        with Page(stub.url) as page:
            paced = paced_round(stub, PAGE_RATE, seconds)
        pages.append(page)
        return paced

    print(
        f"\nEvaluate paced at {PAGE_RATE:,} a second (one keep-alive connection), {rounds} "
        f"alternating rounds of {seconds:g} s:\n"
    )
    runs = {"page open": with_page, "no page": lambda: paced_round(stub, PAGE_RATE, seconds)}
    took = alternated(runs, rounds)
    print("| run | evaluates a second | server CPU a second, median (range) | CPU per evaluate |")
    print("|---|---|---|---|")
    for label, paced in took.items():
        cpu = [one.cpu_ms_per_s for one in paced]
        print(
            f"| {label} | {statistics.median(one.rate for one in paced):,.0f} | "
            f"{statistics.median(cpu):.1f} ms ({min(cpu):.1f}-{max(cpu):.1f}) | "
            f"{statistics.median(one.cpu_us for one in paced):.1f} µs |"
        )
    median = {
        label: statistics.median(one.cpu_ms_per_s for one in paced) for label, paced in took.items()
    }
    print(
        f"\nThe page added {median['page open'] - median['no page']:.1f} ms of server CPU a "
        f"second (ratio {median['page open'] / median['no page']:.2f}). The page meanwhile: "
        f"{_page_summary(pages)}"
    )


def _rps_ratio(
    loads: dict[str, list[Load]], over: str, under: str, bound: float | None = None
) -> None:
    """req/s of `over` against `under`, round by round (a bound, if given, is a floor)."""
    ratios = [a.rps / b.rps for a, b in zip(loads[over], loads[under], strict=True)]
    median = statistics.median(ratios)
    verdict = "no bound"
    if bound is not None:
        verdict = f"bound ≥ {bound}: {'met' if median >= bound else '**NOT MET**'}"
    print(
        f"\nreq/s, {over} / {under}: median of per-round ratios {median:.3f} "
        f"(range {min(ratios):.3f}-{max(ratios):.3f}; {verdict}); per round: "
        + ", ".join(f"{ratio:.3f}" for ratio in ratios)
    )


def _on_load_cpu() -> None:
    """Pins the calling thread (it alone) to the load's CPU: it is a client, not the server."""
    os.sched_setaffinity(0, {int(LOAD_CPU)})


class Page:
    """An inspector page open on a stub, as a thread on the load's CPU: it long-polls the feed
    with the cursor of its last answer, as `/_test/ui` does, and fetches the newest request in
    full once per answer, as a click on a row does. Its first look (the newest of everything
    the journal keeps) is taken on opening, before anything is measured."""

    def __init__(self, url: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.port = int(port)
        self.answers = 0
        self.shown = 0
        """Requests the feed's answers carried."""
        self.received = 0
        """Bytes of the feed's answers."""
        self.cpu_s = 0.0
        """The page's own CPU (reading its answers)."""
        self.open_s = 0.0
        self._cursor = ""
        self._newest: int | None = None
        self._connection = http.client.HTTPConnection(host, self.port, timeout=60)
        self._done = threading.Event()
        self._failed: Exception | None = None
        self._thread = threading.Thread(target=self._follow)
        self._began = 0.0

    def __enter__(self) -> Page:
        self._look(0)
        self.answers = self.shown = self.received = 0
        self._began = time.perf_counter()
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        _evaluates(self.port, 1)  # ends the long-poll it is in
        self._thread.join(60)
        self.open_s = time.perf_counter() - self._began
        self._connection.close()
        if self._thread.is_alive():
            raise RuntimeError("the page did not stop")
        if self._failed is not None:
            raise RuntimeError(f"the page failed: {self._failed!r}") from self._failed

    def _follow(self) -> None:
        _on_load_cpu()
        began = time.thread_time()
        try:
            while not self._done.is_set():
                self._look(PAGE_WAIT_MS)
        except Exception as failed:  # raised on closing, in the thread that measures
            self._failed = failed
        finally:
            self.cpu_s = time.thread_time() - began

    def _look(self, wait_ms: int) -> None:
        shown = self._get(f"/_test/ui/feed?since={self._cursor}&waitMs={wait_ms}")
        self._cursor = shown["cursor"]
        self.answers += 1
        self.shown += len(shown["requests"])
        if shown["requests"]:
            self._newest = shown["requests"][-1]["seq"]
        if self._newest is not None:
            self._get(f"/_test/requests/{self._newest}", feed=False)

    def _get(self, path: str, feed: bool = True) -> Any:
        self._connection.request("GET", path)
        answer = self._connection.getresponse()
        body = answer.read()
        if answer.status != 200:
            raise RuntimeError(f"GET {path}: {answer.status} {body[:200]!r}")
        if feed:
            self.received += len(body)
        return json.loads(body)


def _page_summary(pages: list[Page]) -> str:
    seconds = sum(page.open_s for page in pages)
    answers = sum(page.answers for page in pages)
    each = max(answers, 1)
    shown = sum(page.shown for page in pages) / each
    received = sum(page.received for page in pages) / each
    cpu = sum(page.cpu_s for page in pages) / seconds
    return (
        f"{answers / seconds:.1f} feed answers a second, each of {shown:,.0f} requests "
        f"({received / 1e3:,.0f} KB) and followed by one `/_test/requests/<seq>`; the page's "
        f"own CPU (reading them, on the load's CPU) {cpu * 1000:.0f} ms a second"
    )


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
    offered the same load whatever else it does meanwhile."""
    sent: list[int] = []
    port = int(server.url.rsplit(":", 1)[1])
    headers = {"Authorization": f"Bearer {EVALUATE.token}", "Content-Type": "application/json"}

    def send() -> None:
        _on_load_cpu()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        began, count = time.perf_counter(), 0
        try:
            while (due := began + count / rate) < began + seconds:
                time.sleep(max(0.0, due - time.perf_counter()))
                connection.request("POST", EVALUATE.path, EVALUATE_BODY, headers)
                answer = connection.getresponse()
                answer.read()
                if answer.status != 200:
                    raise RuntimeError(f"evaluate answered {answer.status}")
                count += 1
        finally:
            connection.close()
            sent.append(count)

    cpu, began = server.cpu_s, time.perf_counter()
    sender = threading.Thread(target=send)
    sender.start()
    sender.join()
    elapsed, cpu = time.perf_counter() - began, server.cpu_s - cpu
    if not sent or not sent[0]:
        raise RuntimeError("the paced client sent nothing")
    return Paced(sent[0] / elapsed, cpu / elapsed * 1000, cpu / sent[0] * 1e6)


def million(target: int = 1_000_000) -> None:
    print(f"\n## RSS after {target:,} requests with the default recording bounds\n")
    with started("svc-stub") as stub:
        before = stub.rss_mb
        served, began = 0, time.perf_counter()
        while served < target:
            load = wrk(stub.url, 64, 10)
            served += int(load.rps * 10)
        print(
            f"- {served:,} requests in {time.perf_counter() - began:.0f} s; "
            f"RSS {before:.1f} MB before, {stub.rss_mb:.1f} MB after"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs, for a smoke check")
    parser.add_argument(
        "--only", action="append", choices=SCENARIOS, help="run only this scenario (repeatable)"
    )
    arguments = parser.parse_args()
    quick = arguments.quick
    print(
        f"# svc-stub benchmark, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, "
        f"Python {sys.version.split()[0]}"
    )
    for name in arguments.only or SCENARIOS:
        if name != "million" or not quick or arguments.only:
            SCENARIOS[name](quick)


SCENARIOS: dict[str, Callable[[bool], None]] = {
    "throughput": lambda quick: throughput(2 if quick else 5, rounds=1 if quick else 2),
    "rate-limit": lambda quick: rate_limit_cost(round_s=2, rounds=3 if quick else 10),
    "watch": lambda quick: watch_cost(round_s=2, rounds=3 if quick else 10),
    "namespace-cost": lambda quick: namespace_cost(round_s=2, rounds=3 if quick else 10),
    "live-namespaces": lambda quick: live_namespaces(DEFAULT_NAMESPACE_MAX_RECORDED),
    "startup": lambda quick: startup(times=6 if quick else 30),
    "instructions": lambda quick: instructions(1000 if quick else 5000),
    "connections": lambda quick: thousand_connections(2 if quick else 5),
    "delayed": lambda quick: delayed(2 if quick else 5),
    "stop": lambda quick: stop(rounds=3 if quick else 10),
    "proxy": lambda quick: proxy_latency(500 if quick else 2000, rounds=3 if quick else 7),
    "fixture-documents": lambda quick: fixture_documents(),
    "inspector": lambda quick: inspector(
        round_s=2,
        rounds=3 if quick else 10,
        paced_s=3 if quick else 10,
        paced_rounds=2 if quick else 4,
        calls=1000 if quick else 5000,
    ),
    "cors": lambda quick: cors(round_s=2, rounds=3 if quick else 10, calls=1000 if quick else 5000),
    "million": lambda quick: million(),
}
"""Every scenario, in the order a full run takes them; `million` is left out of --quick."""


if __name__ == "__main__":
    main()
