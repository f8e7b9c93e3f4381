"""The tables that compare runs taken in turns (see `load.alternated`): each run's medians, then
one run over another round by round, judged against the scenario's bound. Per-round ratios,
not ratios of medians: both runs of a round saw the same minute of the machine."""

from __future__ import annotations

import statistics

from harness.load import Load


def ratio_table(loads: dict[str, list[Load]], over: str, under: str, bound: float) -> None:
    """Each run's req/s and CPU per request, then CPU per request of `over` over `under`
    against `bound` (a ceiling). RuntimeError after printing if any request failed."""
    failed = {label: sum(one.failed for one in runs) for label, runs in loads.items()}
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
        f"({_range(ratios)}; bound < {bound}: {verdict(median < bound)}); per round: "
        + _each(ratios)
    )
    if any(failed.values()):
        raise RuntimeError(
            f"requests failed (non-2xx or socket errors): {failed}; a refused request is "
            "cheap, so the ratio above means nothing"
        )


def rps_ratio(
    loads: dict[str, list[Load]], over: str, under: str, bound: float | None = None
) -> None:
    """req/s of `over` against `under`, round by round (a bound, if given, is a floor)."""
    ratios = [a.rps / b.rps for a, b in zip(loads[over], loads[under], strict=True)]
    median = statistics.median(ratios)
    judged = "no bound"
    if bound is not None:
        judged = f"bound ≥ {bound}: {verdict(median >= bound)}"
    print(
        f"\nreq/s, {over} / {under}: median of per-round ratios {median:.3f} "
        f"({_range(ratios)}; {judged}); per round: " + _each(ratios)
    )


def verdict(met: bool) -> str:
    """A bound's verdict, bold when it is not met so that it shows in a long report."""
    return "met" if met else "**NOT MET**"


def _range(ratios: list[float]) -> str:
    return f"range {min(ratios):.3f}-{max(ratios):.3f}"


def _each(ratios: list[float]) -> str:
    return ", ".join(f"{ratio:.3f}" for ratio in ratios)
