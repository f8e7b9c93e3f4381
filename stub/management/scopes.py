"""What each organisation scope may call on the management plane, by route name."""

from __future__ import annotations

CI_READ_ROUTES = frozenset(
    {"whoami", "projects.list", "control-points.list", "control-points.graph"}
)
"""What `org:ci-read` may call: what a repository sync needs, nothing that writes."""

_ACTIONS = {
    "projects.create": "create projects",
    "projects.get": "read a project",
    "projects.update": "update projects",
    "projects.delete": "delete projects",
    "environments.list": "list environments",
    "environments.create": "create environments",
    "environments.get": "read an environment",
    "environments.update": "update environments",
    "environments.delete": "delete environments",
}


def refusal(scope: str, route: str) -> str | None:
    """Why `scope` may not call the route named `route`; None: it may."""
    if scope != "org:ci-read" or route in CI_READ_ROUTES:
        return None
    return (
        f"org:ci-read may not {_ACTIONS[route]}: it may call GET /v1/whoami, "
        "GET /v1/projects and the control-point reads"
    )
