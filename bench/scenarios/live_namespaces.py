"""1,000 namespaces, each filled as a test would leave it and then to its recording bound: RSS
before and after, and what creating one costs the server."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Callable
from typing import Any

from harness.client import EVALUATE_BODY, connection_to, get
from harness.servers import Server, started

from scenarios import Options, register
from stub.config import DEFAULT_NAMESPACE_MAX_RECORDED

LIVE_NAMESPACES = 1_000
THREADS = 8
"""Clients filling namespaces at once, each over its own connection."""


@register("live-namespaces", f"{LIVE_NAMESPACES:,} live namespaces: what creating one costs, RSS")
def run(options: Options) -> None:
    live_namespaces(DEFAULT_NAMESPACE_MAX_RECORDED)


def live_namespaces(per_list: int) -> None:
    """`per_list`: events sent to each namespace last, its lists' bound."""
    print(f"\n## {LIVE_NAMESPACES:,} live namespaces\n")
    names = [f"test-{n:04d}" for n in range(LIVE_NAMESPACES)]
    with started("svc-stub") as stub:
        creation_cost(stub, names)
        listed = filled(stub, names, events=10, registrations=10)
        held = listed["namespaces"][-1]["recorded"]
        print(
            f"- {listed['count']:,} namespaces each holding what a test leaves ({held}): "
            f"RSS {stub.rss_mb:.1f} MB; {listed['recorded']:,} entries together, "
            f"{listed['evicted']} evicted"
        )
        if listed["count"] != LIVE_NAMESPACES or listed["evicted"]:
            raise RuntimeError(f"namespaces were lost: {listed}")
        listed = filled(stub, names, events=per_list, registrations=0)
        print(
            f"- The same {LIVE_NAMESPACES:,} each then sent {per_list:,} events and "
            f"{per_list:,} vendor events (their lists' bound): RSS {stub.rss_mb:.1f} MB; "
            f"{listed['recorded']:,} entries together (bound {listed['maxRecorded']:,}), "
            f"{listed['evicted']:,} least recently used evicted, {listed['count']:,} live"
        )


def creation_cost(stub: Server, names: list[str]) -> None:
    """Server CPU to create each of `names`, against as many `GET /health` for scale."""
    idle = stub.rss_mb
    health_cpu = server_cpu_of(stub, lambda: health(stub.url, LIVE_NAMESPACES))
    create_cpu = server_cpu_of(stub, lambda: create(stub.url, names))
    print(
        f"- Creating one: {create_cpu / LIVE_NAMESPACES * 1000:.3f} ms of server CPU per "
        f"`POST /_test/namespaces` ({health_cpu / LIVE_NAMESPACES * 1000:.3f} ms for a "
        f"`GET /health` on the same connection); RSS {idle:.1f} MB idle, "
        f"{stub.rss_mb:.1f} MB with {LIVE_NAMESPACES:,} empty namespaces"
    )


def server_cpu_of(server: Server, work: Callable[[], None]) -> float:
    before = server.cpu_s
    work()
    return server.cpu_s - before


def create(url: str, names: list[str]) -> None:
    connection = connection_to(url, timeout=10)
    for name in names:
        call(connection, "POST", "/_test/namespaces", {"name": name})
    connection.close()


def health(url: str, count: int) -> None:
    connection = connection_to(url, timeout=10)
    for _ in range(count):
        call(connection, "GET", "/health")
    connection.close()


def filled(stub: Server, names: list[str], events: int, registrations: int) -> dict[str, Any]:
    """`fill` from THREADS threads, each a share of `names`; the stub's list of namespaces."""
    chunks = [names[n::THREADS] for n in range(THREADS)]
    workers = [
        threading.Thread(target=fill, args=(stub.url, chunk, events, registrations))
        for chunk in chunks
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    listed: dict[str, Any] = json.loads(get(stub.url + "/_test/namespaces"))
    return listed


def fill(url: str, names: list[str], events: int, registrations: int) -> None:
    """What a test leaves: an evaluation, a capture and a batch of `events` each, and
    `registrations` target registrations."""
    connection = connection_to(url, timeout=10)
    for name in names:
        prefix = f"/ns/{name}"
        try:
            call(connection, "POST", prefix + "/v1/flags/evaluate", json.loads(EVALUATE_BODY))
        except RuntimeError:
            if registrations:  # filling to the bound evicts the least recently used
                raise
            continue
        exposures = [exposure(name, k) for k in range(events)]
        call(connection, "POST", prefix + "/v1/capture", {"events": exposures})
        batch = [vendor_event(name, k) for k in range(events)]
        call(connection, "POST", prefix + "/batch/", {"api_key": "phc", "batch": batch})
        for k in range(registrations):
            target = {"targetingKey": f"{name}-{k}", "kind": "user"}
            call(connection, "POST", prefix + "/v1/targets/register", target)
    connection.close()


def call(
    connection: http.client.HTTPConnection, method: str, path: str, body: object = None
) -> int:
    """The status of `method path` with `body` as JSON; RuntimeError on 300 or more."""
    data = None if body is None else json.dumps(body)
    headers = {"Authorization": "Bearer bench-key", "Content-Type": "application/json"}
    connection.request(method, path, data, headers)
    answer = connection.getresponse()
    answer.read()
    if answer.status >= 300:
        raise RuntimeError(f"{method} {path}: {answer.status}")
    return answer.status


def exposure(name: str, k: int) -> dict[str, object]:
    return {
        "type": "exposure",
        "targetingKey": f"{name}-user-{k}",
        "flagKey": "checkout-v2",
        "value": "treatment-b",
        "variant": "treatment-b",
    }


def vendor_event(name: str, k: int) -> dict[str, object]:
    return {
        "event": "$feature_flag_called",
        "distinct_id": f"{name}-user-{k}",
        "properties": {
            "$feature_flag": "checkout-v2",
            "$feature_flag_response": "treatment-b",
            "$lib": "posthog-python",
        },
    }
