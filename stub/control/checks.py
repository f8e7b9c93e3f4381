"""`/_test/checks/{check}`: the verdicts a failed test wants explained, computed from the
journal once, here, so every language's helper reports the same verdict in the same words.

Each answers 200 with `{"check", "passed", "message"}` when it ran: `message` is what a failing
assertion shows, as is (when passed, what held). A bad parameter is a 400 naming it.
"""

from __future__ import annotations

import itertools
import json
import urllib.parse
from collections.abc import Awaitable, Callable, Iterable

from aiohttp import web

from stub.control import redaction
from stub.control.journal import retry_after_of
from stub.control.routes import arrival_order, is_route, route_query, wait
from stub.cors import PREFLIGHT
from stub.state import Json, RequestRecord, StubState, state_of
from stub.wire import ApiError, invalid_body, json_response

routes = web.RouteTableDef()

RETRY_AFTER_SLACK_MS = 5.0
"""What a client's timer may fire early by (runtimes round their sleeps) before a wait counts
as shorter than the `Retry-After` it honours."""

Verdict = tuple[bool, str]


@routes.get("/_test/checks/{check}", name="check")
async def check(request: web.Request) -> web.Response:
    name = request.match_info["check"]
    checking = CHECKS.get(name)
    if checking is None:
        known = ", ".join(CHECKS)
        raise ApiError(404, "NOT_FOUND", f"check: no check {name!r} (the checks: {known})")
    passed, message = await checking(request)
    return json_response({"check": name, "passed": passed, "message": message})


async def no_early_retry(request: web.Request) -> Verdict:
    """No request came back sooner after an answer carrying `Retry-After` than it asked, to
    `?route=` (each route on its own when none is named)."""
    route = route_query(request)
    requests = _arrived(state_of(request), route)
    early = []
    carried = sum(retry_after_of(r) is not None for r in requests)
    # a stable sort by route keeps each route's requests in their arrival order
    for name, group in itertools.groupby(sorted(requests, key=_route), key=_route):
        for before, after in itertools.pairwise(group):
            seconds = retry_after_of(before)
            if seconds is None:
                continue
            waited_ms = (after.arrived - before.arrived - before.duration_s) * 1000
            if waited_ms + RETRY_AFTER_SLACK_MS < seconds * 1000:
                early.append(
                    (
                        name,
                        f"#{after.seq} came {waited_ms:.0f} ms after #{before.seq} was "
                        f"answered {before.status} with Retry-After: {seconds}",
                    )
                )
    if early:
        retried = ", ".join(dict.fromkeys(repr(name) for name, _ in early))
        lines = "".join(f"\n  {line}" for _, line in early)
        return False, f"retried {retried} before Retry-After allowed:{lines}"
    answers = f"{carried} answer{'' if carried == 1 else 's'}"
    return True, f"no request came back before Retry-After allowed ({answers} carried one)"


async def no_request(request: web.Request) -> Verdict:
    """Nothing was sent to `?route=`, or without one, to any route (a client kept offline)."""
    route = route_query(request)
    sent = _arrived(state_of(request), route)
    to = "" if route is None else f" to route {route!r}"
    if sent:
        lines = "".join(f"\n  #{r.seq} {r.method} {_path(r)} -> {_status(r)}" for r in sent)
        return False, f"expected no request{to}, got {len(sent)}:{lines}"
    return True, f"no request{to}"


async def exposure(request: web.Request) -> Verdict:
    """An exposure of `?flagKey=` for `?targetingKey=` (and `?variant=`) was captured; with
    `?waitMs=`, waited for up to that long (clients send in the background)."""
    flag_key, targeting_key = _required(request, "flagKey"), _required(request, "targetingKey")
    variant = request.query.get("variant")
    state = state_of(request)

    def found() -> Json | None:
        matching = (e for e in _exposures(state) if _matches(e, flag_key, targeting_key, variant))
        return next(matching, None)

    await wait(request, lambda: found() is not None)
    wanted = f"{flag_key} for {targeting_key}" + (f" (variant {variant})" if variant else "")
    match = found()
    if match is not None:
        return True, f"exposure of {wanted} recorded"
    seen = [_exposure_line(e) for e in _exposures(state)] or ["(none)"]
    return False, f"no exposure of {wanted}; exposures recorded:" + "".join(
        f"\n  {line}" for line in seen
    )


async def no_warnings(request: web.Request) -> Verdict:
    warned = [r for r in _arrived(state_of(request), None) if r.warning is not None]
    if warned:
        lines = "".join(f"\n  #{r.seq} {r.method} {_path(r)}: {r.warning}" for r in warned)
        count = f"{len(warned)} request{'s' if len(warned) > 1 else ''}"
        return False, f"{count} used a key where the service refuses it:{lines}"
    return True, "no request used a key where the service refuses it"


CHECKS: dict[str, Callable[[web.Request], Awaitable[Verdict]]] = {
    "retry-after": no_early_retry,
    "no-request": no_request,
    "exposure": exposure,
    "no-warnings": no_warnings,
}


def _arrived(state: StubState, route: str | None) -> list[RequestRecord]:
    """The namespace's requests (to `route`), in the order they arrived; a browser's preflight
    is no client's request."""
    kept = (r for r in state.requests.snapshot() if r.route != PREFLIGHT)
    return arrival_order(r for r in kept if route is None or is_route(r.route, route))


def _exposures(state: StubState) -> Iterable[Json]:
    return (e for e in state.svc_events.snapshot() if e.get("type") == "exposure")


def _matches(event: Json, flag_key: str, targeting_key: str, variant: str | None) -> bool:
    same = event.get("flagKey") == flag_key and event.get("targetingKey") == targeting_key
    return same and (variant is None or event.get("variant") == variant)


def _exposure_line(event: Json) -> str:
    def shown(value: object) -> str:
        return value if isinstance(value, str) else json.dumps(value)

    line = f"{shown(event.get('flagKey'))} for {shown(event.get('targetingKey'))}"
    return line + (f": variant {shown(event['variant'])}" if "variant" in event else "")


def _required(request: web.Request, name: str) -> str:
    value = request.query.get(name)
    if not value:
        raise invalid_body(f"{name}: required (?{name}=...)")
    return value


def _path(record: RequestRecord) -> str:
    """As the journal shows it: keys a client put in the URL redacted."""
    return redaction.path(record.headers, urllib.parse.unquote(record.target.partition("?")[0]))


def _status(record: RequestRecord) -> str:
    return "no answer" if record.status is None else str(record.status)


def _route(record: RequestRecord) -> str:
    return record.route or ""
