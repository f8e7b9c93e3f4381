"""`/_test/coverage`: what the namespace's requests (or the whole run's) met, route by
outcome, and held against the profiles of what a kind of client is expected to meet."""

from __future__ import annotations

from aiohttp import web

from stub.coverage import PROFILES, report
from stub.namespaces import NAMESPACES
from stub.state import state_of
from stub.wire import invalid_body, json_response

routes = web.RouteTableDef()

SCOPES = ("namespace", "run")


@routes.get("/_test/coverage", name="coverage")
async def coverage(request: web.Request) -> web.Response:
    """`?scope=run` for the whole run (every namespace, deleted ones too); `?profile=runtime`
    for one profile (default: every profile). The run's fixture flags are the start-up
    fixtures' and each namespace's own."""
    scope = request.query.get("scope", "namespace")
    if scope not in SCOPES:
        raise invalid_body(f"scope: expected namespace or run, got {scope!r}")
    wanted = request.query.get("profile")
    if wanted is not None and wanted not in PROFILES:
        raise invalid_body(f"profile: no profile {wanted!r} (the profiles: {', '.join(PROFILES)})")
    profiles = [PROFILES[wanted]] if wanted else list(PROFILES.values())
    if scope == "run":
        namespaces = request.app[NAMESPACES]
        return json_response(
            report(scope, namespaces.run_coverage(), profiles, namespaces.fixture_flags())
        )
    state = state_of(request)
    return json_response(report(scope, state.coverage, profiles, state.served.fixtures.flags))


@routes.delete("/_test/coverage", name="clear_coverage")
async def clear_coverage(request: web.Request) -> web.Response:
    """Start the namespace's count afresh (a `reset` keeps it: a test's reset is not the
    run's); the run's count is kept. An inspector page watching the namespace redraws."""
    state = state_of(request)
    state.coverage.retire()
    state.changed()
    return json_response({"ok": True})
