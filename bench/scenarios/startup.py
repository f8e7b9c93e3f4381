"""Spawn to a 200 from /health, and idle RSS: svc-stub started by its `svc-stub` command (as a
test runner starts it, `--port 0`, the ready line's URL), a bare aiohttp app doing the same
(bench/baseline.py) and svc-stub at STARTUP_BASELINE (from a worktree, by the same command),
taking turns, with every tree's bytecode compiled first, as an installed wheel has it. What
every CI job and every test session pays before its first test.

A round starts each server once, in one of the six orders of the three, the next order every
round: each server starts after each other, and first, as often. Figures are medians; a ratio is
the median of per-round ratios (both starts of a round saw the same moment of the machine)."""

from __future__ import annotations

import itertools
import statistics
import subprocess
import sys
from pathlib import Path

from harness.report import verdict
from harness.servers import BENCH, CHECKOUT, started, worktree

from scenarios import Options, register

STARTUP_BOUND = 1.00
"""The issue's bound (#46): start-up to a healthy stub at most a bare aiohttp app's."""
STARTUP_BASELINE = "4a53f6d"
"""The commit before issue #46's start-up cuts: its svc-stub takes turns too, so that before and
after are judged against the same bare app in the same run (`--baseline COMMIT`: another)."""
NOW, BARE = "svc-stub", "bare aiohttp"


@register("startup", f"start-up to a healthy /health: now, {STARTUP_BASELINE}, bare aiohttp")
def run(options: Options) -> None:
    startup(times=options.pick(6, 60), baseline=options.baseline or STARTUP_BASELINE)


def startup(times: int, baseline: str) -> None:
    with worktree(baseline) as tree:
        before = f"svc-stub @ {tree.name}"
        for compiled in (CHECKOUT / "stub", tree / "stub", BENCH / "baseline.py"):
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(compiled)], check=True)
        print(f"\n## Start-up to a healthy /health, and idle RSS ({times} rounds)\n")
        took, ran, rss = started_in_turns(times, tree, before)
    print("| server | median start-up | median CPU to healthy | idle RSS | start-up over bare |")
    print("|---|---|---|---|---|")
    for name in (NOW, before, BARE):
        ratios = _ratios(took[name], took[BARE])
        print(
            f"| {name} | {statistics.median(took[name]) * 1000:.1f} ms "
            f"| {statistics.median(ran[name]) * 1000:.1f} ms "
            f"| {statistics.median(rss[name]):.1f} MB | {statistics.median(ratios):.3f} |"
        )
    for over, under in ((NOW, BARE), (before, BARE), (NOW, before)):
        ratios = _ratios(took[over], took[under])
        median = statistics.median(ratios)
        cpu = statistics.median(_ratios(ran[over], ran[under]))
        judged = f"; bound ≤ {STARTUP_BOUND:.2f}: {verdict(median <= STARTUP_BOUND)}"
        print(
            f"\nStart-up, {over} / {under}: median of per-round ratios {median:.3f} "
            f"(range {min(ratios):.3f}-{max(ratios):.3f}; CPU to healthy {cpu:.3f}"
            f"{judged if (over, under) == (NOW, BARE) else ''})"
        )


Figures = dict[str, list[float]]


def started_in_turns(times: int, tree: Path, before: str) -> tuple[Figures, Figures, Figures]:
    """Each server's start-up (spawn to a 200 from /health), CPU until then and idle RSS."""
    names = (NOW, before, BARE)
    took: Figures = {name: [] for name in names}
    ran: Figures = {name: [] for name in names}
    rss: Figures = {name: [] for name in names}
    orders = list(itertools.permutations(names))
    for round_ in range(times):
        for name in orders[round_ % len(orders)]:
            if name == BARE:
                server = started(BARE)
            else:
                server = started(NOW, command=True, tree=None if name == NOW else tree)
            with server as up:
                took[name].append(up.startup_s)
                ran[name].append(up.ran_s)
                rss[name].append(up.rss_mb)
    return took, ran, rss


def _ratios(over: list[float], under: list[float]) -> list[float]:
    return [a / b for a, b in zip(over, under, strict=True)]
