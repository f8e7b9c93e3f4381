"""The runtime plane, `/v1/...`, in exactly the shapes the published clients send and parse:
answers to requests the pipeline admitted by the key in their headers."""

from __future__ import annotations

import functools
from typing import Any

import orjson
from aiohttp import web

from stub.http.route import Direct, Records, RouteDeclaration
from stub.runtime.evaluation import Decided, DecisionTable
from stub.state import StubState, state_of
from stub.wire import (
    REQUEST_SEQ,
    ApiError,
    encoded_response,
    invalid_body,
    json_object,
    json_response,
    json_type,
    optional_object,
    optional_strings,
    read_body,
    request_id_of,
)


def _evaluated_now(state: StubState, raw: bytes) -> Direct:
    decisions = evaluated(state, raw, "")
    return functools.partial(evaluate_answer, decisions), None


def _captured_now(state: StubState, raw: bytes) -> Direct:
    events = CAPTURE.checked(json_object(raw, ""))
    answer = capture_answer(events)
    return (lambda seq: answer), events


EVALUATE = RouteDeclaration("evaluate", direct=_evaluated_now)
CAPTURE = RouteDeclaration(
    "capture",
    records=Records(lambda state: state.svc_events, "events", "event objects"),
    direct=_captured_now,
)
REGISTER = RouteDeclaration("register", records=Records(lambda state: state.targets))
"""Every runtime route takes its key from the headers; capture keeps its events, register
its target (the body)."""

routes = web.RouteTableDef()


EVALUATE_PATH = "/v1/flags/evaluate"


@routes.post(EVALUATE_PATH, **EVALUATE.route)
async def evaluate(request: web.Request) -> web.Response:
    raw = await read_body(request)
    decisions = evaluated(state_of(request), raw, request.content_type)
    return encoded_response(evaluate_answer(decisions, request[REQUEST_SEQ]))


def evaluated(state: StubState, raw: bytes, sent_as: str) -> bytes:
    """The decisions an evaluate body (sent as Content-Type `sent_as`) gets: remembered, or
    checked (else a 400) and then remembered; the flags they answered count as read."""
    table = state.served.decisions
    decided = table.answered(raw)
    if decided is None:
        decided = _decisions(table, json_object(raw, sent_as))
        table.remember(raw, decided)
    decisions, read = decided
    if read is not state.coverage.last_read:  # the same question again: nothing new was read
        state.coverage.read(read)
    return decisions


def evaluate_answer(decisions: bytes, seq: int) -> bytes:
    """Evaluate's answer to the request numbered `seq`, its `decisions` encoded."""
    return b'{"decisions":%b,"requestId":"%b","quotaLimited":false}' % (
        decisions,
        request_id_of(seq).encode(),
    )


def _decisions(table: DecisionTable, body: dict[str, Any]) -> Decided:
    targeting_key = _targeting_key(body)
    flag_keys = optional_strings(body, "flagKeys") or []
    attributes = optional_object(body, "attributes")
    optional_object(body, "groups")
    optional_object(body, "groupProperties")
    return table.encode(flag_keys, targeting_key, attributes)


@routes.post("/v1/capture", **CAPTURE.route)
async def capture(request: web.Request) -> web.Response:
    body = json_object(await read_body(request), request.content_type)
    return encoded_response(capture_answer(CAPTURE.keep(state_of(request), body)))


def capture_answer(events: list[Any]) -> bytes:
    """Capture's answer once `events` were kept."""
    return orjson.dumps({"ok": True, "accepted": len(events)})


@routes.post("/v1/targets/register", **REGISTER.route)
async def register_target(request: web.Request) -> web.Response:
    body = json_object(await read_body(request), request.content_type)
    targeting_key = _targeting_key(body)
    for name in ("kind", "environment"):
        if body.get(name) is not None and not isinstance(body[name], str):
            raise invalid_body(f"{name}: expected a string, got {json_type(body[name])}")
    optional_object(body, "properties")
    REGISTER.keep(state_of(request), body)
    return json_response({"ok": True, "targetingKey": targeting_key})


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
