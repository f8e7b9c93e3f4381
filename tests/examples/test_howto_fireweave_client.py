"""How to: point the real client at the stub, and break it on purpose.

The published client (`pip install fireweave==0.1.0`) in remote mode reads the stub's URL.
"""

from typing import Any

from fireweave import (
    EvaluationContext,
    FireweaveClient,
    FireweaveRemoteAdapter,
    FireweaveRuntime,
    FlagType,
)

from stub import StubClient


def connect(url: str, timeout_ms: int = 3000) -> tuple[Any, Any]:
    adapter = FireweaveRemoteAdapter(api_url=url, api_key="any-key", request_timeout_ms=timeout_ms)
    runtime = FireweaveRuntime(adapter)
    runtime.initialize()
    return adapter, FireweaveClient(runtime)


USER = EvaluationContext(targeting_key="user-1")


def test_the_client_reads_the_fixture_value(svc_stub: StubClient) -> None:
    _, client = connect(svc_stub.url)

    assert client.control_points.get_integer_value("max-items", 10, USER) == 25
    client.shutdown()


def test_a_timeout_serves_the_callers_default(svc_stub: StubClient) -> None:
    _, client = connect(svc_stub.url, timeout_ms=200)

    with svc_stub.fault("delay", apply_to="evaluate", delay_ms=2000):
        decision = client.control_points.get_details("max-items", FlagType.INTEGER, 10, USER)

    assert decision.value == 10
    assert decision.error_kind.value == "Timeout"
    client.shutdown()
