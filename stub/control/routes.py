"""The test-control plane: health, reset, recorded traffic, fixtures and faults."""

from __future__ import annotations

import functools
import operator
import socket
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web
from yarl import URL

from stub.control.journal import entry, in_full, rendered_in_turns
from stub.control.redaction import known_secrets
from stub.cors import PREFLIGHT
from stub.faults.arming import SELECTORS
from stub.fixtures import FixtureSet, built_off_loop, parse_fixture_document, parse_yaml
from stub.keys import parse_limits
from stub.management.seed import ManagementSeed, parse_management
from stub.namespaces import NAMESPACES, base_url
from stub.packaged import PackagedFile
from stub.posthog.documents import fixtures_from_vendor_flags
from stub.state import RequestRecord, Served, StubState, state_of
from stub.validation import FixtureError, Where, mapping
from stub.wire import (
    MAX_WAIT_MS,
    ApiError,
    encoded_response,
    invalid_body,
    invalid_fixtures,
    is_count,
    json_object,
    json_response,
    query_flag,
    query_int,
    read_body,
    read_json_object,
)

routes = web.RouteTableDef()
NO_NAMESPACE = frozenset({"health", "openapi", "offline"})
"""Routes that act on no namespace: `/ns/x/health` is only health, and creates nothing."""
WATCHING = frozenset({"request"})
"""Routes that read a namespace only if it exists (a page's click on a row of a namespace
deleted since must not make it again)."""

_OPENAPI = PackagedFile(Path(__file__).resolve().parent.parent / "openapi.json")

_YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml")


@routes.get("/health", name="health")
async def health(request: web.Request) -> web.Response:
    return json_response({"ok": True})


@routes.get("/_test/openapi.json", name="openapi")
async def openapi(request: web.Request) -> web.Response:
    """The stub's own API as OpenAPI 3.1, so users' tools can read it (kept in the repo)."""
    return encoded_response(_OPENAPI.data)  # read on first request: start-up skips 300 KB


@routes.get("/_test/offline", name="offline")
async def offline(request: web.Request) -> web.Response:
    """An address where nothing listens, for a test of a client's offline behaviour: a port
    the stub holds bound and never listens on, for as long as it runs (so nothing else can
    take it): every connection to it is refused at once. Its host is the one the caller
    reached the stub by."""
    config = request.app[NAMESPACES].config
    host = request.url.host or config.host
    return json_response(
        {"url": str(URL.build(scheme="http", host=host, port=_held_port(config.host)))}
    )


@functools.cache
def _held_port(host: str) -> int:
    """Bound on the stub's own address (every address, when it listens on all of them), on
    the first ask, and held until the process ends."""
    family, kind, protocol, _, address = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM)[0]
    held = socket.socket(family, kind, protocol)
    held.bind(address)
    _HELD.append(held)
    port: int = held.getsockname()[1]
    return port


_HELD: list[socket.socket] = []
"""The sockets `_held_port` holds (a cache of ports alone would let them be collected)."""


@routes.post("/_test/reset", name="reset")
async def reset(request: web.Request) -> web.Response:
    state_of(request).reset()
    return json_response({"ok": True})


@routes.get("/_test/events", name="events")
async def events(request: web.Request) -> web.Response:
    """What clients sent; `?minSvcEvents=3&waitMs=2000` (and `minEvents`, `minTargets`) waits
    until that many are recorded, or the wait runs out, before answering."""
    state = state_of(request)
    logs = {"events": state.events, "svcEvents": state.svc_events, "targets": state.targets}
    minimums = {name: query_int(request, "min" + name[0].upper() + name[1:]) for name in logs}
    await wait(request, lambda: all(len(logs[n]) >= (m or 0) for n, m in minimums.items()))
    body: dict[str, Any] = {name: log.snapshot() for name, log in logs.items()}
    body["dropped"] = {name: log.dropped for name, log in logs.items()}
    return json_response(body)


@routes.get("/_test/requests", name="requests")
async def requests(request: web.Request) -> web.Response:
    """The request log, in the order requests arrived (`?order=end`: as they ended; a request
    is listed once it has ended); `?route=evaluate` keeps one route, `?min=2&waitMs=2000` waits
    for it (preflights listed, never counted), `?bodies=true` gives each in full (body,
    answer, curl)."""
    log = state_of(request).requests
    route = route_query(request)
    minimum = query_int(request, "min") or 0
    bodies = query_flag(request, "bodies")  # a bad value is a 400 before any wait
    in_arrival_order = _order(request) == "arrival"

    def entries() -> list[RequestRecord]:
        kept = [r for r in log.snapshot() if route is None or is_route(r.route, route)]
        return arrival_order(kept) if in_arrival_order else kept

    def counted() -> int:  # unfiltered, a browser's preflight counts as no client's request
        found = entries()
        return len(found) if route is not None else sum(r.route != PREFLIGHT for r in found)

    await wait(request, lambda: counted() >= minimum)
    render = _in_full(request) if bodies else _summary(request)  # the secrets known by now
    journal = await rendered_in_turns(entries(), render)
    return json_response({"requests": journal, "dropped": log.dropped})


@routes.get("/_test/requests/{seq}", name="request")
async def one_request(request: web.Request) -> web.Response:
    """One request in full, by its `seq`: the body it sent, the answer it got, and curl."""
    raw = request.match_info["seq"]
    wanted = int(raw) if is_count(raw) else None
    journal = state_of(request).requests.newest_first()
    found = next((r for r in journal if r.seq == wanted), None)
    if found is None:
        message = f"seq: no request {raw!r} in this namespace's journal (dropped, or reset)"
        raise ApiError(404, "NOT_FOUND", message)
    return json_response(_in_full(request)(found))


ORDERS = ("arrival", "end")


def _order(request: web.Request) -> str:
    order = request.query.get("order", "arrival")
    if order not in ORDERS:
        raise invalid_body(f"order: expected arrival or end, got {order!r}")
    return order


def arrival_order(records: Iterable[RequestRecord]) -> list[RequestRecord]:
    """As the requests arrived: the journal keeps them as they ended."""
    return sorted(records, key=operator.attrgetter("seq"))


def _summary(request: web.Request) -> Callable[[RequestRecord], dict[str, Any]]:
    namespaces = request.app[NAMESPACES]
    known = known_secrets(state_of(request), namespaces)
    return functools.partial(entry, origin=namespaces.started, known=known)


def _in_full(request: web.Request) -> Callable[[RequestRecord], dict[str, Any]]:
    namespaces = request.app[NAMESPACES]
    known = known_secrets(state_of(request), namespaces)
    return functools.partial(
        in_full, origin=namespaces.started, base_url=base_url(request), known=known
    )


def route_query(request: web.Request) -> str | None:
    """`?route=`: a route's name (`evaluate`, `projects.create`), a resource's (`projects`:
    its routes), or `preflight`; none, or empty, is every route; a typo is a 400, not an empty
    list that passes a check."""
    route = request.query.get("route") or None
    if route is not None and route != PREFLIGHT and route.split(".")[0] not in SELECTORS:
        known = ", ".join((*SELECTORS, PREFLIGHT))
        raise invalid_body(f"route: no route {route!r} (the routes: {known}, or one of theirs)")
    return route


def is_route(name: str | None, wanted: str) -> bool:
    """`projects` also keeps `projects.create`, `projects.list`, ...: a resource's routes."""
    return name is not None and (name == wanted or name.startswith(wanted + "."))


@routes.post("/_test/flags", name="set_flags")
async def set_vendor_flags(request: web.Request) -> web.Response:
    state = state_of(request)
    body = await read_json_object(request)
    state.serve(fixtures_from_vendor_flags(body, state.served.fixtures))
    return json_response({"ok": True, "flags": sorted(state.served.fixtures.flags)})


@routes.get("/_test/fixtures", name="fixtures")
async def served_fixtures(request: web.Request) -> web.Response:
    """The flags this namespace serves, and how `--watch` fared with the fixture files."""
    namespaces = request.app[NAMESPACES]
    return json_response(
        {
            "flags": sorted(state_of(request).served.fixtures.flags),
            "watching": namespaces.config.watches_files,
            "reloads": namespaces.reloads,
            "reloadError": namespaces.reload_error,
        }
    )


@routes.post("/_test/fixtures", name="set_fixtures")
async def set_fixtures(request: web.Request) -> web.Response:
    """Replace the served fixtures (or `?merge=true`: overlay them), all or nothing: a bad
    document leaves the old ones served."""
    merge = query_flag(request, "merge")
    state = state_of(request)
    before = state.served

    def prepared(document: object) -> tuple[FixtureSet, Served]:
        """Parsed, and everything served derived from it, off the loop."""
        fixtures = parse_fixture_document(document, "body")
        return fixtures, Served.of(before.fixtures.overlaid_with(fixtures) if merge else fixtures)

    fixtures, served = await parsed_off_loop(request, prepared)
    _still_there(state)
    current = not merge or state.served is before  # a merge over a set since replaced: again
    try:
        state.serve(fixtures, merge=merge, prepared=served if current else None)
    except FixtureError as exc:
        raise invalid_fixtures(exc) from None
    return json_response({"ok": True, "flags": sorted(state.served.fixtures.flags)})


@routes.get("/_test/management", name="management_state")
async def management_state(request: web.Request) -> web.Response:
    """The management plane as it is now, every organisation (no keys or tokens)."""
    return json_response(state_of(request).management.snapshot())


@routes.post("/_test/management", name="seed_management")
async def seed_management(request: web.Request) -> web.Response:
    """Re-seed the management plane until reset, from a `management:` section's content or a
    document holding only that section (`?merge=true`: overlay it, per organisation); the
    runtime fixtures stay as they are."""
    merge = query_flag(request, "merge")
    seed, where = await parsed_off_loop(request, _management_section)
    state = state_of(request)
    _still_there(state)
    try:
        state.seed_management(seed, merge=merge, where=where)
    except FixtureError as exc:
        raise invalid_fixtures(exc) from None
    return json_response(state.management.snapshot())


def _management_section(document: object) -> tuple[ManagementSeed, Where]:
    """A `management:` section's content, or a document holding only that section."""
    where = Where("body")
    if isinstance(document, dict) and "management" in document:
        mapping(document, where, ("management",))  # flags belong in /_test/fixtures
        document, where = document["management"], where / "management"
    return parse_management(document, where), where


@routes.get("/_test/rate-limit", name="rate_limit")
async def rate_limit(request: web.Request) -> web.Response:
    return json_response(state_of(request).limiter.limits.to_json())


@routes.post("/_test/rate-limit", name="set_rate_limit")
async def set_rate_limit(request: web.Request) -> web.Response:
    """Change the per-key rate limits until reset (`{"perSecond": N, "perKey": {key: N}}`;
    `{}` lifts them); every key's window starts afresh."""
    try:
        limits = parse_limits(await read_json_object(request), Where("body"))
    except FixtureError as exc:
        raise ApiError(400, "INVALID_BODY", str(exc).removeprefix("body: ")) from None
    state_of(request).set_limits(limits)
    return json_response(limits.to_json())


@routes.post("/_test/fault", name="arm_fault")
async def arm_fault(request: web.Request) -> web.Response:
    """Answers the fault as armed (null after `{"mode": "none"}`, which clears)."""
    state = state_of(request)
    armed = state.faults.arm(await read_json_object(request))
    state.changed()
    return json_response({"ok": True, "fault": armed.to_json() if armed else None})


@routes.get("/_test/fault", name="armed_faults")
async def armed_faults(request: web.Request) -> web.Response:
    return json_response({"armed": state_of(request).faults.to_json()})


@routes.delete("/_test/fault", name="clear_faults")
async def clear_faults(request: web.Request) -> web.Response:
    state = state_of(request)
    state.faults.clear()
    state.changed()
    return json_response({"ok": True, "armed": []})


@routes.delete("/_test/fault/{id}", name="disarm_fault")
async def disarm_fault(request: web.Request) -> web.Response:
    """Disarm one fault by the `id` its arming answered with."""
    raw = request.match_info["id"]
    state = state_of(request)
    if not is_count(raw) or not state.faults.disarm(int(raw)):
        raise ApiError(404, "NOT_FOUND", f"id: no armed fault {raw!r} (it may have run out)")
    state.changed()
    return json_response({"ok": True, "armed": state.faults.to_json()})


T = TypeVar("T")


def _still_there(state: StubState) -> None:
    """A namespace deleted while its document was parsed takes nothing more."""
    if state.gone is not None:
        raise ApiError(410, "NAMESPACE_GONE", f"{state.gone} while this request was parsed")


async def parsed_off_loop(request: web.Request, parse: Callable[[object], T]) -> T:
    """The body as a fixture document (JSON, or YAML when sent with a YAML content type),
    read by `parse`, in a worker thread: a large YAML document is seconds of CPU, and every
    other namespace's requests go on meanwhile. A refused document is a 400 (or 413) that
    says where."""
    raw, sent_as = await read_body(request), request.content_type

    try:
        return await built_off_loop(lambda: parse(_fixture_document(raw, sent_as)))
    except FixtureError as exc:
        raise invalid_fixtures(exc) from None


def _fixture_document(raw: bytes, sent_as: str) -> object:
    if sent_as not in _YAML_TYPES:
        return json_object(raw, sent_as)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise invalid_body("body: not UTF-8 text") from None
    return parse_yaml(text, "body")


async def wait(request: web.Request, ready: Callable[[], bool]) -> None:
    wait_ms = query_int(request, "waitMs", maximum=MAX_WAIT_MS)
    if wait_ms:
        state = state_of(request)
        await state.recorded.wait_until(ready, wait_ms / 1000)
        if state.gone is not None:  # what it recorded went with it: say so, not "nothing"
            raise ApiError(410, "NAMESPACE_GONE", f"{state.gone} while this request waited")
