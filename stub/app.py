"""create_app(config): the one place where fixtures, state, middleware and routes are wired."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Middleware

from stub.config import StubConfig
from stub.fixtures import FixtureSet, default_fixture_dir, load_fixture_paths
from stub.middleware import (
    ROUTE_PLACES,
    Plane,
    RoutePlace,
    control_guard,
    inject_faults,
    json_errors,
    record_requests,
)
from stub.routes import control, runtime, vendor
from stub.state import STATE, StubState


def create_app(config: StubConfig, fixtures: FixtureSet | None = None) -> web.Application:
    """A ready application; `fixtures` defaults to loading `config.fixture_paths`."""
    if fixtures is None:
        fixtures = load_fixtures(config)
    middlewares: list[Middleware] = [record_requests, json_errors]
    if config.control_token is not None:
        middlewares.append(control_guard(config.control_token))
    middlewares.append(inject_faults)
    app = web.Application(middlewares=middlewares, client_max_size=config.max_body_bytes)
    app[STATE] = StubState(config, fixtures)
    app[ROUTE_PLACES] = {}
    _add_routes(app, runtime.routes, "runtime")
    _add_routes(app, vendor.routes, "vendor")
    _add_routes(app, control.routes, "control")
    return app


def load_fixtures(config: StubConfig) -> FixtureSet:
    return load_fixture_paths(config.fixture_paths or (default_fixture_dir(),))


def _add_routes(app: web.Application, table: web.RouteTableDef, plane: Plane) -> None:
    """Register a table; client routes also answer with a trailing slash, never a redirect.

    A route's `name` is the fault selector (two spellings may share one), not an aiohttp name.
    """
    for route in table:
        assert isinstance(route, web.RouteDef)
        paths = [route.path]
        if plane != "control" and not route.path.endswith("/"):
            paths.append(route.path + "/")
        for path in paths:
            app.router.add_route(route.method, path, route.handler)
            app[ROUTE_PLACES][path] = RoutePlace(plane, route.kwargs["name"])
