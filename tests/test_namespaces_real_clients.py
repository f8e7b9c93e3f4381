"""32 namespaces driven at once by the published clients, each given its namespace's base URL
(`<stub>/ns/<name>`) and nothing else: fireweave 0.1.0 and the posthog SDK keep the base path,
every namespace sees exactly its own traffic, and a fault armed in half of them fires in those
alone."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest
from fireweave import EvaluationContext, FireweaveClient, FireweaveRemoteAdapter, FireweaveRuntime
from posthog import Posthog

from conftest import SpawnedStub, spawn_stub
from stub.client import StubClient

NAMESPACES = 32


@dataclass
class Seen:
    """What one namespace's clients read."""

    name: str
    fireweave_value: bool
    posthog_value: Any


def drive(base_url: str, name: str, faulted: bool) -> Seen:
    control = StubClient(base_url, namespace=name)
    if faulted:
        control.arm("500", apply_to="evaluate")
    adapter = FireweaveRemoteAdapter(api_url=control.url, api_key="fw-key", request_timeout_ms=3000)
    runtime = FireweaveRuntime(adapter)
    runtime.initialize()
    fireweave = FireweaveClient(runtime)
    posthog = Posthog("phc_key", host=control.url, sync_mode=True, max_retries=0, timeout=3)
    try:
        value = fireweave.control_points.get_boolean_value(
            "new-checkout", False, EvaluationContext(targeting_key=name)
        )
        fireweave.signals.record_health(name, "ok")
        adapter.flush()
        flag = posthog.evaluate_flags(name).get_flag("checkout-v2")
        posthog.capture(distinct_id=name, event=f"event-of-{name}")
    finally:
        fireweave.shutdown()
        posthog.shutdown()
    return Seen(name, value, flag)


@pytest.fixture
def own_stub() -> Iterator[SpawnedStub]:
    """A stub of this test's own: the session's may still hear from earlier tests' clients
    flushing in the background, and this test checks the default namespace hears nothing."""
    with spawn_stub(read_log=False) as stub:
        yield stub


def test_32_namespaces_driven_at_once_each_see_exactly_their_own(own_stub: SpawnedStub) -> None:
    names = [f"real-{n}" for n in range(NAMESPACES)]
    with ThreadPoolExecutor(NAMESPACES) as pool:
        seen = list(
            pool.map(lambda n: drive(own_stub.url, names[n], n % 2 == 1), range(NAMESPACES))
        )
    try:
        for n, (name, one) in enumerate(zip(names, seen, strict=True)):
            faulted = n % 2 == 1
            assert one.fireweave_value is (not faulted), name  # the default when faulted
            assert one.posthog_value == "treatment-b", name  # /flags is never faulted here
            control = StubClient(own_stub.url, namespace=name)
            recorded = control.recorded()
            assert [e["name"] for e in recorded.svc_events] == [name]
            assert {e["distinct_id"] for e in recorded.events} == {name}
            assert f"event-of-{name}" in [e["event"] for e in recorded.events]
            routes = {(r.route, r.status, r.path) for r in control.requests()}
            assert routes == {
                ("batch", 200, "/batch/"),
                ("capture", 200, "/v1/capture"),
                ("evaluate", 500 if faulted else 200, "/v1/flags/evaluate"),
                ("flags", 200, "/flags/"),
            }, name
    finally:
        control = StubClient(own_stub.url)
        for name in names:
            control.delete_namespace(name)
    assert control.requests() == []  # nothing reached the default namespace
