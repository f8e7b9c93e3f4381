"""This checkout's svc-stub against another commit's, run from a `servers.worktree`: what a
change costs evaluate, in instructions (steady) and in CPU and req/s under wrk (in turns)."""

from __future__ import annotations

from pathlib import Path

from harness.callgrind import instructions_per_evaluate
from harness.load import side_by_side, warm_up
from harness.report import ratio_table, rps_ratio
from harness.servers import started
from stub.config import DEFAULT_MAX_RECORDED

JOURNAL_FULL = DEFAULT_MAX_RECORDED + 200
"""Evaluates before counting: the journal full, so each counted request also drops the
oldest, as in a long test session."""


def against_commit(tree: Path, round_s: float, rounds: int, calls: int, bound: float) -> None:
    """Evaluate at this checkout against `tree`'s svc-stub: instructions over `calls`
    requests, then CPU per request (`bound`: a ceiling on this checkout's over the tree's)
    and req/s at 16 connections in `rounds` alternating rounds of `round_s`."""
    instructions_against(tree, calls)
    print(f"\nEvaluate, 16 connections, {rounds} alternating rounds of {round_s:g} s:\n")
    with started("svc-stub") as new, started("svc-stub", tree=tree) as old:
        for server in (new, old):
            warm_up(server, round_s)
        loads = side_by_side((new, old), 16, round_s, rounds)
        ratio_table(loads, new.name, old.name, bound)
        rps_ratio(loads, new.name, old.name)


def instructions_against(tree: Path, calls: int) -> None:
    """Instructions per evaluate at this checkout and at `tree`, the journal full in both."""
    before = f"svc-stub @ {tree.name}"
    print(
        f"Instructions per evaluate (callgrind, {calls:,} requests on one connection, after "
        f"{JOURNAL_FULL:,} that fill the journal):\n"
    )
    counted = {"svc-stub": instructions_per_evaluate("svc-stub", calls, warm=JOURNAL_FULL)}
    counted[before] = instructions_per_evaluate("svc-stub", calls, tree, JOURNAL_FULL)
    print(f"| server | instructions per request | relative to {tree.name} |")
    print("|---|---|---|")
    for label, count in counted.items():
        print(f"| {label} | {count:,.0f} | {count / counted[before]:.3f} |")
