"""The requests scenarios send: the one wrk repeats (`Route`), and single ones sent from here,
to set a server up, to check it answers what is measured, or to count what a request costs."""

from __future__ import annotations

import http.client
import json
import urllib.request
from dataclasses import dataclass
from typing import Any

EVALUATE_BODY = json.dumps({"targetingKey": "user-1", "flagKeys": ["checkout-v2", "pricing-page"]})
ROUTE_BODIES: dict[str, dict[str, Any]] = {
    "/v1/capture": {"events": [{"type": "exposure", "targetingKey": "u", "flagKey": "k"}]},
    "/flags": {"api_key": "phc", "distinct_id": "u", "flag_keys_to_evaluate": ["checkout-v2"]},
}
"""A small valid body for each other route `posted` sends."""


@dataclass(frozen=True)
class Route:
    """The one request wrk repeats in a scenario (bench/post.lua reads it from the environment)."""

    path: str = "/v1/flags/evaluate"
    method: str = "POST"
    body: str | None = EVALUATE_BODY
    token: str = "bench-key"
    origin: str | None = None
    """Sent as `Origin`: a page on another origin calls (the answer then carries CORS)."""

    @property
    def label(self) -> str:
        return self.path if self.method == "POST" else f"{self.method} {self.path}"


EVALUATE = Route()


def posted(path: str) -> Route:
    """A POST to `path` (a key of ROUTE_BODIES) with its body."""
    return Route(path, body=json.dumps(ROUTE_BODIES[path]))


def get(
    url: str,
    body: bytes | None = None,
    timeout: float = 5,
    method: str | None = None,
    token: str | None = None,
    content_type: str = "application/json",
) -> bytes:
    """The answer's body; urllib's HTTPError on a status of 400 or more."""
    headers = {"Content-Type": content_type}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=body, headers=headers, method=method)
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        received: bytes = answer.read()
        return received


def check_evaluate(url: str) -> None:
    """Evaluate at `url` finds both bench flags: a 401 or an empty answer would be cheaper than
    the request measured, and flatter it."""
    answer = json.loads(get(url, EVALUATE_BODY.encode(), token=EVALUATE.token))
    found = [decision["flagKey"] for decision in answer["decisions"] if decision["found"]]
    if found != json.loads(EVALUATE_BODY)["flagKeys"]:
        raise RuntimeError(f"{url}: evaluate did not find the bench flags: {answer}")


def check_capture(url: str) -> None:
    """Capture at `url` accepts the bench's one event, as svc-stub answers it."""
    body = ROUTE_BODIES["/v1/capture"]
    answer = json.loads(get(url, json.dumps(body).encode(), token=EVALUATE.token))
    if answer != {"ok": True, "accepted": len(body["events"])}:
        raise RuntimeError(f"{url}: capture did not accept the bench event: {answer}")


def check_flags(url: str) -> None:
    """The vendor's /flags at `url` answers the one flag asked for, enabled, in the v2 body."""
    body = ROUTE_BODIES["/flags"]
    answer = json.loads(get(url, json.dumps(body).encode(), token=EVALUATE.token))
    members = {"flags", "errorsWhileComputingFlags", "quotaLimited", "requestId"}
    flags = answer.get("flags", {}) if set(answer) == members else {}
    if list(flags) != body["flag_keys_to_evaluate"] or not all(
        {"key", "enabled", "variant", "reason", "metadata"} <= set(record) and record["enabled"]
        for record in flags.values()
    ):
        raise RuntimeError(f"{url}: /flags did not answer the bench flag: {answer}")


CHECKS = {EVALUATE.path: check_evaluate, "/v1/capture": check_capture, "/flags": check_flags}
"""Each route's check, by path: called with the route's URL."""


def check_answer(server_url: str, route: Route) -> None:
    """`route` (evaluate or a key of ROUTE_BODIES) at the server answers 200 with the shape
    svc-stub answers: a 400, 404 or an empty answer is cheap, and would flatter the server."""
    CHECKS[route.path](server_url + route.path)


def connection_to(url: str, timeout: float) -> http.client.HTTPConnection:
    """A keep-alive connection to the server at `url` (`http://host:port`)."""
    host, port = url.removeprefix("http://").split(":")
    return http.client.HTTPConnection(host, int(port), timeout=timeout)


def evaluate_headers(origin: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {EVALUATE.token}", "Content-Type": "application/json"}
    if origin is not None:
        headers["Origin"] = origin
    return headers


def evaluate_once(connection: http.client.HTTPConnection, headers: dict[str, str]) -> None:
    """One evaluate on `connection`, its answer read whole; RuntimeError unless a 200."""
    connection.request("POST", EVALUATE.path, EVALUATE_BODY, headers)
    answer = connection.getresponse()
    answer.read()
    if answer.status != 200:
        raise RuntimeError(f"evaluate answered {answer.status}")


def send_evaluates(url: str, count: int, origin: str | None = None) -> None:
    """`count` evaluates one after another on one keep-alive connection."""
    send_requests(url, count, Route(origin=origin))


def send_requests(url: str, count: int, route: Route = EVALUATE) -> None:
    """`count` of `route` one after another on one keep-alive connection, each answer read
    whole; RuntimeError unless each is a 200."""
    connection = connection_to(url, timeout=60)
    headers = {"Authorization": f"Bearer {route.token}"}
    if route.body is not None:
        headers["Content-Type"] = "application/json"
    if route.origin is not None:
        headers["Origin"] = route.origin
    try:
        for _ in range(count):
            connection.request(route.method, route.path, route.body, headers)
            answer = connection.getresponse()
            answer.read()
            if answer.status != 200:
                raise RuntimeError(f"{route.label} answered {answer.status}")
    finally:
        connection.close()
