"""A new project's first test: svc-stub installed from the package index, through its
pytest plugin (the `svc_stub` fixture: a stub for the run, a namespace for the test)."""

import json
import urllib.error
import urllib.request

import pytest


def test_an_armed_500_is_what_the_client_gets(svc_stub):
    svc_stub.arm("500", apply_to="evaluate", ttl_requests=1)
    request = urllib.request.Request(
        svc_stub.url + "/v1/flags/evaluate",
        data=json.dumps({"targetingKey": "user-1"}).encode(),
        headers={"Authorization": "Bearer any-key", "Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    refused.value.close()
    assert refused.value.code == 500
