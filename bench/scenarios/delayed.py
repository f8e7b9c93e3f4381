"""1,000 concurrent evaluates, each delayed by a fault: how close the stub comes to the
throughput the delay allows, which shows whether delays hold anything up but the request."""

from __future__ import annotations

import json

from harness.client import get
from harness.load import wrk
from harness.servers import started

from scenarios import Options, register

DELAY_MS = 50
CONNECTIONS = 1000


@register(
    "delayed",
    f"{CONNECTIONS:,} concurrent evaluates each delayed {DELAY_MS} ms by a fault, against ideal",
)
def run(options: Options) -> None:
    delayed(options.pick(2, 5))


def delayed(seconds: float, delay_ms: int = DELAY_MS, connections: int = CONNECTIONS) -> None:
    print(f"\n## {connections:,} concurrent requests, each delayed {delay_ms} ms by a fault\n")
    with started("svc-stub") as stub:
        get(
            stub.url + "/_test/fault",
            json.dumps({"mode": "delay", "delayMs": delay_ms, "applyTo": "evaluate"}).encode(),
        )
        load = wrk(stub.url, connections, seconds)
        ideal = connections / (delay_ms / 1000)
        print(
            f"- {load.rps:,.0f} req/s of an ideal {ideal:,.0f} ({load.rps / ideal:.0%}), "
            f"p50 {load.p50_ms:.0f} ms, p99 {load.p99_ms:.0f} ms, errors {load.errors}"
        )
