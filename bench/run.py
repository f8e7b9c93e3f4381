"""Benchmark svc-stub against bare aiohttp, side by side in one run, on loopback only.

Each server is pinned to CPU 0 and wrk to CPU 1 (`taskset`); servers compared take turns
under the same load, so drift on the machine hits them alike. Every process it starts is
stopped by PID. Needs `wrk` and `valgrind` (Debian: wrk, valgrind).

The scenarios are modules of bench/scenarios/, each registered under the name --only takes;
what they share (servers, worktrees of other commits, wrk, callgrind, the ratio tables) is
bench/harness/.

    python bench/run.py                       # about twelve minutes, and fourteen for release
    python bench/run.py --quick               # shorter runs, for a smoke check
    python bench/run.py --only startup        # one scenario (repeatable; see --help)
    python bench/run.py --only release        # the release guard: this checkout against the
                                              # last release (--baseline COMMIT for another)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# This checkout's `stub` (its defaults, its ready line) before any installed one; bench/, this
# file's directory, is already on the path for `harness` and `scenarios`.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scenarios import Options, Scenario, load


def main() -> None:
    scenarios = load()
    arguments = parser(scenarios).parse_args()
    options = Options(quick=arguments.quick, baseline=arguments.baseline)
    print(
        f"# svc-stub benchmark, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, "
        f"Python {sys.version.split()[0]}"
    )
    for scenario in chosen(scenarios, arguments.only, options):
        scenario.run(options)


def parser(scenarios: dict[str, Scenario]) -> argparse.ArgumentParser:
    """The command line, its --help listing every scenario in the order a full run takes."""
    width = max(len(name) for name in scenarios)
    listed = "\n".join(f"  {name:<{width}}  {one.summary}" for name, one in scenarios.items())
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog=f"scenarios, in the order a full run takes them:\n{listed}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="short runs, for a smoke check")
    parser.add_argument(
        "--only",
        action="append",
        choices=scenarios,
        metavar="NAME",
        help="run only this scenario (repeatable; names below)",
    )
    parser.add_argument(
        "--baseline",
        metavar="COMMIT",
        help="the earlier commit a scenario that guards against one measures this checkout "
        "against (release), instead of its own",
    )
    return parser


def chosen(
    scenarios: dict[str, Scenario], only: list[str] | None, options: Options
) -> list[Scenario]:
    """The scenarios --only names, in its order; else every one, less those a --quick run
    leaves out."""
    if only:
        return [scenarios[name] for name in only]
    return [one for one in scenarios.values() if one.in_quick_run or not options.quick]


if __name__ == "__main__":
    main()
