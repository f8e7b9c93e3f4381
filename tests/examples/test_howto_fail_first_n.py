"""How to: fail the first N requests, then succeed (a retry test)."""

import urllib.error

from test_howto_basic_read import evaluate

from stub import StubClient


def status_of(url: str) -> int:
    try:
        evaluate(url, "new-checkout")
    except urllib.error.HTTPError as error:
        error.close()
        return error.code
    return 200


def test_the_first_two_fail_then_it_recovers(svc_stub: StubClient) -> None:
    svc_stub.arm("500", apply_to="evaluate", ttl_requests=2)

    assert [status_of(svc_stub.url) for _ in range(4)] == [500, 500, 200, 200]
    assert svc_stub.armed() == []  # it disarmed itself


def test_a_scripted_outage(svc_stub: StubClient) -> None:
    svc_stub.arm(sequence=["429", {"mode": "status", "status": 503}, "none"], apply_to="evaluate")

    assert [status_of(svc_stub.url) for _ in range(4)] == [429, 503, 200, 200]
