"""The management plane's routes, as infrastructure tools call them: org-scoped by the bearer
token, scope-checked, strict about bodies, in the spec's exact shapes and error envelope."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web

from stub.http.admission import PRINCIPAL
from stub.management import fields
from stub.management.fields import FieldError
from stub.management.rows import PLACEHOLDER_ROW, Project
from stub.management.seed import Principal
from stub.management.store import Conflict, ManagementStore, NewEnvironment, NotFound
from stub.state import state_of
from stub.wire import ApiError, encoded_response, json_response, read_json_object

routes = web.RouteTableDef()

Handler = Callable[[web.Request, Principal], Awaitable[web.Response]]

CONSOLE_PREFIX = "/api"
"""The service's session-authenticated console routes (organisation members, ...) live under
`/api/`: outside the external contract, so not served, but a tool that calls one is a
management client and reads this plane's 404."""

_CODES = {"INVALID_BODY": "VALIDATION"}
"""The shared body reader's codes, in this plane's words."""


def error_body(code: str, message: str, extra: Mapping[str, str]) -> object:
    """The management envelope, for every error on this plane (faults' included)."""
    return {"error": {"code": _CODES.get(code, code), "message": message}}


def _route(method: str, path: str, name: str) -> Callable[[Handler], Handler]:
    """Registers a handler that is called with the principal the pipeline admitted the
    request as (admission.py: its token known, its scope allowed to call `name`); store and
    field errors become this plane's answers."""

    def register(handler: Handler) -> Handler:
        async def route(request: web.Request) -> web.Response:
            try:
                return await handler(request, request[PRINCIPAL])
            except FieldError as error:
                raise ApiError(400, "VALIDATION", error.message()) from None
            except NotFound as error:
                raise ApiError(404, "NOT_FOUND", str(error)) from None
            except Conflict as error:
                raise ApiError(409, "CONFLICT", str(error)) from None

        routes.route(method, path, name=name)(route)
        return handler

    return register


def _store(request: web.Request) -> ManagementStore:
    return state_of(request).management


async def _body(request: web.Request, allowed: tuple[str, ...], *, frozen: str = "") -> Any:
    """The JSON object sent, with only `allowed` fields; `frozen` names one that exists but
    may not be written."""
    body = await read_json_object(request)
    if frozen and frozen in body:
        raise FieldError((frozen,), "not writable after create")
    fields.check_known(body, allowed)
    return body


@_route("GET", "/v1/whoami", "whoami")
async def whoami(request: web.Request, session: Principal) -> web.Response:
    return json_response(
        {"userId": session.user_id, "orgId": session.org_id, "scope": session.scope}
    )


# Projects

_PROJECT_CREATE = ("name", "slug", "description")
_PROJECT_UPDATE = ("name", "description", "status")


@_route("GET", "/v1/projects", "projects.list")
async def list_projects(request: web.Request, session: Principal) -> web.Response:
    listed = _store(request).projects(session.org_id)
    return json_response({"projects": [project.list_item() for project in listed]})


@_route("POST", "/v1/projects", "projects.create")
async def create_project(request: web.Request, session: Principal) -> web.Response:
    body = await _body(request, _PROJECT_CREATE)
    name = fields.text(fields.required(body, "name"), "name")
    slug = fields.project_slug(fields.required(body, "slug"))
    description = fields.description(body.get("description"))
    project = _store(request).create_project(session.org_id, name, slug, description)
    return json_response({"project": project.row()}, status=201)


@_route("GET", "/v1/projects/{projectId}", "projects.get")
async def get_project(request: web.Request, session: Principal) -> web.Response:
    project_id = request.match_info["projectId"]
    answer = _store(request).answer(session.org_id, project_id, "get", _project_get)
    return encoded_response(answer)


def _project_get(project: Project) -> object:
    return {"project": project.row()}


@_route("PATCH", "/v1/projects/{projectId}", "projects.update")
async def update_project(request: web.Request, session: Principal) -> web.Response:
    store, project_id = _store(request), request.match_info["projectId"]
    store.project(session.org_id, project_id)  # a missing project is a 404 before any 400
    body = await _body(request, _PROJECT_UPDATE, frozen="slug")
    changes: dict[str, Any] = {}
    if "name" in body:
        changes["name"] = fields.text(body["name"], "name")
    if "description" in body:
        changes["description"] = fields.description(body["description"])
    if "status" in body:
        changes["status"] = fields.one_of(body["status"], "status", fields.PROJECT_STATUSES)
    project = store.update_project(session.org_id, project_id, changes)
    return json_response({"project": project.row()})


@_route("DELETE", "/v1/projects/{projectId}", "projects.delete")
async def delete_project(request: web.Request, session: Principal) -> web.Response:
    project_id = request.match_info["projectId"]
    _store(request).delete_project(session.org_id, project_id)
    return json_response({"deleted": True, "projectId": project_id})


# Environments

_ENVIRONMENT_CREATE = (
    "slug",
    "displayName",
    "isDefault",
    "branchRules",
    "tagRules",
    "webhookAliases",
)
_ENVIRONMENT_UPDATE = ("displayName", "isDefault", "branchRules", "tagRules", "webhookAliases")
_ENVIRONMENT_CHECKS: tuple[tuple[str, str, Callable[[object, str], object]], ...] = (
    ("displayName", "display_name", fields.text),
    ("isDefault", "is_default", fields.boolean),
    ("branchRules", "branch_rules", fields.ref_rules),
    ("tagRules", "tag_rules", fields.ref_rules),
    ("webhookAliases", "webhook_aliases", fields.strings),
)
"""The optional fields create and update share: wire name, attribute, check."""


@_route("GET", "/v1/projects/{projectId}/environments", "environments.list")
async def list_environments(request: web.Request, session: Principal) -> web.Response:
    project_id = request.match_info["projectId"]
    answer = _store(request).answer(session.org_id, project_id, "environments", _environment_list)
    return encoded_response(answer)


def _environment_list(project: Project) -> object:
    rows = [environment.list_row() for environment in project.listed_environments()]
    return {"defaultEnvironment": project.default_slug(), "environments": rows or [PLACEHOLDER_ROW]}


@_route("POST", "/v1/projects/{projectId}/environments", "environments.create")
async def create_environment(request: web.Request, session: Principal) -> web.Response:
    store, project_id = _store(request), request.match_info["projectId"]
    store.project(session.org_id, project_id)
    body = await _body(request, _ENVIRONMENT_CREATE)
    checked = _environment_fields(body)
    new = NewEnvironment(
        slug=fields.environment_slug(fields.required(body, "slug")),
        display_name=fields.text(fields.required(body, "displayName"), "displayName"),
        is_default=checked.get("is_default"),
        branch_rules=checked.get("branch_rules", ()),
        tag_rules=checked.get("tag_rules", ()),
        webhook_aliases=checked.get("webhook_aliases", ()),
    )
    environment = store.create_environment(session.org_id, project_id, new)
    return json_response({"environment": environment.row()}, status=201)


@_route("GET", "/v1/projects/{projectId}/environments/{envId}", "environments.get")
async def get_environment(request: web.Request, session: Principal) -> web.Response:
    environment = _store(request).environment(session.org_id, *_environment_path(request))
    return json_response({"environment": environment.row()})


@_route("PATCH", "/v1/projects/{projectId}/environments/{envId}", "environments.update")
async def update_environment(request: web.Request, session: Principal) -> web.Response:
    store, (project_id, env_id) = _store(request), _environment_path(request)
    store.environment(session.org_id, project_id, env_id)
    body = await _body(request, _ENVIRONMENT_UPDATE, frozen="slug")
    changes = _environment_fields(body)
    environment = store.update_environment(session.org_id, project_id, env_id, changes)
    return json_response({"environment": environment.row()})


@_route("DELETE", "/v1/projects/{projectId}/environments/{envId}", "environments.delete")
async def delete_environment(request: web.Request, session: Principal) -> web.Response:
    project_id, env_id = _environment_path(request)
    _store(request).delete_environment(session.org_id, project_id, env_id)
    return json_response({"deleted": True, "envId": env_id})


def _environment_path(request: web.Request) -> tuple[str, str]:
    return request.match_info["projectId"], request.match_info["envId"]


def _environment_fields(body: Mapping[str, Any]) -> dict[str, Any]:
    """The shared optional fields that were sent, checked, by attribute name."""
    return {
        attribute: check(body[name], name)
        for name, attribute, check in _ENVIRONMENT_CHECKS
        if name in body  # an explicit null is checked (and refused), as on projects
    }


# Control points: read-only; another organisation's project reads as an empty list


@_route("GET", "/v1/projects/{projectId}/control-points", "control-points.list")
async def list_control_points(request: web.Request, session: Principal) -> web.Response:
    project_id = request.match_info["projectId"]
    points = _store(request).control_points(session.org_id, project_id)
    rows = [point.row(project_id) for point in points]
    return json_response({"success": True, "data": {"controlPoints": rows}})


@_route("GET", "/v1/projects/{projectId}/control-points/graph", "control-points.graph")
async def control_point_graph(request: web.Request, session: Principal) -> web.Response:
    store, project_id = _store(request), request.match_info["projectId"]
    nodes = [point.row(project_id) for point in store.control_points(session.org_id, project_id)]
    edges = [edge.row() for edge in store.edges(session.org_id, project_id)]
    return json_response({"success": True, "data": {"nodes": nodes, "edges": edges}})
