"""SIGTERM with a 10 s delay fault in flight, to the process's exit: how long a test session's
teardown waits for the stub."""

from __future__ import annotations

import contextlib
import json
import signal
import statistics
import threading
import time

from harness.client import EVALUATE, EVALUATE_BODY, get
from harness.servers import started

from scenarios import Options, register

DELAY_MS = 10_000


@register("stop", "SIGTERM to exit with a 10 s delayed request in flight")
def run(options: Options) -> None:
    stop(rounds=options.pick(3, 10))


def stop(rounds: int) -> None:
    print(f"\n## Stop on SIGTERM with a 10 s delay in flight ({rounds} rounds)\n")
    took = [stopped_with_a_request_in_flight() for _ in range(rounds)]
    print(f"- to exit: median {statistics.median(took):.3f} s, slowest {max(took):.3f} s")


def stopped_with_a_request_in_flight() -> float:
    """Seconds from SIGTERM to the exit of a stub holding a delayed evaluate."""
    with started("svc-stub") as stub:
        armed = {"mode": "delay", "delayMs": DELAY_MS, "applyTo": "evaluate"}
        get(stub.url + "/_test/fault", json.dumps(armed).encode())
        in_flight = threading.Thread(target=evaluate_ignoring_the_end, args=(stub.url,))
        in_flight.start()
        time.sleep(0.3)  # the request reaches the stub and waits in the delay
        began = time.perf_counter()
        stub.process.send_signal(signal.SIGTERM)
        stub.process.wait(10)
        took = time.perf_counter() - began
        in_flight.join()
        return took


def evaluate_ignoring_the_end(url: str) -> None:
    with contextlib.suppress(OSError):  # the stub stops under it: any ending will do
        get(url + EVALUATE.path, EVALUATE_BODY.encode(), timeout=15, token="bench")
