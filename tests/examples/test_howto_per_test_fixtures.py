"""How to: serve other fixtures for one test.

The marker takes a file (relative to the test file), a list of files (later ones win per
flag key) or a fixture document; the session's fixtures come back after the test.
"""

import pytest
from test_howto_basic_read import evaluate

from stub import StubClient


@pytest.mark.svc_stub(fixtures="fixtures/checkout.yaml")
def test_only_the_files_flags_are_served(svc_stub: StubClient) -> None:
    assert evaluate(svc_stub.url, "checkout-v3")["value"] == "one-page"
    assert evaluate(svc_stub.url, "checkout-v2")["found"] is False


@pytest.mark.svc_stub(
    fixtures=["fixtures/checkout.yaml", {"flags": {"max-items": {"type": "number", "value": 5}}}]
)
def test_a_document_can_overlay_a_file(svc_stub: StubClient) -> None:
    assert evaluate(svc_stub.url, "max-items")["value"] == 5
    assert evaluate(svc_stub.url, "checkout-v3")["found"] is True


def test_without_the_marker_the_session_fixtures_are_back(svc_stub: StubClient) -> None:
    assert evaluate(svc_stub.url, "checkout-v3")["found"] is False
    assert evaluate(svc_stub.url, "max-items")["value"] == 25


def test_fixtures_can_also_change_mid_test(svc_stub: StubClient) -> None:
    svc_stub.set_fixtures({"flags": {"late": {"type": "boolean", "value": True}}})
    assert evaluate(svc_stub.url, "late")["value"] is True
