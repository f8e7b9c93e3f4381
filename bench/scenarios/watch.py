"""Evaluate on a stub watching its fixture file against one that is not: the difference is
the four polls a second, which no request waits on."""

from __future__ import annotations

import json

from harness.client import EVALUATE, check_evaluate, get
from harness.load import side_by_side
from harness.report import ratio_table
from harness.servers import CHECKOUT, started

from scenarios import Options, register

WATCH_BOUND = 1.05
"""A request's CPU with `--watch` over the same without: the poll runs beside requests, so
this is noise around 1."""


@register("watch", "evaluate on a stub watching its fixture file against one that is not")
def run(options: Options) -> None:
    watch_cost(round_s=2, rounds=options.pick(3, 10))


def watch_cost(round_s: float, rounds: int, connections: int = 16) -> None:
    print(
        f"\n## --watch on against off: evaluate, {connections} connections, {rounds} "
        f"alternating rounds of {round_s:g} s\n"
    )
    fixtures = ("--fixtures", str(CHECKOUT / "fixtures" / "default.yaml"))
    with (
        started("svc-stub", *fixtures, "--watch", label="watch on") as on,
        started("svc-stub", *fixtures, label="watch off") as off,
    ):
        if json.loads(get(on.url + "/_test/fixtures"))["watching"] is not True:
            raise RuntimeError("watch scenario: the stub is not watching its fixtures")
        for server in (on, off):
            check_evaluate(server.url + EVALUATE.path)
        loads = side_by_side((on, off), connections, round_s, rounds)
        ratio_table(loads, on.name, off.name, WATCH_BOUND)
