"""The test-control plane: health, reset, recorded traffic, fixtures and faults."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from stub.fixtures import FixtureError, parse_fixture_document, parse_yaml
from stub.http import ApiError, invalid_body, json_response, read_body, read_json_object
from stub.state import STATE
from stub.vendor import fixtures_from_vendor_flags

routes = web.RouteTableDef()

_YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml")


@routes.get("/health", name="health")
async def health(request: web.Request) -> web.Response:
    return json_response({"ok": True})


@routes.post("/_test/reset", name="reset")
async def reset(request: web.Request) -> web.Response:
    request.app[STATE].reset()
    return json_response({"ok": True})


@routes.get("/_test/events", name="events")
async def events(request: web.Request) -> web.Response:
    state = request.app[STATE]
    logs = {"events": state.events, "svcEvents": state.svc_events, "targets": state.targets}
    body: dict[str, Any] = {name: log.snapshot() for name, log in logs.items()}
    body["dropped"] = {name: log.dropped for name, log in logs.items()}
    return json_response(body)


@routes.get("/_test/requests", name="requests")
async def requests(request: web.Request) -> web.Response:
    log = request.app[STATE].requests
    return json_response({"requests": log.snapshot(), "dropped": log.dropped})


@routes.post("/_test/flags", name="set_flags")
async def set_vendor_flags(request: web.Request) -> web.Response:
    state = request.app[STATE]
    body = await read_json_object(request)
    state.serve(fixtures_from_vendor_flags(body, state.served.fixtures))
    return json_response({"ok": True, "flags": sorted(state.served.fixtures.flags)})


@routes.post("/_test/fixtures", name="set_fixtures")
async def set_fixtures(request: web.Request) -> web.Response:
    """Replace the served fixtures, all or nothing: a bad document leaves the old ones served."""
    try:
        if request.content_type in _YAML_TYPES:
            document = parse_yaml(await _text(request), "body")
        else:
            document = await read_json_object(request)
        fixtures = parse_fixture_document(document, "body")
    except FixtureError as exc:
        raise ApiError(400, "INVALID_FIXTURES", str(exc)) from None
    request.app[STATE].serve(fixtures)
    return json_response({"ok": True, "flags": sorted(fixtures.flags)})


@routes.post("/_test/fault", name="arm_fault")
async def arm_fault(request: web.Request) -> web.Response:
    """Answers the fault as armed (null after `{"mode": "none"}`, which clears)."""
    armed = request.app[STATE].faults.arm(await read_json_object(request))
    return json_response({"ok": True, "fault": armed.to_json() if armed else None})


@routes.get("/_test/fault", name="armed_faults")
async def armed_faults(request: web.Request) -> web.Response:
    return json_response({"armed": request.app[STATE].faults.to_json()})


@routes.delete("/_test/fault", name="clear_faults")
async def clear_faults(request: web.Request) -> web.Response:
    request.app[STATE].faults.clear()
    return json_response({"ok": True, "armed": []})


async def _text(request: web.Request) -> str:
    try:
        return (await read_body(request)).decode("utf-8")
    except UnicodeDecodeError:
        raise invalid_body("body: not UTF-8 text") from None
