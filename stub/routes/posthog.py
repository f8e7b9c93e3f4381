"""The legacy vendor routes (PostHog's), in every spelling the real PostHog server SDKs use:
answers to requests the pipeline admitted by the keys each route declares."""

from __future__ import annotations

from aiohttp import web

from stub.http.admission import ADMITTED_BODY
from stub.http.route import BODY_KEY, SECRET_KEY, TOKEN_KEY, Records, RouteDeclaration
from stub.state import state_of
from stub.wire import (
    encoded_response,
    invalid_body,
    json_response,
    json_type,
    optional_strings,
    request_id,
)

FLAGS = RouteDeclaration("flags", key=BODY_KEY)
DEFINITIONS = RouteDeclaration("definitions", key=TOKEN_KEY, also=(SECRET_KEY,))
"""Charged to the project key in `?token=`; the secret key in the headers is checked first."""
BATCH = RouteDeclaration(
    "batch", key=BODY_KEY, records=Records(lambda state: state.events, "batch", "events")
)

routes = web.RouteTableDef()


@routes.post("/flags", **FLAGS.route)
async def remote_flags(request: web.Request) -> web.Response:
    """Every `v` gets the v2 body: a `value` member would make posthog 7.91 read v4 records."""
    body = request[ADMITTED_BODY]
    keys = optional_strings(body, "flag_keys_to_evaluate")
    distinct_id = body.get("distinct_id")
    if not isinstance(distinct_id, str | int | float) or isinstance(distinct_id, bool):
        distinct_id = ""
    person_properties = body.get("person_properties")
    if person_properties is not None and not isinstance(person_properties, dict):
        raise invalid_body(
            f"person_properties: expected an object, got {json_type(person_properties)}"
        )
    state = state_of(request)
    served = state.served
    answer = served.vendor.flags_answer(
        keys, str(distinct_id), person_properties or {}, request_id(request)
    )
    flags = served.fixtures.flags
    state.coverage.read(
        served.decisions.all_keys if keys is None else [k for k in keys if k in flags]
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
    BATCH.keep(state_of(request), request[ADMITTED_BODY])
    return json_response({"status": 1})


def _definitions(request: web.Request) -> web.Response:
    """The definitions, with their ETag; a 304 for the one the poller holds. Every flag counts
    as read: the client evaluates them itself, and which it reads the stub cannot know."""
    state = state_of(request)
    state.coverage.read(state.served.decisions.all_keys)
    vendor = state.served.vendor
    if request.headers.get("If-None-Match") == vendor.etag:
        return web.Response(status=304, headers={"ETag": vendor.etag})
    return encoded_response(vendor.definitions, headers={"ETag": vendor.etag})
