"""What counting coverage costs a request: evaluate's instructions under callgrind at this
checkout against COVERAGE_BASELINE's, the commit before the stub counted what requests met,
run from a worktree. Rounds alternate the two, each process with the same hash seed so both
lay their dicts out alike: what is left between rounds is the event loop's own drift."""

from __future__ import annotations

import os
import statistics
from collections.abc import Iterator
from contextlib import contextmanager

from harness.callgrind import instructions_per_evaluate
from harness.servers import worktree
from harness.versus import JOURNAL_FULL

from scenarios import Options, register

COVERAGE_BASELINE = "20c5657"
"""The commit before coverage: `coverage` runs its svc-stub, from a worktree, beside this
checkout's."""
COVERAGE_BOUND = 1.01
"""The issue's bound: evaluate's instructions move less than 1 %."""


@register("coverage", f"evaluate's instructions against {COVERAGE_BASELINE} (before coverage)")
def run(options: Options) -> None:
    coverage(options.baseline or COVERAGE_BASELINE, options.pick(2, 4), options.pick(2000, 10000))


def coverage(baseline: str, rounds: int, calls: int) -> None:
    with worktree(baseline) as tree, _hash_seed("0"):
        before = f"svc-stub @ {tree.name}"
        print(f"\n## Coverage: evaluate's instructions at this checkout against {tree.name}\n")
        print(
            f"Callgrind, {calls:,} requests on one connection after {JOURNAL_FULL:,} that fill "
            f"the journal, {rounds} alternating rounds:\n"
        )
        print(f"| round | svc-stub | {before} | ratio |")
        print("|---|---|---|---|")
        ratios = []
        for round_ in range(1, rounds + 1):
            now = instructions_per_evaluate("svc-stub", calls, warm=JOURNAL_FULL)
            then = instructions_per_evaluate("svc-stub", calls, tree, JOURNAL_FULL)
            ratios.append(now / then)
            print(f"| {round_} | {now:,.0f} | {then:,.0f} | {now / then:.4f} |")
        mean = statistics.fmean(ratios)
        verdict = "within" if mean < COVERAGE_BOUND else "OVER"
        print(f"\nMean ratio {mean:.4f}: {verdict} the bound of {COVERAGE_BOUND:g}.")


@contextmanager
def _hash_seed(seed: str) -> Iterator[None]:
    """Both servers inherit PYTHONHASHSEED: the same seed, the same dict layouts."""
    was = os.environ.get("PYTHONHASHSEED")
    os.environ["PYTHONHASHSEED"] = seed
    try:
        yield
    finally:
        if was is None:
            del os.environ["PYTHONHASHSEED"]
        else:
            os.environ["PYTHONHASHSEED"] = was
