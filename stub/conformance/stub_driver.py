"""Driving the stub for a run: each case in a namespace of its own, with its fixtures served
and its fault armed, deleted after (or, on an older stub without namespaces, the whole stub
reset), through its test-control plane."""

from __future__ import annotations

import json
import secrets
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from stub.conformance.cases import Case
from stub.conformance.protocol import AdapterError

Json = dict[str, Any]


class Control:
    """The test-control plane of one case's namespace (or the whole stub, without them)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def get(self, path: str) -> Json:
        return self._send("GET", path)

    def post(self, path: str, body: object) -> Json:
        return self._send("POST", path, body)

    def delete(self, path: str) -> Json:
        return self._send("DELETE", path)

    def _send(self, method: str, path: str, body: object = None) -> Json:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                parsed: Json = json.load(answer)
                return parsed
        except urllib.error.HTTPError as exc:
            with exc:
                said = exc.read().decode(errors="replace")[:300]
            raise AdapterError(f"the stub refused {method} {path}: {exc.code} {said}") from None
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise AdapterError(f"the stub at {self.url}: {method} {path}: {reason}") from None


@contextmanager
def case_stub(stub_url: str, case: Case, *, namespaces: bool) -> Iterator[Control]:
    """The case's namespace, with its fixtures served and its fault armed; deleted after."""
    if not namespaces:
        control = Control(stub_url)
        control.post("/_test/reset", {})
        if case.fixtures is not None:
            control.post("/_test/fixtures", case.fixtures)
        if case.fault is not None:
            control.post("/_test/fault", case.fault)
        yield control
        return
    name = f"conformance-{case.area}-{secrets.token_hex(4)}"
    stub = Control(stub_url)
    created: Json = {"name": name}
    if case.fixtures is not None:
        created["fixtures"] = case.fixtures
    stub.post("/_test/namespaces", created)
    control = Control(f"{stub_url}/ns/{name}")
    try:
        if case.fault is not None:
            control.post("/_test/fault", case.fault)
        yield control
    finally:
        stub.delete(f"/_test/namespaces/{name}")


def has_health(stub_url: str) -> bool:
    try:
        return Control(stub_url).get("/health").get("ok") is True
    except AdapterError:
        return False


def has_namespaces(stub_url: str) -> bool:
    try:
        Control(stub_url).get("/_test/namespaces")
    except AdapterError:
        return False
    return True
