"""Evaluate through a `/ns/{name}` prefix against the same request with none, on one server:
the difference is taking the prefix off and picking the namespace."""

from __future__ import annotations

import functools
import json

from harness.client import EVALUATE, Route, check_evaluate, get
from harness.load import alternated, measured
from harness.report import ratio_table
from harness.servers import started

from scenarios import Options, register

NAMESPACE_BOUND = 1.05
"""The issue's bound on a request's CPU in a namespace over the same in the default one."""


@register("namespace-cost", "evaluate in a namespace against the same in the default one")
def run(options: Options) -> None:
    namespace_cost(round_s=2, rounds=options.pick(3, 10))


def namespace_cost(round_s: float, rounds: int, connections: int = 16) -> None:
    """The two routes in alternating rounds on one server."""
    print(
        f"\n## A request in a namespace against the default namespace: evaluate, "
        f"{connections} connections, {rounds} alternating rounds of {round_s:g} s\n"
    )
    routes = {"default": EVALUATE, "namespace": Route("/ns/bench/v1/flags/evaluate")}
    with started("svc-stub") as stub:
        for route in routes.values():
            check_evaluate(stub.url + route.path)
        runs = {
            label: functools.partial(measured, stub, connections, round_s, route)
            for label, route in routes.items()
        }
        ratio_table(alternated(runs, rounds), "namespace", "default", NAMESPACE_BOUND)
        # the namespace was really used: a prefix the stub ignored would measure nothing new
        held = json.loads(get(stub.url + "/_test/namespaces/bench"))["recorded"]["requests"]
        if held == 0:
            raise RuntimeError("namespace scenario: nothing was recorded in the namespace")
