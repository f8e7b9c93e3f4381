"""Evaluate on a stub with `--rate-limit` set too high to fire against one without it: the key
checks run in both, so the difference is the limiter."""

from __future__ import annotations

import json

from harness.client import EVALUATE, check_evaluate, get
from harness.load import side_by_side
from harness.report import ratio_table
from harness.servers import started

from scenarios import Options, register

NEVER_FIRES = 1_000_000.0
"""A per-key rate limit (requests a second) far above anything one key sends here."""
RATE_LIMIT_BOUND = 1.03
"""The issue's bound on evaluate's CPU per request, limit on over off."""


@register("rate-limit", "evaluate with a per-key rate limit that never fires against none")
def run(options: Options) -> None:
    rate_limit_cost(round_s=2, rounds=options.pick(3, 10))


def rate_limit_cost(round_s: float, rounds: int, connections: int = 16) -> None:
    """Two servers in turn, the order swapped every round; a 429 is cheap, so any non-2xx
    fails the run."""
    print(
        f"\n## Rate limit on ({NEVER_FIRES:,.0f}/s, never fires) against off: evaluate, "
        f"{connections} connections, {rounds} alternating rounds of {round_s:g} s\n"
    )
    limit = ("--rate-limit", f"{NEVER_FIRES:.0f}/s")
    with (
        started("svc-stub", *limit, label="limit on") as on,
        started("svc-stub", label="limit off") as off,
    ):
        check_rate_limit(on.url, NEVER_FIRES)
        check_rate_limit(off.url, None)
        loads = side_by_side((on, off), connections, round_s, rounds)
        ratio_table(loads, on.name, off.name, RATE_LIMIT_BOUND)


def check_rate_limit(url: str, per_second: float | None) -> None:
    """The stub runs with the limit it was started with, and evaluate answers 200 with both
    decisions found (a 401 or 429 would be cheaper than a real answer)."""
    limits = json.loads(get(url + "/_test/rate-limit"))
    if limits.get("perSecond") != per_second or limits.get("perKey"):
        raise RuntimeError(f"{url}: expected a limit of {per_second} a second, got {limits}")
    check_evaluate(url + EVALUATE.path)
