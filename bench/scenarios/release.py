"""The benchmark that guards a release (issue #32): in one run, this checkout's svc-stub against
the last release's (RELEASE_BASELINE, or `--baseline COMMIT`, run from a worktree), bare aiohttp
and aiohttp's ceiling, on evaluate, capture and the vendor's /flags at 1, 16 and 64 connections.

A round takes every route at every connection count on every server, one run after another,
the order reversed every other round: a noisy minute on a shared machine falls on every cell
and every server alike. Ratios are medians of per-round ratios (both runs of a round saw the
same minute), of req/s and of the server's CPU per request, which is steadier. First, each
route's instructions against the release's (callgrind; evaluate's only in a --quick run), which
repeat within about 1 %."""

from __future__ import annotations

import functools
import statistics
import subprocess
from collections.abc import Callable
from pathlib import Path

from harness.callgrind import instructions_per_request
from harness.client import EVALUATE, Route, check_answer, posted
from harness.load import Load, alternated, measured
from harness.report import verdict
from harness.servers import CHECKOUT, Server, started, worktree
from harness.versus import JOURNAL_FULL

from scenarios import Options, register

RELEASE_BASELINE = "ac03962"
"""The last release: what this checkout must not be slower than."""
TOLERANCE = 0.95
"""Now against the release under load: a floor on the median of per-round req/s ratios, and
CPU per request at most 1/0.95 = 1.053 of the release's, the bound other scenarios put on this
checkout against a commit. On a busy shared machine one row can miss it by noise alone (on
2026-11-26, rows of routes whose instructions moved by about 1 % measured 0.87 to 1.12), so a
route is judged by its last row, every connection count's rounds together, and by its
instructions."""
INSTRUCTIONS_TOLERANCE = 0.97
"""The same floor on instructions (at most 1/0.97 = 1.031 of the release's): they repeat within
about 1 %, so a tighter one than under load."""
CEILING_BOUND = 0.90
"""The issue's goal for evaluate: at least 0.90 of aiohttp's ceiling (pre-encoded bytes)."""
JUDGED_BY = "CPU per request"
"""The verdict's figure: the server's CPU per request, which drifts less than req/s (a busy
neighbour takes wrk's CPU and the loopback's time, not the server's CPU time). req/s is judged
beside it: a req/s NOT MET where CPU is met is the machine, or latency at 1 connection."""
ROUTES = (EVALUATE, posted("/v1/capture"), posted("/flags"))
CONNECTIONS = (1, 16, 64)
Cell = tuple[Route, int, str]
"""A run's label: the route, the connections and the server's name."""


@register("release", f"guard: now against {RELEASE_BASELINE} (--baseline), bare aiohttp, ceiling")
def run(options: Options) -> None:
    release(
        options.baseline or RELEASE_BASELINE,
        round_s=options.pick(1, 2),
        rounds=options.pick(3, 9),
        calls=options.pick(1000, 3000),
        counted=options.pick((EVALUATE,), ROUTES),
    )


def release(
    commit: str, round_s: float, rounds: int, calls: int, counted: tuple[Route, ...]
) -> None:
    """`counted`: the routes whose instructions are counted (each a minute under callgrind)."""
    print(f"\n## Release guard: this checkout against {commit}, bare aiohttp and its ceiling\n")
    print(f"- now: {described_checkout()}; baseline: {resolved(commit)}")
    print(
        f"- {rounds} rounds; each runs every route at {', '.join(map(str, CONNECTIONS))} "
        f"connections on every server for {round_s:g} s, in turns, the order reversed every "
        "other round; figures are medians over the rounds, ratios medians of per-round ratios"
    )
    print(
        f"- bounds: now / {commit} ≥ {TOLERANCE} (CPU per request at most {1 / TOLERANCE:.3f} "
        f"of it); for evaluate, now / aiohttp's ceiling ≥ {CEILING_BOUND:.2f} (CPU per request "
        f"at most {1 / CEILING_BOUND:.3f} of it). The verdict is {JUDGED_BY}'s, req/s's "
        "beside it; a route's is its last row's, every round of every connection count; "
        f"instructions: now / {commit} ≤ {1 / INSTRUCTIONS_TOLERANCE:.3f}"
    )
    with worktree(commit) as tree:
        instructions(tree, commit, calls, counted)
        loads, names = in_turns(tree, round_s, rounds)
    for route in ROUTES:
        table(route, loads, names, commit)
    failed = {cell: sum(one.failed for one in taken) for cell, taken in loads.items()}
    if any(failed.values()):
        refused = {f"{r.path} {c} {name}": n for (r, c, name), n in failed.items() if n}
        raise RuntimeError(
            f"requests failed (non-2xx or socket errors): {refused}; a refused request is "
            "cheap, so the tables above mean nothing"
        )


def instructions(tree: Path, commit: str, calls: int, counted: tuple[Route, ...]) -> None:
    """Instructions per request of each `counted` route, now and at `tree`, the journal full."""
    print(
        f"\nInstructions per request (callgrind, {calls:,} requests on one connection after "
        f"{JOURNAL_FULL:,} that fill the journal; they repeat within about 1 %, where CPU per "
        "request drifts by a tenth: the figure to trust when the tables below disagree):\n"
    )
    bound = 1 / INSTRUCTIONS_TOLERANCE
    print(f"| route | now | {commit} | now / {commit} | ≤ {bound:.3f} |")
    print("|---|---|---|---|---|")
    for route in counted:
        now = instructions_per_request("svc-stub", calls, None, JOURNAL_FULL, route)
        before = instructions_per_request("svc-stub", calls, tree, JOURNAL_FULL, route)
        print(
            f"| POST {route.path} | {now:,.0f} | {before:,.0f} | {now / before:.3f} "
            f"| {verdict(now / before <= bound)} |"
        )


def in_turns(tree: Path, round_s: float, rounds: int) -> tuple[dict[Cell, list[Load]], list[str]]:
    """Every cell on every server, `rounds` times (`alternated`); the loads by cell, and the
    servers' names: now, the tree's, bare aiohttp, the ceiling."""
    with (
        started("svc-stub") as now,
        started("svc-stub", tree=tree) as before,
        started("bare aiohttp") as bare,
        started("aiohttp ceiling") as ceiling,
    ):
        servers = (now, before, bare, ceiling)
        warmed(servers, round_s)
        runs: dict[Cell, Callable[[], Load]] = {
            (route, connections, server.name): functools.partial(
                measured, server, connections, round_s, route
            )
            for route in ROUTES
            for connections in CONNECTIONS
            for server in servers
        }
        return alternated(runs, rounds), [server.name for server in servers]


def warmed(servers: tuple[Server, ...], seconds: float) -> None:
    """Each server answers each route 200 with svc-stub's shape (a 400 or 404 would flatter it),
    then takes it for `seconds` unmeasured: the journal full, as every measured round sees it."""
    for server in servers:
        for route in ROUTES:
            check_answer(server.url, route)
            measured(server, 16, seconds, route)


def table(route: Route, loads: dict[Cell, list[Load]], names: list[str], commit: str) -> None:
    """One row per connection count: each server's req/s (CPU per request), then now against
    the release and against the ceiling, judged; a last row judges every round of every
    connection count together, the route's verdict (three times the rounds: steadier)."""
    now, before, bare, ceiling = names
    print(f"\n### POST {route.path}\n")
    print(
        f"| connections | {now} req/s (CPU per request) | {before} | {bare} | {ceiling} "
        f"| now / {commit}: req/s, CPU | now / ceiling: req/s, CPU "
        f"| now / {commit} ≥ {TOLERANCE} | now / ceiling ≥ {CEILING_BOUND:.2f} |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    pooled: tuple[list[float], ...] = ([], [], [], [])
    for connections in CONNECTIONS:
        runs = {name: loads[route, connections, name] for name in names}
        figures = " | ".join(
            f"{statistics.median(one.rps for one in runs[name]):,.0f} "
            f"({statistics.median(one.cpu_us for one in runs[name]):.1f} µs)"
            for name in names
        )
        row = (*ratios(runs[now], runs[before]), *ratios(runs[now], runs[ceiling]))
        for every, these in zip(pooled, row, strict=True):
            every.extend(these)
        print(f"| {connections} | {figures} | {judged_row(route, *row)} |")
    rounds = len(pooled[0])
    print(f"| all three ({rounds} runs each) | | | | | {judged_row(route, *pooled)} |")


def judged_row(
    route: Route,
    release_rps: list[float],
    release_cpu: list[float],
    ceiling_rps: list[float],
    ceiling_cpu: list[float],
) -> str:
    """A row's ratios and verdicts: now against the release, then against the ceiling (judged
    for evaluate only)."""
    against_ceiling = (
        judged(ceiling_rps, ceiling_cpu, CEILING_BOUND) if route == EVALUATE else "no bound"
    )
    return (
        f"{shown(release_rps)}, {shown(release_cpu)} "
        f"| {shown(ceiling_rps)}, {shown(ceiling_cpu)} "
        f"| {judged(release_rps, release_cpu, TOLERANCE)} | {against_ceiling}"
    )


def ratios(over: list[Load], under: list[Load]) -> tuple[list[float], list[float]]:
    """Per round: req/s of `over` over `under`, and CPU per request of `over` over `under`."""
    pairs = list(zip(over, under, strict=True))
    return [a.rps / b.rps for a, b in pairs], [a.cpu_us / b.cpu_us for a, b in pairs]


def judged(rps: list[float], cpu: list[float], bound: float) -> str:
    """CPU per request's verdict (its median per-round ratio at most 1/`bound`), then req/s's
    (at least `bound`)."""
    by_cpu = verdict(statistics.median(cpu) <= 1 / bound)
    return f"{by_cpu} (req/s: {verdict(statistics.median(rps) >= bound)})"


def shown(ratios: list[float]) -> str:
    return f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"


def described_checkout() -> str:
    """HEAD, and how many files under stub/ differ from it: what `now` measures is the working
    tree, others' edits in progress included."""
    git = ["git", "-C", str(CHECKOUT)]
    head = subprocess.run(
        [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
    )
    changed = subprocess.run(
        [*git, "status", "--porcelain", "--", "stub"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    edits = f" with uncommitted changes to {len(changed)} files under stub/" if changed else ""
    return f"{head.stdout.strip()}{edits}"


def resolved(commit: str) -> str:
    git = ["git", "-C", str(CHECKOUT), "log", "-1", "--format=%h (%cs) %s", commit]
    line = subprocess.run(git, capture_output=True, text=True, check=True).stdout.strip()
    return line if len(line) <= 90 else line[:89] + "…"
