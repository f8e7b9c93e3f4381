"""Spawn to a healthy /health, and idle RSS: the stub and a bare aiohttp app taking turns, with
the stub's bytecode compiled first, as an installed wheel has it. What every CI job and every
test session pays."""

from __future__ import annotations

import statistics
import subprocess
import sys

from harness.report import verdict
from harness.servers import CHECKOUT, started

from scenarios import Options, register

STARTUP_BOUND = 1.10
"""The issue's bound on the stub's start-up over a bare aiohttp app's."""
NAMES = ("svc-stub", "bare aiohttp")


@register("startup", "start-up to a healthy /health and idle RSS, against bare aiohttp")
def run(options: Options) -> None:
    startup(times=options.pick(6, 30))


def startup(times: int) -> None:
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(CHECKOUT / "stub")], check=True)
    print(f"\n## Start-up to a healthy /health, and idle RSS ({times} alternating rounds)\n")
    took, rss = started_in_turns(times)
    print("| server | median start-up | idle RSS |")
    print("|---|---|---|")
    for name in NAMES:
        print(
            f"| {name} | {statistics.median(took[name]) * 1000:.0f} ms "
            f"| {statistics.median(rss[name]):.1f} MB |"
        )
    ratios = [
        stub / bare for stub, bare in zip(took["svc-stub"], took["bare aiohttp"], strict=True)
    ]
    median = statistics.median(ratios)
    print(
        f"\nStart-up, svc-stub / bare aiohttp: median of per-round ratios {median:.3f} "
        f"(range {min(ratios):.3f}-{max(ratios):.3f}; bound < {STARTUP_BOUND}: "
        f"{verdict(median < STARTUP_BOUND)})"
    )


def started_in_turns(times: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Each server's start-up times and idle RSS, the order swapped every round."""
    took: dict[str, list[float]] = {name: [] for name in NAMES}
    rss: dict[str, list[float]] = {name: [] for name in NAMES}
    for round_ in range(times):
        for name in NAMES if round_ % 2 == 0 else reversed(NAMES):
            with started(name) as server:
                took[name].append(server.startup_s)
                rss[name].append(server.rss_mb)
    return took, rss
