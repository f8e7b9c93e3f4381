"""1,000 concurrent connections on evaluate, with /health probed meanwhile: what a very wide
test run sees, and whether the stub still answers a health check under it."""

from __future__ import annotations

import threading
import time

from harness.client import get
from harness.load import wrk
from harness.servers import started

from scenarios import Options, register

CONNECTIONS = 1000


@register("connections", f"{CONNECTIONS:,} concurrent connections, /health probed meanwhile")
def run(options: Options) -> None:
    thousand_connections(options.pick(2, 5))


def thousand_connections(seconds: float) -> None:
    print("\n## 1,000 concurrent connections (svc-stub)\n")
    with started("svc-stub") as stub:
        probes: list[float] = []
        done = threading.Event()
        prober = threading.Thread(target=probe, args=(stub.url, probes, done))
        prober.start()
        load = wrk(stub.url, CONNECTIONS, seconds)
        done.set()
        prober.join()
        print(
            f"- {load.rps:,.0f} req/s, p99 {load.p99_ms:.1f} ms, socket errors {load.errors}, "
            f"non-2xx {load.non_2xx}"
        )
        print(
            f"- /health during the load: slowest of {len(probes)} probes "
            f"{max(probes) * 1000:.0f} ms"
        )
        print(f"- RSS after: {stub.rss_mb:.1f} MB")


def probe(url: str, took: list[float], done: threading.Event) -> None:
    """`GET /health` every 0.2 s until `done`, each one's time appended to `took`."""
    while not done.is_set():
        began = time.perf_counter()
        get(url + "/health", timeout=10)
        took.append(time.perf_counter() - began)
        time.sleep(0.2)
