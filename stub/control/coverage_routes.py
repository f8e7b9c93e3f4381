"""`/_test/coverage`: what the namespace's requests (or the whole run's) met, route by
outcome, and held against the profiles of what a kind of client is expected to meet."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from stub.coverage import PROFILES, Coverage, held_against, matrix
from stub.namespaces import NAMESPACES
from stub.state import state_of
from stub.wire import invalid_body, json_response

routes = web.RouteTableDef()

SCOPES = ("namespace", "run")


@routes.get("/_test/coverage", name="coverage")
async def coverage(request: web.Request) -> web.Response:
    """`?scope=run` for the whole run (every namespace, deleted ones too); `?profile=runtime`
    for one profile (default: every profile)."""
    scope = request.query.get("scope", "namespace")
    if scope not in SCOPES:
        raise invalid_body(f"scope: expected namespace or run, got {scope!r}")
    wanted = request.query.get("profile")
    if wanted is not None and wanted not in PROFILES:
        raise invalid_body(f"profile: no profile {wanted!r} (the profiles: {', '.join(PROFILES)})")
    met = request.app[NAMESPACES].run_coverage() if scope == "run" else state_of(request).coverage
    return json_response(_report(scope, met, [wanted] if wanted else list(PROFILES)))


@routes.delete("/_test/coverage", name="clear_coverage")
async def clear_coverage(request: web.Request) -> web.Response:
    """Start the namespace's count afresh (a `reset` keeps it: a test's reset is not the
    run's); the run's count is kept."""
    state_of(request).coverage.retire()
    return json_response({"ok": True})


def _report(scope: str, met: Coverage, profiles: list[str]) -> dict[str, Any]:
    return {
        "scope": scope,
        "cells": matrix(met),
        "profiles": {name: held_against(met, PROFILES[name]) for name in profiles},
    }
