"""The legacy vendor routes, in every spelling the real PostHog server SDKs use."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from stub.http.pipeline import admit
from stub.http.route import BODY_KEY, TOKEN_KEY, Records, RouteDeclaration
from stub.state import state_of
from stub.wire import (
    encoded_response,
    invalid_body,
    json_response,
    json_type,
    optional_strings,
    presented_key,
    read_json_object,
    request_id,
)

FLAGS = RouteDeclaration("flags", key=BODY_KEY)
DEFINITIONS = RouteDeclaration("definitions", key=TOKEN_KEY)
"""Charged to the project key in `?token=`; the secret key in the headers is checked too."""
BATCH = RouteDeclaration(
    "batch", key=BODY_KEY, records=Records(lambda state: state.events, "batch", "events")
)

routes = web.RouteTableDef()

_SECRET_KEY_HINT = "send the secret key as 'Authorization: Bearer <key>'"


@routes.post("/flags", **FLAGS.route)
async def remote_flags(request: web.Request) -> web.Response:
    """Every `v` gets the v2 body: a `value` member would make posthog 7.91 read v4 records."""
    body = await read_json_object(request)
    _admit(request, FLAGS, body)
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


@routes.get("/flags/definitions", **DEFINITIONS.route)
async def flag_definitions(request: web.Request) -> web.Response:
    return _definitions(request)


@routes.get("/api/feature_flag/local_evaluation", **DEFINITIONS.route)
async def local_evaluation(request: web.Request) -> web.Response:
    """The older spelling of the definitions poll (posthog-python 6.x, the service spec)."""
    return _definitions(request)


@routes.post("/batch", **BATCH.route)
async def batch(request: web.Request) -> web.Response:
    body = await read_json_object(request)
    _admit(request, BATCH, body)
    BATCH.keep(state_of(request), body)
    return json_response({"status": 1})


def _definitions(request: web.Request) -> web.Response:
    """Bearer secret key required; the project key travels as `?token=`; ETag and 304."""
    state = state_of(request)
    admit(request, presented_key(request), "vendor", _SECRET_KEY_HINT, charge=False)
    _admit(request, DEFINITIONS, None)
    vendor = state.served.vendor
    if request.headers.get("If-None-Match") == vendor.etag:
        return web.Response(status=304, headers={"ETag": vendor.etag})
    return encoded_response(vendor.definitions, headers={"ETag": vendor.etag})


def _admit(request: web.Request, route: RouteDeclaration, body: dict[str, Any] | None) -> None:
    """The key the route declares, checked and charged."""
    admit(request, route.key.read(request, body), "vendor", route.key.hint)
