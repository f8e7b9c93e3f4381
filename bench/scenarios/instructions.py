"""The instructions an evaluate costs under callgrind, in each server: steady where timings
drift, so a change of a few percent shows."""

from __future__ import annotations

from harness.callgrind import instructions_per_evaluate
from harness.servers import SERVERS

from scenarios import Options, register


@register("instructions", "instructions per evaluate under callgrind, in each server")
def run(options: Options) -> None:
    instructions(options.pick(1000, 5000))


def instructions(requests: int) -> None:
    print(f"\n## Instructions per evaluate (callgrind, {requests:,} requests, one connection)\n")
    counted = {name: instructions_per_evaluate(name, requests) for name in SERVERS}
    print("| server | instructions per request | relative to bare aiohttp |")
    print("|---|---|---|")
    for name, count in counted.items():
        print(f"| {name} | {count:,.0f} | {count / counted['bare aiohttp']:.3f} |")
