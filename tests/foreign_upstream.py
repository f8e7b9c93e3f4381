"""A foreign upstream: a small server, written for the tests, that answers like the service in
shapes svc-stub never produces itself (extra members, only the new definitions path, answers
cut short, echoed keys, oversized answers, deep nesting, newlines in keys), and remembers every
request it received, so a test can say what the service was sent.

It runs in a thread of its own, on 127.0.0.1 and a port the system picks, so sync tests (and
the subprocesses they start) can use it; `ForeignUpstream.reset()` gives each test the plain
service again, and `answer()` changes one route for one test. `serving()` runs any other
aiohttp app the same way (the TLS upstream of the proxy tests). A second svc-stub as the
service, which answers as svc-stub does, is `conftest.real_service()`.
"""

from __future__ import annotations

import asyncio
import ssl
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

RUNTIME_KEY = "project-api-key_foreign-R7x2q"
VENDOR_KEY = "phc_foreign-V9q4w"
ORG_KEY = "cli-session-foreign-O3k8ZqLm"
"""An organisation credential of no known family (a CLI session token): only the key as given
can find it in what the service echoes."""
KEYS = (RUNTIME_KEY, VENDOR_KEY, ORG_KEY)

Reply = Callable[[web.Request, bytes], Awaitable[web.StreamResponse]]
"""How a route answers: the request and its body (already read) to the answer."""


@dataclass(frozen=True)
class Received:
    """One request as the upstream saw it."""

    method: str
    raw_path: str
    """As sent, query included."""
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        try:
            return orjson.loads(self.body)
        except orjson.JSONDecodeError:
            return None


def decision(flag_key: str, value: object, **more: object) -> dict[str, Any]:
    """A decision as the service writes one, with a member svc-stub does not send."""
    return {
        "flagKey": flag_key,
        "found": True,
        "enabled": True,
        "value": value,
        "variant": None,
        "reason": "TARGETING_MATCH",
        "flagMetadata": {"svc.flagVersion": 1},
        "ruleId": "rule_1",  # an extra member
        **more,
    }


DEFINITIONS = {
    "flags": [
        {
            "id": 1,
            "key": "foreign-on",
            "active": True,
            "version": 1,
            "filters": {
                "groups": [{"properties": [], "rollout_percentage": 100}],
                "multivariate": None,
                "payloads": {},
            },
        }
    ],
    "group_type_mapping": {},
    "cohorts": {},
}
DEFINITIONS_ETAG = '"foreign-definitions-1"'


def json_reply(document: object, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    """A whole JSON answer."""
    return raw_reply(orjson.dumps(document), status, headers)


def raw_reply(body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    """An answer of these bytes, as JSON: what no encoder writes (nesting past orjson's 254
    levels, keys escaped as `\\u0070hc_...`)."""

    async def reply(request: web.Request, sent: bytes) -> web.StreamResponse:
        return web.Response(
            body=body, status=status, content_type="application/json", headers=headers
        )

    return reply


def cut_reply(document: object, kept_bytes: int) -> Reply:
    """The status line and headers with the full Content-Length, the first `kept_bytes` of the
    body, then a clean close: an answer cut short."""
    whole = orjson.dumps(document)

    async def reply(request: web.Request, body: bytes) -> web.StreamResponse:
        response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        response.content_length = len(whole)
        await response.prepare(request)
        await response.write(whole[:kept_bytes])
        assert request.transport is not None
        request.transport.close()
        return response

    return reply


def oversized_reply(total_bytes: int, *, declared: bool) -> Reply:
    """A JSON answer of `total_bytes`, sent in chunks; with `declared`, its Content-Length says
    so up front, else it is chunked and only its reader can tell how large it grows."""
    start, end = b'{"decisions": [], "padding": "', b'"}'
    chunk = b"x" * (256 * 1024)

    async def reply(request: web.Request, body: bytes) -> web.StreamResponse:
        response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        if declared:
            response.content_length = total_bytes
        await response.prepare(request)
        await response.write(start)
        left = total_bytes - len(start) - len(end)
        try:
            while left > 0:
                await response.write(chunk[:left])
                left -= len(chunk)
            await response.write(end)
        except ConnectionError:  # its reader stopped reading: the point of the answer
            return response
        await response.write_eof()
        return response

    return reply


def nested_json(depth: int, innermost: bytes = b"true") -> bytes:
    """A JSON value nested `depth` arrays deep, written by hand: deeper than orjson writes."""
    return b"[" * depth + innermost + b"]" * depth


def evaluate_answer(*decisions: bytes) -> bytes:
    """An evaluate answer around decisions written by hand (JSON objects, as bytes)."""
    return (
        b'{"decisions": [' + b", ".join(decisions) + b'], "requestId": "r", "quotaLimited": false}'
    )


@dataclass
class ForeignUpstream:
    """The server's configuration (mutable per test) and what it received."""

    url: str = ""
    decisions: list[dict[str, Any]] = field(default_factory=list)
    replies: dict[tuple[str, str], Reply] = field(default_factory=dict)
    """(method, path) -> a reply in place of the service's own."""
    received: list[Received] = field(default_factory=list)

    def reset(self) -> None:
        """The plain service again, and nothing received."""
        self.decisions = [decision("foreign-on", True), decision("foreign-text", "hello")]
        self.replies = {}
        self.received.clear()

    def answer(self, method: str, path: str, reply: Reply) -> None:
        self.replies[(method, path)] = reply

    def paths(self) -> list[str]:
        """Every request's path as sent, in order."""
        return [seen.raw_path for seen in self.received]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        headers = dict(request.headers)
        self.received.append(Received(request.method, request.raw_path, headers, body))
        reply = self.replies.get((request.method, request.path)) or self._service(request)
        return await reply(request, body)

    def _service(self, request: web.Request) -> Reply:
        """The service's own answer: only its keys, only the new definitions path."""
        route = (request.method, request.path)
        presented = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if route in _VENDOR_BODY_ROUTES:
            return _vendor_body_route(route)
        if route == ("GET", "/flags/definitions"):
            if request.query.get("token") != VENDOR_KEY:
                return json_reply({"error": "invalid token"}, 401)
            return json_reply(DEFINITIONS, headers={"ETag": DEFINITIONS_ETAG})
        if route in _RUNTIME_ROUTES:
            if presented != RUNTIME_KEY:
                return json_reply(_error("UNAUTHORIZED"), 401)
            return self._runtime(route)
        if route in (("GET", "/v1/whoami"), ("GET", "/v1/projects")):
            if presented != ORG_KEY:
                return json_reply({"error": {"code": "UNAUTHORIZED", "message": "no"}}, 401)
            return _management(route)
        return json_reply(_error("NOT_FOUND"), 404)

    def _runtime(self, route: tuple[str, str]) -> Reply:
        if route == ("POST", "/v1/flags/evaluate"):
            return self.evaluate
        if route == ("POST", "/v1/capture"):
            return self._capture
        return json_reply({"ok": True, "targetingKey": "svc-stub-verify"})

    async def evaluate(self, request: web.Request, body: bytes) -> web.StreamResponse:
        """The service's evaluate (for a test's reply to fall back on)."""
        asked = _object(body)
        if not isinstance(asked.get("targetingKey"), str):
            return await json_reply(_error("TARGETING_KEY_REQUIRED"), 400)(request, body)
        wanted = asked.get("flagKeys") or [d["flagKey"] for d in self.decisions]
        served = {d["flagKey"]: d for d in self.decisions}
        decisions = [
            served.get(key, {"flagKey": key, "found": False, "value": None, "reason": "ERROR"})
            for key in wanted
        ]
        answer = {"decisions": decisions, "requestId": "req_1", "quotaLimited": False}
        return await json_reply(answer)(request, body)

    async def _capture(self, request: web.Request, body: bytes) -> web.StreamResponse:
        events = _object(body).get("events")
        if not isinstance(events, list):
            return await json_reply(_error("INVALID_BODY"), 400)(request, body)
        return await json_reply({"ok": True, "accepted": len(events)})(request, body)


_RUNTIME_ROUTES = {
    ("POST", "/v1/flags/evaluate"),
    ("POST", "/v1/capture"),
    ("POST", "/v1/targets/register"),
}
_VENDOR_BODY_ROUTES = {("POST", "/flags/"), ("POST", "/batch/")}


def _vendor_body_route(route: tuple[str, str]) -> Reply:
    if route == ("POST", "/batch/"):
        return json_reply({"status": 1})
    flags = {
        "flags": {"foreign-on": {"key": "foreign-on", "enabled": True, "variant": None}},
        "errorsWhileComputingFlags": False,
        "quotaLimited": None,
        "requestId": "req_1",
    }
    return json_reply(flags)


def _management(route: tuple[str, str]) -> Reply:
    if route == ("GET", "/v1/whoami"):
        return json_reply({"userId": "usr_1", "orgId": "org_foreign", "scope": "org:management"})
    return json_reply({"projects": []})


def _error(code: str) -> dict[str, Any]:
    return {"ok": False, "error": code, "message": code.lower().replace("_", " ")}


def _object(body: bytes) -> dict[str, Any]:
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


@contextmanager
def running() -> Iterator[ForeignUpstream]:
    """The server, on 127.0.0.1 and a port of the system's choosing, in its own thread."""
    upstream = ForeignUpstream()
    upstream.reset()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", upstream.handle)
    with serving(app) as url:
        upstream.url = url
        yield upstream


@contextmanager
def serving(app: web.Application, ssl_context: ssl.SSLContext | None = None) -> Iterator[str]:
    """Any aiohttp app as an upstream: served on 127.0.0.1, on a port of the system's choosing,
    from an event loop in a thread of its own (so sync tests and the subprocesses they start
    reach it); over https with `ssl_context`. Its URL."""
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, access_log=None)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ssl_context)
    loop.run_until_complete(site.start())
    port = runner.addresses[0][1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"{'https' if ssl_context else 'http'}://127.0.0.1:{port}"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.run_until_complete(runner.cleanup())
        loop.close()
