"""create_app(config): the one place where fixtures, state, routes and their wrappers are wired."""

from __future__ import annotations

from collections import defaultdict

from aiohttp import web
from aiohttp.typedefs import Handler

from stub.config import StubConfig
from stub.control import routes as control
from stub.fixtures import FixtureSet, default_fixture_dir, load_fixture_paths
from stub.runtime import routes as runtime
from stub.serving import client_route, control_route, expect_continue, guarded, unmatched
from stub.state import STATE, StubState
from stub.vendor import routes as vendor


def create_app(config: StubConfig, fixtures: FixtureSet | None = None) -> web.Application:
    """A ready application; `fixtures` defaults to loading `config.fixture_paths`."""
    if fixtures is None:
        fixtures = load_fixtures(config)
    state = StubState(config, fixtures)
    app = web.Application(client_max_size=config.max_body_bytes)
    app[STATE] = state
    methods: dict[str, set[str]] = defaultdict(set)
    for table in (runtime.routes, vendor.routes):
        for route in _defs(table):
            # clients also use a trailing slash: served in place, never redirected
            for path in (route.path, route.path + "/"):
                wrapped = client_route(state, route.kwargs["name"], route.handler)
                _add(app, methods, route.method, path, wrapped)
    for route in _defs(control.routes):
        wrapped = control_route(route.handler)
        if config.control_token is not None and route.path.startswith("/_test/"):
            wrapped = control_route(guarded(config.control_token, route.handler))
        _add(app, methods, route.method, route.path, wrapped)
    _add_fallback(app, state, methods, config.control_token)
    return app


def load_fixtures(config: StubConfig) -> FixtureSet:
    return load_fixture_paths(config.fixture_paths or (default_fixture_dir(),))


def _defs(table: web.RouteTableDef) -> list[web.RouteDef]:
    return [route for route in table if isinstance(route, web.RouteDef)]


def _add(
    app: web.Application, methods: dict[str, set[str]], method: str, path: str, handler: Handler
) -> None:
    app.router.add_route(method, path, handler, expect_handler=expect_continue)
    methods[_template(path)].add(method)


def _template(path: str) -> str:
    """`/_test/fault/{id}` and `/_test/fault/7` share their allowed methods."""
    return path.rsplit("/", 1)[0] + "/{id}" if path.startswith("/_test/fault/") else path


def _add_fallback(
    app: web.Application, state: StubState, methods: dict[str, set[str]], token: str | None
) -> None:
    """Unknown paths are recorded (a misspelt route shows up in /_test/requests); unknown
    control paths are not, and stay behind the control token."""
    not_claimed = unmatched(lambda path: methods.get(_template(path), ()))
    recorded = client_route(state, None, not_claimed)
    control_side = control_route(guarded(token, not_claimed) if token else not_claimed)

    async def fallback(request: web.Request) -> web.StreamResponse:
        is_control = request.path.startswith("/_test/") or request.path == "/health"
        side = control_side if is_control else recorded
        return await side(request)

    # [\s\S], not `.`: a path may hold a newline (%0A) and must still get a JSON answer
    app.router.add_route("*", r"/{path:[\s\S]*}", fallback, expect_handler=expect_continue)
