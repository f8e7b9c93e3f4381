"""How to: wait for events a client sends in the background, without sleeping.

`wait_for_svc_events(n)` long-polls the stub: it returns the moment the n-th event arrives and
fails (showing what did arrive) if the timeout passes first.
"""

import threading

from fireweave import EvaluationContext, FlagType
from test_howto_fireweave_client import connect

from stub import StubClient


def test_an_exposure_flushed_in_the_background_is_seen(svc_stub: StubClient) -> None:
    adapter, client = connect(svc_stub.url)
    user = EvaluationContext(targeting_key="user-1")
    decision = client.control_points.get_details("checkout-v2", FlagType.STRING, "control", user)
    client.exposures.record("user-1", "checkout-v2", decision.variant, decision.value)

    def flush() -> None:  # an SDK would do this on its own timer
        client.exposures.flush()
        adapter.flush()

    threading.Timer(0.2, flush).start()

    (exposure,) = svc_stub.wait_for_svc_events(1, timeout=5)
    assert exposure["type"] == "exposure"
    svc_stub.assert_exposure("checkout-v2", "user-1", variant="treatment-b")
    client.shutdown()
