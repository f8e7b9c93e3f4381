"""How to: read a flag from the stub, and see what the client sent.

`svc_stub` comes from the plugin svc-stub installs: no conftest needed. It is a control client
whose `.url` is the stub's address, reset before every test.
"""

import json
import urllib.request

from stub import StubClient


def evaluate(url: str, flag_key: str) -> dict[str, object]:
    request = urllib.request.Request(
        f"{url}/v1/flags/evaluate",
        data=json.dumps({"targetingKey": "user-1", "flagKeys": [flag_key]}).encode(),
        headers={"Authorization": "Bearer any-key"},
    )
    with urllib.request.urlopen(request) as answer:
        decision: dict[str, object] = json.load(answer)["decisions"][0]
        return decision


def test_read_a_flag_from_the_default_fixtures(svc_stub: StubClient) -> None:
    decision = evaluate(svc_stub.url, "checkout-v2")

    assert decision["value"] == "treatment-b"
    assert decision["reason"] == "SPLIT"
    (request,) = svc_stub.requests(route="evaluate")
    assert request.status == 200
