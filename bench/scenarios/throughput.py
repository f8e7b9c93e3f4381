"""Evaluate's throughput, CPU per request and latency against bare aiohttp and its ceiling at
1, 16 and 64 connections; then, on the same svc-stub, the other runtime routes and the
management plane's reads and a repeatable write against evaluate."""

from __future__ import annotations

import json

from harness.client import EVALUATE, Route, get, posted
from harness.load import Load, measured
from harness.servers import BENCH, CHECKOUT, Server, started

from scenarios import Options, register

CONNECTIONS = (1, 16, 64)
OTHER_ROUTES = ("/v1/capture", "/flags")
MANAGEMENT_KEY = "svc_org_bench"
"""The bench organisation's key, seeded by MANAGEMENT_SEED with one project."""
MANAGEMENT_SEED = (
    "--fixtures",
    str(CHECKOUT / "fixtures"),
    "--fixtures",
    str(BENCH / "management.yaml"),
)
"""The default fixtures (evaluate's flags) and then the bench organisation."""
PROJECT = "/v1/projects/proj_bench"
SEEDED_ENVIRONMENTS = 4
MANAGEMENT_ROUTES = (
    Route(PROJECT, "GET", None, MANAGEMENT_KEY),
    Route(PROJECT + "/environments", "GET", None, MANAGEMENT_KEY),
    # Sets the same name every time: repeats forever without growing state or conflicting.
    Route(PROJECT, "PATCH", json.dumps({"name": "Bench renamed"}), MANAGEMENT_KEY),
)


@register("throughput", "evaluate against bare aiohttp and its ceiling; other routes; management")
def run(options: Options) -> None:
    throughput(options.pick(2, 5), rounds=options.pick(1, 2))


def throughput(seconds: float, rounds: int) -> None:
    print("\n## Evaluate throughput (keep-alive POST, two keys)\n")
    print(
        "| connections | svc-stub req/s | bare aiohttp req/s | ceiling req/s | ratio to bare "
        "| CPU per request, stub / bare (ratio) | svc-stub p50 / p99 | bare p50 / p99 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    with (
        started("svc-stub", *MANAGEMENT_SEED) as stub,
        started("bare aiohttp") as bare,
        started("aiohttp ceiling") as ceiling,
    ):
        for connections in CONNECTIONS:
            against_aiohttp(stub, bare, ceiling, connections, seconds, rounds)
        evaluate = other_routes(stub, seconds)
        management(stub, seconds, evaluate)


def against_aiohttp(
    stub: Server, bare: Server, ceiling: Server, connections: int, seconds: float, rounds: int
) -> None:
    """One row: each server's best round (req/s) and least CPU per request."""
    results: dict[str, list[Load]] = {stub.name: [], bare.name: [], ceiling.name: []}
    for _ in range(rounds):  # in turns, so drift hits all alike
        for server in (stub, bare, ceiling):
            results[server.name].append(measured(server, connections, seconds))
    best = {name: max(loads, key=lambda load: load.rps) for name, loads in results.items()}
    cpu = {name: min(load.cpu_us for load in loads) for name, loads in results.items()}
    s, b, c = best[stub.name], best[bare.name], best[ceiling.name]
    print(
        f"| {connections} | {s.rps:,.0f} | {b.rps:,.0f} | {c.rps:,.0f} | "
        f"{s.rps / b.rps:.2f} | "
        f"{cpu[stub.name]:.1f} / {cpu[bare.name]:.1f} µs "
        f"({cpu[bare.name] / cpu[stub.name]:.2f}); ceiling {cpu[ceiling.name]:.1f} µs | "
        f"{s.p50_ms:.2f} / {s.p99_ms:.2f} ms | {b.p50_ms:.2f} / {b.p99_ms:.2f} ms |"
    )


def other_routes(stub: Server, seconds: float) -> Load:
    """Capture and /flags against evaluate at 64 connections; evaluate's load, the least CPU
    of two, for the management plane to compare with."""
    print("\nOther routes, 64 connections, against evaluate on the same server:\n")
    print("| route | req/s | CPU per request | CPU relative to evaluate |")
    print("|---|---|---|---|")
    evaluate = least_cpu_of_two(stub, seconds)
    for path in OTHER_ROUTES:
        load = least_cpu_of_two(stub, seconds, posted(path))
        print(
            f"| {path} | {load.rps:,.0f} | {load.cpu_us:.1f} µs | "
            f"{load.cpu_us / evaluate.cpu_us:.2f} |"
        )
    return evaluate


def least_cpu_of_two(stub: Server, seconds: float, route: Route = EVALUATE) -> Load:
    loads = [measured(stub, 64, seconds, route) for _ in range(2)]
    return min(loads, key=lambda load: load.cpu_us)


def management(stub: Server, seconds: float, evaluate: Load) -> None:
    """The management plane's reads and a write, against the evaluate figure just taken."""
    check_management(stub.url)
    print(
        f"\nManagement plane (organisation key, seeded project with {SEEDED_ENVIRONMENTS} "
        "environments), 64 connections, against evaluate on the same server:\n"
    )
    print("| route | req/s | CPU per request | CPU relative to evaluate | failed requests |")
    print("|---|---|---|---|---|")
    for route in MANAGEMENT_ROUTES:
        loads = [measured(stub, 64, seconds, route) for _ in range(2)]
        load = min(loads, key=lambda x: x.cpu_us)
        failed = sum(one.failed for one in loads)
        failures = f"**{failed:,} FAILED** (non-2xx or socket errors)" if failed else "0"
        print(
            f"| {route.label} | {load.rps:,.0f} | {load.cpu_us:.1f} µs | "
            f"{load.cpu_us / evaluate.cpu_us:.2f} | {failures} |"
        )


def check_management(url: str) -> None:
    """Each management request answers 200 with the seeded rows before it is measured: a 401
    or 404 is cheap, and would make the plane look faster than it is."""
    answers = {
        route: json.loads(
            get(
                url + route.path,
                route.body.encode() if route.body is not None else None,
                method=route.method,
                token=route.token,
            )
        )
        for route in MANAGEMENT_ROUTES
    }
    project, environments, patched = (answers[route] for route in MANAGEMENT_ROUTES)
    if project["project"]["projectId"] != "proj_bench":
        raise RuntimeError(f"GET {PROJECT}: not the seeded project: {project}")
    if len(environments["environments"]) != SEEDED_ENVIRONMENTS:
        raise RuntimeError(f"GET {PROJECT}/environments: not the seeded ones: {environments}")
    if patched["project"]["name"] != "Bench renamed":
        raise RuntimeError(f"PATCH {PROJECT}: the name did not change: {patched}")
