"""The legacy vendor routes, in every spelling the real PostHog server SDKs use."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from stub.serving import admit
from stub.state import state_of
from stub.wire import (
    encoded_response,
    invalid_body,
    json_response,
    json_type,
    object_list,
    optional_strings,
    presented_key,
    read_json_object,
    request_id,
)

routes = web.RouteTableDef()

_BODY_KEY_HINT = "send the project key as body 'api_key' or 'token'"
_SECRET_KEY_HINT = "send the secret key as 'Authorization: Bearer <key>'"
_TOKEN_HINT = "send the project key as the 'token' query parameter"


@routes.post("/flags", name="flags")
async def remote_flags(request: web.Request) -> web.Response:
    """Every `v` gets the v2 body: a `value` member would make posthog 7.91 read v4 records."""
    body = await read_json_object(request)
    admit(request, _project_key(body), "vendor", _BODY_KEY_HINT)
    keys = optional_strings(body, "flag_keys_to_evaluate")
    distinct_id = body.get("distinct_id")
    if not isinstance(distinct_id, str | int | float) or isinstance(distinct_id, bool):
        distinct_id = ""
    person_properties = body.get("person_properties")
    if person_properties is not None and not isinstance(person_properties, dict):
        raise invalid_body(
            f"person_properties: expected an object, got {json_type(person_properties)}"
        )
    answer = state_of(request).served.vendor.flags_answer(
        keys, str(distinct_id), person_properties or {}, request_id(request)
    )
    return encoded_response(answer)


@routes.get("/flags/definitions", name="definitions")
async def flag_definitions(request: web.Request) -> web.Response:
    return _definitions(request)


@routes.get("/api/feature_flag/local_evaluation", name="definitions")
async def local_evaluation(request: web.Request) -> web.Response:
    """The older spelling of the definitions poll (posthog-python 6.x, the service spec)."""
    return _definitions(request)


@routes.post("/batch", name="batch")
async def batch(request: web.Request) -> web.Response:
    body = await read_json_object(request)
    admit(request, _project_key(body), "vendor", _BODY_KEY_HINT)
    items = object_list(body, "batch", "events")  # all checked before any is stored
    state_of(request).events.extend(items)
    return json_response({"status": 1})


def _definitions(request: web.Request) -> web.Response:
    """Bearer secret key required; the project key travels as `?token=`; ETag and 304."""
    state = state_of(request)
    admit(request, presented_key(request), "vendor", _SECRET_KEY_HINT, charge=False)
    admit(request, request.query.get("token", "").strip(), "vendor", _TOKEN_HINT)
    vendor = state.served.vendor
    if request.headers.get("If-None-Match") == vendor.etag:
        return web.Response(status=304, headers={"ETag": vendor.etag})
    return encoded_response(vendor.definitions, headers={"ETag": vendor.etag})


def _project_key(body: dict[str, Any]) -> str:
    """posthog-python sends `api_key`, posthog-node `token`: either will do."""
    for name in ("api_key", "token"):
        key = body.get(name)
        if isinstance(key, str) and key.strip():
            return key.strip()
    return ""
