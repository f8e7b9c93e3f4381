"""Proxy mode's added latency: sequential evaluates on one keep-alive connection, straight to
an upstream (a second svc-stub) and through svc-stub in front of it (`--upstream`), in turns."""

from __future__ import annotations

import statistics
import time

from harness.client import connection_to, evaluate_headers, evaluate_once
from harness.report import verdict
from harness.servers import started

from scenarios import Options, register

PROXY_BOUND_MS = 1.0
"""The issue's bound on what proxy mode adds to a request's median latency."""


@register("proxy", "median latency svc-stub --upstream adds to a sequential evaluate")
def run(options: Options) -> None:
    proxy_latency(options.pick(500, 2000), rounds=options.pick(3, 7))


def proxy_latency(requests: int, rounds: int) -> None:
    print(f"\n## Proxy mode: median latency added ({rounds} rounds of {requests:,} requests)\n")
    with started("svc-stub") as upstream, started("svc-stub", "--upstream", upstream.url) as proxy:
        direct: list[float] = []
        through: list[float] = []
        for _ in range(rounds):
            direct.append(median_latency_ms(upstream.url, requests))
            through.append(median_latency_ms(proxy.url, requests))
    added = statistics.median(through) - statistics.median(direct)
    print(f"- straight to the upstream: median {statistics.median(direct):.3f} ms")
    print(f"- through svc-stub --upstream: median {statistics.median(through):.3f} ms")
    print(
        f"- added: {added:.3f} ms (bound {PROXY_BOUND_MS} ms: {verdict(added <= PROXY_BOUND_MS)})"
    )


def median_latency_ms(url: str, count: int) -> float:
    """The median of `count` evaluates' round trips, one after another on one connection."""
    connection = connection_to(url, timeout=10)
    headers = evaluate_headers()
    took: list[float] = []
    try:
        for _ in range(count):
            began = time.perf_counter()
            evaluate_once(connection, headers)
            took.append((time.perf_counter() - began) * 1000)
    finally:
        connection.close()
    return statistics.median(took)
