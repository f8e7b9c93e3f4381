"""The runtime plane, `/v1/...`, in exactly the shapes the published clients send and parse."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from stub.serving import admit
from stub.state import state_of
from stub.wire import (
    ApiError,
    encoded_response,
    invalid_body,
    json_response,
    json_type,
    object_list,
    optional_object,
    optional_strings,
    presented_key,
    read_json_object,
    request_id,
)

routes = web.RouteTableDef()


@routes.post("/v1/flags/evaluate", name="evaluate")
async def evaluate(request: web.Request) -> web.Response:
    body = await _authenticated_body(request)
    targeting_key = _targeting_key(body)
    flag_keys = optional_strings(body, "flagKeys") or []
    attributes = optional_object(body, "attributes")
    optional_object(body, "groups")
    optional_object(body, "groupProperties")
    decisions = state_of(request).served.decisions.encode(flag_keys, targeting_key, attributes)
    return encoded_response(
        b'{"decisions":%b,"requestId":"%b","quotaLimited":false}'
        % (decisions, request_id(request).encode())
    )


@routes.post("/v1/capture", name="capture")
async def capture(request: web.Request) -> web.Response:
    body = await _authenticated_body(request)
    events = object_list(body, "events", "event objects")  # all checked before any is stored
    state_of(request).svc_events.extend(events)
    return json_response({"ok": True, "accepted": len(events)})


@routes.post("/v1/targets/register", name="register")
async def register_target(request: web.Request) -> web.Response:
    body = await _authenticated_body(request)
    targeting_key = _targeting_key(body)
    for name in ("kind", "environment"):
        if body.get(name) is not None and not isinstance(body[name], str):
            raise invalid_body(f"{name}: expected a string, got {json_type(body[name])}")
    optional_object(body, "properties")
    state_of(request).targets.append(body)
    return json_response({"ok": True, "targetingKey": targeting_key})


async def _authenticated_body(request: web.Request) -> dict[str, Any]:
    admit(request, presented_key(request), "runtime")
    return await read_json_object(request)


def _targeting_key(body: dict[str, Any]) -> str:
    value = body.get("targetingKey")
    if not isinstance(value, str) or not value:
        got = '""' if value == "" else json_type(value)
        raise ApiError(
            400,
            "TARGETING_KEY_REQUIRED",
            f"targetingKey: expected a non-empty string, got {got}",
        )
    return value
