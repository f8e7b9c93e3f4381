"""create_app(config): the one place where fixtures, state, planes and their wrappers are wired."""

from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING

from aiohttp import web
from aiohttp.typedefs import Handler

from stub.config import StubConfig
from stub.control import checks, coverage_routes, namespace_routes
from stub.control import routes as control
from stub.control.access import ControlAccess
from stub.cors import ORIGIN, REQUEST_METHOD, allow_any_origin, is_preflight, preflight_answer
from stub.fixtures import DEFAULT_SET, FixtureSet, load_fixture_paths
from stub.http.admission import admitting
from stub.http.connection import install_prefix_aware_factory
from stub.http.lane import ANSWERED_DIRECTLY
from stub.http.paths import Paths, Plane, by_path, route_defs
from stub.http.pipeline import (
    client_route,
    control_route,
    expect_continue,
    guarded,
    in_namespace,
    preflight_route,
    unmatched,
)
from stub.http.route import RouteDeclaration, declaration_of
from stub.inspector import routes as inspector
from stub.inspector.routes import PUBLIC
from stub.namespaces import (
    NAME_RULE,
    NAMESPACES,
    PREFIX,
    PREFIXED,
    Namespaces,
    is_name,
)
from stub.routes import management, posthog, runtime
from stub.watch import watching
from stub.wire import ApiError, request_value

if TYPE_CHECKING:
    from stub.upstream.proxy import Forwarding

_MANAGEMENT = Plane(
    management.routes,
    "management",
    error_body=management.error_body,
    trailing_slash=False,
    rate_limited=False,
    cors=False,
)
CLIENT_PLANES = (Plane(runtime.routes, "runtime"), Plane(posthog.routes, "vendor"), _MANAGEMENT)
_CONTROL = Plane(web.RouteTableDef(), cors=False)
"""The test-control plane (and /health): its own rules for pages (control/access.py)."""


def create_app(config: StubConfig, fixtures: FixtureSet | None = None) -> web.Application:
    """A ready application; `fixtures` defaults to loading `config.fixture_paths`."""
    if fixtures is None:
        fixtures = load_fixtures(config)
    namespaces = Namespaces(config, fixtures)
    app = web.Application(client_max_size=config.max_body_bytes)
    app[NAMESPACES] = namespaces
    install_prefix_aware_factory(app)
    forward = _forwarding(app, config)
    answered_directly = app[ANSWERED_DIRECTLY] = {}  # in proxy mode, the service answers
    paths = Paths()
    access = ControlAccess(config.allow_origins, config.allow_hosts, paths.allowed)
    for plane in CLIENT_PLANES:
        for path, routes in by_path(plane.routes).items():
            handlers = {
                route.method: _client_route(namespaces, route, plane, forward) for route in routes
            }
            # clients also use a trailing slash: served in place, never redirected
            spellings = (path, path + "/") if plane.trailing_slash else (path,)
            for spelling in spellings:
                for method, handler in handlers.items():
                    _add(app, paths, method, spelling, handler, plane)
            if forward is None:
                answered_directly.update(_answered_directly(routes, spellings))
    tables = (control.routes, checks.routes, coverage_routes.routes, namespace_routes.routes)
    for table in (*tables, inspector.routes):
        for route in route_defs(table):
            handler = route.handler
            name = route.kwargs["name"]
            if table is not namespace_routes.routes and name not in _NO_NAMESPACE:
                creates = table is control.routes and name not in control.WATCHING
                handler = in_namespace(namespaces, handler, creates=creates)
            token = config.control_token
            control_plane = route.path.startswith("/_test/")
            if control_plane and token is not None and name not in PUBLIC:
                handler = guarded(token, handler)
            handler = control_route(handler)
            if control_plane:  # before anything else, the token included
                handler = access.admitting(handler, page=name == "ui")
            _add(app, paths, route.method, route.path, handler, _CONTROL)
    if config.watches_files:
        app.cleanup_ctx.append(
            watching(config.fixture_paths, namespaces.reload, namespaces.reload_failed)
        )
    paths.claim(management.CONSOLE_PREFIX, _MANAGEMENT)
    _add_bad_prefix(app, paths)
    _add_fallback(app, namespaces, paths, config.control_token, forward, access)
    return app


_NO_NAMESPACE = control.NO_NAMESPACE | PUBLIC
"""Control routes that act on no namespace (and so create none)."""


def _forwarding(app: web.Application, config: StubConfig) -> Forwarding | None:
    """In proxy mode, the forwarder every client route answers with, and its session."""
    if config.upstream is None:
        return None
    from stub.upstream.proxy import forwarding, upstream_session  # proxy mode only

    app.cleanup_ctx.append(upstream_session(config.upstream))
    return forwarding(config.upstream, config.control_token, config.max_upstream_in_flight_bytes)


def load_fixtures(config: StubConfig) -> FixtureSet:
    return load_fixture_paths(config.fixture_paths or (DEFAULT_SET,))


def selector_of(route_name: str) -> str:
    """`projects.create` is armed as `projects`; `evaluate` as itself."""
    return route_name.partition(".")[0]


def _client_route(
    namespaces: Namespaces, route: web.RouteDef, plane: Plane, forward: Forwarding | None
) -> Handler:
    name = route.kwargs["name"]
    declared = declaration_of(route)
    if forward is not None:
        answer = forward(declared, plane.rate_limited)
    elif plane.admits is not None:
        answer = admitting(route.handler, declared, plane.admits)
    else:
        answer = route.handler
    return client_route(
        namespaces,
        answer,
        name=name,
        selector=selector_of(name),
        error_body=plane.error_body,
        forwarded=forward is not None,
        cors=plane.cors,
    )


def _answered_directly(
    routes: list[web.RouteDef], spellings: tuple[str, ...]
) -> dict[str, RouteDeclaration]:
    """Each spelling of a path whose POST route declares a direct answer (the lane answers
    nothing else)."""
    for route in routes:
        declared = declaration_of(route)
        if route.method == "POST" and declared.direct is not None:
            return dict.fromkeys(spellings, declared)
    return {}


def _add(
    app: web.Application,
    paths: Paths,
    method: str,
    path: str,
    handler: Handler,
    plane: Plane,
) -> None:
    app.router.add_route(method, path, handler, expect_handler=expect_continue)
    paths.add(method, path, plane)


def _add_bad_prefix(app: web.Application, paths: Paths) -> None:
    """What is still under `/ns/` once the request factory had its go has a bad name (or
    a second prefix): a 400 that says so, in the envelope of the plane the rest belongs to."""

    async def bad_prefix(request: web.Request) -> web.StreamResponse:
        name, rest = request.match_info["name"], request.match_info["rest"] or "/"
        if request_value(request, PREFIXED) is not None:
            message = f"path: a namespace prefix is given twice ({PREFIX}{name}{rest})"
        elif is_name(urllib.parse.unquote(name)):  # the request factory only reads it as sent
            message = f"path: write the namespace prefix as {PREFIX}{name}/, not percent-encoded"
        else:
            message = f"path: {urllib.parse.unquote(name)!r} is not a namespace name ({NAME_RULE})"
        plane = paths.plane(rest)
        if plane.cors and is_preflight(request):  # so the page can read the 400 that follows
            return preflight_answer(request, [request.headers[REQUEST_METHOD]])
        refused = ApiError(400, "INVALID_NAMESPACE", message).to_response(plane.error_body)
        if plane.cors and ORIGIN in request.headers:
            allow_any_origin(refused.headers)
        return refused

    pattern = PREFIX + r"{name:[^/]*}{rest:(/[\s\S]*)?}"
    app.router.add_route("*", pattern, bad_prefix, expect_handler=expect_continue)


def _add_fallback(
    app: web.Application,
    namespaces: Namespaces,
    paths: Paths,
    token: str | None,
    forward: Forwarding | None,
    access: ControlAccess,
) -> None:
    """Unknown paths are recorded (a misspelt route shows up in /_test/requests) and answered in
    their plane's envelope (in proxy mode, by the upstream); unknown control paths are not
    recorded, and stay behind the origin checks and the token. No route takes OPTIONS, so
    every browser's preflight comes here: a public plane's is answered (and recorded, never
    faulted, charged or forwarded), a control path's only for a named origin."""
    not_claimed = unmatched(paths.allowed, paths.closest)
    unknown = not_claimed if forward is None else forward(None, False)
    recorded = {
        (plane.error_body, plane.cors): client_route(
            namespaces, unknown, name=None, error_body=plane.error_body, cors=plane.cors
        )
        for plane in (*CLIENT_PLANES, _CONTROL)
    }
    control_side = control_route(guarded(token, not_claimed) if token else not_claimed)
    control_admitted = access.admitting(control_side)

    def allowed_methods(request: web.Request) -> web.Response:
        # an unknown path allows what is asked: the request then gets a 404 the page can read
        methods = paths.allowed(request.path) or [request.headers[REQUEST_METHOD]]
        return preflight_answer(request, methods)

    preflight = preflight_route(namespaces, allowed_methods)

    async def fallback(request: web.Request) -> web.StreamResponse:
        if request.path.startswith("/_test/"):
            return await control_admitted(request)
        if request.path == "/health":
            return await control_side(request)
        plane = paths.plane(request.path)
        if plane.cors and is_preflight(request):
            return await preflight(request)
        return await recorded[plane.error_body, plane.cors](request)

    # [\s\S], not `.`: a path may hold a newline (%0A) and must still get a JSON answer
    app.router.add_route("*", r"/{path:[\s\S]*}", fallback, expect_handler=expect_continue)
