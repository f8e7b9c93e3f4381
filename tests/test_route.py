"""Each client route declares once where its key comes from and what it records
(`stub/http/route.py`): every runtime and vendor route does, and what its handler keeps
of a valid request is what the forwarder keeps of one the upstream accepted."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from stub import StubConfig
from stub.fixtures import DEFAULT_SET, load_fixture_paths
from stub.http.admission import key_in
from stub.http.route import (
    BODY_KEY,
    DECLARED,
    HEADER_KEY,
    TOKEN_KEY,
    RouteDeclaration,
    declaration_of,
)
from stub.namespaces import Namespaces
from stub.routes import posthog, runtime
from stub.state import StubState
from stub.wire import presented_key

DECLARED_ROUTES = [
    route
    for table in (runtime.routes, posthog.routes)
    for route in table
    if isinstance(route, web.RouteDef)
]
RECORDING = sorted(
    {declaration_of(route) for route in DECLARED_ROUTES if declaration_of(route).records},
    key=lambda declared: declared.name,
)
VALID_BODIES: dict[str, dict[str, Any]] = {
    "capture": {"events": [{"event": "exposure", "targetingKey": "u1"}]},
    "register": {"targetingKey": "u1", "kind": "user"},
    "batch": {"api_key": "phc_x", "batch": [{"event": "signed_up", "distinct_id": "u1"}]},
}


def fresh_state() -> StubState:
    return Namespaces(StubConfig(), load_fixture_paths((DEFAULT_SET,))).default


class TestEveryRouteDeclaresItself:
    @pytest.mark.parametrize("route", DECLARED_ROUTES, ids=lambda route: route.path)
    def test_each_runtime_and_vendor_route_carries_its_declaration(
        self, route: web.RouteDef
    ) -> None:
        declared = route.kwargs[DECLARED]
        assert isinstance(declared, RouteDeclaration)
        assert declared.name == route.kwargs["name"]

    def test_the_keys_come_from_where_the_service_reads_them(self) -> None:
        keys = {declaration_of(route).name: declaration_of(route).key for route in DECLARED_ROUTES}
        assert keys == {
            "evaluate": HEADER_KEY,
            "capture": HEADER_KEY,
            "register": HEADER_KEY,
            "flags": BODY_KEY,
            "batch": BODY_KEY,
            "definitions": TOKEN_KEY,
        }

    def test_every_recording_route_has_a_valid_body_here(self) -> None:
        assert {declared.name for declared in RECORDING} == set(VALID_BODIES)


class TestTheHeaderKey:
    @pytest.mark.parametrize(
        "headers",
        [
            {"Authorization": "Bearer project-api-key_a"},
            {"Authorization": "bearer   project-api-key_a "},
            {"Authorization": "Basic abc", "x-api-key": " project-api-key_a"},
            {"x-api-key": "project-api-key_a"},
            {},
        ],
    )
    def test_is_the_key_the_client_presented(self, headers: dict[str, str]) -> None:
        """Inlined for evaluate's sake: it must stay `presented_key`."""
        request = make_mocked_request("POST", "/v1/flags/evaluate", headers=headers)
        assert key_in(HEADER_KEY, request, None) == presented_key(request)


class TestTheBodyKey:
    @pytest.mark.parametrize(
        ("body", "key"),
        [
            ({"api_key": "phc_a", "token": "phc_b"}, "phc_a"),
            ({"api_key": "", "token": "phc_b"}, "phc_b"),
            ({"api_key": "  ", "token": " phc_b "}, "phc_b"),
            ({"api_key": 5, "token": "phc_b"}, "phc_b"),
            ({}, ""),
        ],
    )
    def test_a_blank_api_key_falls_back_to_the_token(self, body: dict[str, Any], key: str) -> None:
        request = make_mocked_request("POST", "/flags")
        assert key_in(BODY_KEY, request, body) == key


class TestServedAndForwardedAlike:
    @pytest.mark.parametrize("declared", RECORDING, ids=lambda declared: declared.name)
    def test_the_forwarder_keeps_what_the_handler_keeps(self, declared: RouteDeclaration) -> None:
        served, forwarded = fresh_state(), fresh_state()
        kept = declared.keep(served, VALID_BODIES[declared.name])
        declared.keep_accepted(forwarded, VALID_BODIES[declared.name])
        assert kept
        assert recorded(forwarded) == recorded(served)
        assert kept in recorded(served).values()

    def test_a_body_the_upstream_accepted_keeps_what_can_be_kept(self) -> None:
        state = fresh_state()
        runtime.CAPTURE.keep_accepted(state, {"events": [{"event": "a"}, "not an object"]})
        assert recorded(state)["svc_events"] == [{"event": "a"}]


def recorded(state: StubState) -> dict[str, list[dict[str, Any]]]:
    """Every list a route may record into."""
    return {
        "events": state.events.snapshot(),
        "svc_events": state.svc_events.snapshot(),
        "targets": state.targets.snapshot(),
    }
