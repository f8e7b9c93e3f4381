"""RSS after a million requests with the default recording bounds: the journal and the lists
are bounded, so memory levels off however long a test session runs."""

from __future__ import annotations

import time

from harness.load import wrk
from harness.servers import started

from scenarios import Options, register

TARGET = 1_000_000
ROUND_S = 10


@register(
    "million",
    f"RSS after {TARGET:,} requests (minutes; left out of --quick)",
    in_quick_run=False,
)
def run(options: Options) -> None:
    million()


def million(target: int = TARGET) -> None:
    print(f"\n## RSS after {target:,} requests with the default recording bounds\n")
    with started("svc-stub") as stub:
        before = stub.rss_mb
        served, began = 0, time.perf_counter()
        while served < target:
            load = wrk(stub.url, 64, ROUND_S)
            served += int(load.rps * ROUND_S)
        print(
            f"- {served:,} requests in {time.perf_counter() - began:.0f} s; "
            f"RSS {before:.1f} MB before, {stub.rss_mb:.1f} MB after"
        )
