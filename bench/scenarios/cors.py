"""What answering pages on other origins costs. A request with no `Origin` (every server-side
client's): evaluate against CORS_BASELINE's, the commit before, run from a worktree. A
cross-origin evaluate (its answer carries CORS) against a same-origin one, on this checkout:
instructions, then CPU under wrk."""

from __future__ import annotations

import functools

from harness.callgrind import instructions_per_evaluate
from harness.client import Route
from harness.load import alternated, measured, warm_up
from harness.report import ratio_table, rps_ratio
from harness.servers import started, worktree
from harness.versus import JOURNAL_FULL, against_commit

from scenarios import Options, register

CORS_BASELINE = "428762e"
"""The commit before the runtime plane answered pages on other origins: `cors` runs its
svc-stub, from a worktree, beside this checkout's."""
NO_ORIGIN_BOUND = 1.05
"""CPU per evaluate with no Origin, this checkout over CORS_BASELINE: noise around 1."""
CROSS_ORIGIN_BOUND = 1.05
"""The issue's bound on a cross-origin evaluate's cost over a same-origin one."""
PAGE_ORIGIN = "http://localhost:5173"


@register("cors", f"evaluate against {CORS_BASELINE} (before CORS); cross- against same-origin")
def run(options: Options) -> None:
    cors(round_s=2, rounds=options.pick(3, 10), calls=options.pick(1000, 5000))


def cors(round_s: float, rounds: int, calls: int) -> None:
    with worktree(CORS_BASELINE) as tree:
        print(f"\n## CORS: evaluate with no Origin at this checkout against {tree.name}\n")
        against_commit(tree, round_s, rounds, calls, NO_ORIGIN_BOUND)
    print("\n## CORS: a cross-origin evaluate against a same-origin one (one server)\n")
    cross_origin_instructions(calls)
    cross_origin_load(round_s, rounds)


def cross_origin_instructions(calls: int) -> None:
    print(f"Instructions per evaluate (callgrind, {calls:,} requests on one connection):\n")
    counted = {
        "cross-origin": instructions_per_evaluate(
            "svc-stub", calls, warm=JOURNAL_FULL, origin=PAGE_ORIGIN
        ),
        "same-origin": instructions_per_evaluate("svc-stub", calls, warm=JOURNAL_FULL),
    }
    print("| request | instructions per request | relative to same-origin |")
    print("|---|---|---|")
    for label, count in counted.items():
        print(f"| {label} | {count:,.0f} | {count / counted['same-origin']:.3f} |")


def cross_origin_load(round_s: float, rounds: int) -> None:
    """The two requests in alternating rounds on one server, under wrk at 16 connections."""
    print(f"\nEvaluate, 16 connections, {rounds} alternating rounds of {round_s:g} s:\n")
    cross = Route(origin=PAGE_ORIGIN)
    with started("svc-stub") as stub:
        warm_up(stub, round_s)
        runs = {
            "cross-origin": functools.partial(measured, stub, 16, round_s, cross),
            "same-origin": functools.partial(measured, stub, 16, round_s),
        }
        loads = alternated(runs, rounds)
    ratio_table(loads, "cross-origin", "same-origin", CROSS_ORIGIN_BOUND)
    rps_ratio(loads, "cross-origin", "same-origin", round(1 / CROSS_ORIGIN_BOUND, 3))
