"""How to: break one route for the length of a `with` block.

`svc_stub.fault(...)` arms a fault, and disarms exactly that one when the block ends, so the
rest of the test (and anything armed outside the block) is untouched.
"""

import urllib.error

import pytest
from test_howto_basic_read import evaluate

from stub import StubClient


def test_evaluate_fails_inside_the_block_only(svc_stub: StubClient) -> None:
    with svc_stub.fault("429", apply_to="evaluate", retry_after=2):
        with pytest.raises(urllib.error.HTTPError) as refused:
            evaluate(svc_stub.url, "new-checkout")
        assert refused.value.code == 429
        assert refused.value.headers["Retry-After"] == "2"
        refused.value.close()

    assert evaluate(svc_stub.url, "new-checkout")["value"] is True
    faulted, served = svc_stub.requests(route="evaluate")
    assert faulted.fault is not None
    assert (faulted.fault.mode, faulted.fault.source) == ("429", "armed")
    assert served.fault is None
