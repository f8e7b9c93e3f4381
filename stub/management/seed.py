"""The `management:` fixture section: organisations, their keys and CLI sessions, and the
projects, environments, control points and edges they start with; frozen once validated."""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Literal, NamedTuple, TypeVar, get_args

from stub.keys import Family, family_of
from stub.management import fields
from stub.management.fields import FieldError, RefRule
from stub.management.ids import crockford
from stub.management.rows import (
    ControlPoint,
    ControlPointKind,
    Edge,
    EdgeKind,
    Environment,
    Project,
)
from stub.validation import (
    FixtureError,
    Where,
    check_json_value,
    describe,
    mapping,
    or_empty,
)

T = TypeVar("T")
Scope = Literal["org:management", "org:ci-read", "cli"]
KEY_SCOPES = ("org:management", "org:ci-read")

DEFAULT_ORG = "org_default"
DEFAULT_KEY = "svc_org_default"

_ORG_KEYS = ("keys", "sessions", "projects")
_KEY_FIELDS = ("key", "scope", "userId")
_SESSION_FIELDS = ("token", "userId")
PROJECT_FIELDS = (
    "projectId",
    "name",
    "slug",
    "description",
    "status",
    "createdAt",
    "updatedAt",
    "environments",
    "controlPoints",
    "edges",
)
ENVIRONMENT_FIELDS = (
    "envId",
    "slug",
    "displayName",
    "isDefault",
    "promotionRank",
    "branchRules",
    "tagRules",
    "webhookAliases",
    "isFavourite",
    "firstSeenAt",
    "lastSeenAt",
    "lastDeployedSha",
    "readiness",
    "createdAt",
    "updatedAt",
)
CONTROL_POINT_FIELDS = (
    "controlPointId",
    "key",
    "repoResourceIdentifier",
    "kind",
    "defaultValue",
    "surfaceId",
    "description",
    "status",
    "firstSeenSha",
    "lastSeenSha",
)
EDGE_FIELDS = (
    "edgeId",
    "fromControlPointId",
    "toControlPointId",
    "edgeKind",
    "source",
    "confidence",
    "evidence",
    "detectedAtSha",
)
_READINESS_FIELDS = ("bound", "total")


class Principal(NamedTuple):
    """Who a bearer token speaks for: an organisation key or a CLI session."""

    token: str
    user_id: str
    org_id: str
    scope: Scope


class SeededOrg(NamedTuple):
    org_id: str
    principals: tuple[Principal, ...] = ()
    projects: tuple[Project, ...] = ()


class ManagementSeed(NamedTuple):
    """Every organisation the plane starts with, by id."""

    orgs: Mapping[str, SeededOrg]

    def overlaid_with(self, later: ManagementSeed) -> ManagementSeed:
        """The later seed wins per organisation (an organisation named again is replaced)."""
        return ManagementSeed(MappingProxyType({**self.orgs, **later.orgs}))


DEFAULT_SEED = ManagementSeed(
    MappingProxyType(
        {
            DEFAULT_ORG: SeededOrg(
                DEFAULT_ORG,
                (Principal(DEFAULT_KEY, "svc_principal_default", DEFAULT_ORG, "org:management"),),
            )
        }
    )
)
"""With no `management:` section: one organisation and one key, so the plane works at once."""


def parse_management(raw: object, where: Where) -> ManagementSeed:
    """Validate the section; every error names the fixture's key path."""
    top = mapping(or_empty(raw), where, ("orgs",))
    orgs_doc = mapping(or_empty(top.get("orgs")), where / "orgs")
    if any(not org_id.strip() for org_id in orgs_doc):
        raise FixtureError((where / "orgs").says("an organisation id cannot be empty or blank"))
    orgs = {
        org_id: _org(org_id, body, where / "orgs" / org_id) for org_id, body in orgs_doc.items()
    }
    seed = ManagementSeed(MappingProxyType(orgs))
    check_unique_across_orgs(seed, where / "orgs")
    return seed


def _org(org_id: str, raw: object, where: Where) -> SeededOrg:
    body = mapping(or_empty(raw), where, _ORG_KEYS)
    keys = _each(body.get("keys"), where / "keys", lambda item, at: _key(item, at, org_id))
    sessions = _each(
        body.get("sessions"), where / "sessions", lambda item, at: _session(item, at, org_id)
    )
    projects = _each(
        body.get("projects"), where / "projects", lambda item, at: _project(item, at, org_id)
    )
    _check_unique([p.slug for p in projects], where / "projects", "slug", "project slug")
    return SeededOrg(org_id, (*keys, *sessions), projects)


def _key(raw: object, where: Where, org_id: str) -> Principal:
    body = _fields(raw, where, _KEY_FIELDS)
    key = _required_text(body, where, "key")
    if family_of(key) is not Family.ORGANISATION:
        raise FixtureError((where / "key").says("an organisation key must start with svc_org_"))
    scope = _field(
        where, "scope", lambda: fields.one_of(body.get("scope", KEY_SCOPES[0]), "scope", KEY_SCOPES)
    )
    user_id = _optional(body, where, "userId")
    if user_id is not None:
        user_id = _required_text(body, where, "userId")
    return Principal(key, user_id or f"svc_principal_{org_id}", org_id, scope)


def _session(raw: object, where: Where, org_id: str) -> Principal:
    body = _fields(raw, where, _SESSION_FIELDS)
    token = _required_text(body, where, "token")
    if family_of(token) is not Family.OTHER:
        raise FixtureError(
            (where / "token").says(
                "a CLI session token must not look like an API key (no svc_org_, svc_public_, "
                "project-api-key_ or phc_/phs_/phx_ prefix)"
            )
        )
    user_id = _required_text(body, where, "userId")
    return Principal(token, user_id, org_id, "cli")


def _project(raw: object, where: Where, org_id: str) -> Project:
    body = _fields(raw, where, PROJECT_FIELDS)
    slug = _field(where, "slug", lambda: fields.project_slug(fields.required(body, "slug")))
    project_id = _id(body, where, "projectId", "proj_") or derived_id("proj_", org_id, slug)
    environments = _each(
        body.get("environments"),
        where / "environments",
        lambda item, at: _environment(item, at, project_id),
    )
    _check_unique([e.slug for e in environments], where / "environments", "slug", "slug")
    defaults = [index for index, env in enumerate(environments) if env.is_default]
    if len(defaults) > 1:
        at = where / "environments" / str(defaults[1]) / "isDefault"
        raise FixtureError(at.says("only one environment of a project can be the default"))
    control_points = _each(
        body.get("controlPoints"),
        where / "controlPoints",
        lambda item, at: _control_point(item, at, project_id),
    )
    _check_unique([c.key for c in control_points], where / "controlPoints", "key", "key")
    edges = _each(body.get("edges"), where / "edges", lambda item, at: _edge(item, at, project_id))
    _check_edges(edges, {c.control_point_id for c in control_points}, where / "edges")
    return Project(
        project_id=project_id,
        org_id=org_id,
        name=_required_text(body, where, "name"),
        slug=slug,
        description=_field(
            where, "description", lambda: fields.description(body.get("description"))
        ),
        status=_field(
            where,
            "status",
            lambda: fields.one_of(body.get("status", "active"), "status", fields.PROJECT_STATUSES),
        ),
        created_at=_timestamp(body, where, "createdAt"),
        updated_at=_timestamp(body, where, "updatedAt"),
        environments=environments,
        control_points=control_points,
        edges=edges,
    )


def _environment(raw: object, where: Where, project_id: str) -> Environment:
    body = _fields(raw, where, ENVIRONMENT_FIELDS)
    slug = _field(where, "slug", lambda: fields.environment_slug(fields.required(body, "slug")))
    return Environment(
        env_id=_id(body, where, "envId", "env_") or derived_id("env_", project_id, slug),
        project_id=project_id,
        slug=slug,
        display_name=_optional(body, where, "displayName"),
        is_default=_optional_of(body, where, "isDefault", fields.boolean),
        promotion_rank=_optional_of(body, where, "promotionRank", fields.integer) or 0,
        branch_rules=_rules(body, where, "branchRules"),
        tag_rules=_rules(body, where, "tagRules"),
        webhook_aliases=_field(
            where,
            "webhookAliases",
            lambda: fields.strings(body.get("webhookAliases", []), "webhookAliases"),
        ),
        is_favourite=bool(_optional_of(body, where, "isFavourite", fields.boolean)),
        first_seen_at=_timestamp(body, where, "firstSeenAt"),
        last_seen_at=_timestamp(body, where, "lastSeenAt"),
        last_deployed_sha=_optional(body, where, "lastDeployedSha"),
        readiness=_readiness(body.get("readiness"), where / "readiness"),
        created_at=_timestamp(body, where, "createdAt"),
        updated_at=_timestamp(body, where, "updatedAt"),
    )


def _control_point(raw: object, where: Where, project_id: str) -> ControlPoint:
    body = _fields(raw, where, CONTROL_POINT_FIELDS)
    kinds: tuple[str, ...] = get_args(ControlPointKind)
    key = _required_text(body, where, "key")
    return ControlPoint(
        control_point_id=_id(body, where, "controlPointId", "cp_")
        or derived_id("cp_", project_id, key),
        key=key,
        kind=_field(
            where, "kind", lambda: fields.one_of(fields.required(body, "kind"), "kind", kinds)
        ),
        repo_resource_identifier=_optional(body, where, "repoResourceIdentifier"),
        default_value=check_json_value(
            body.get("defaultValue"), where.source, (where / "defaultValue").path
        ),
        surface_id=_optional(body, where, "surfaceId"),
        description=_optional(body, where, "description"),
        status=_field(
            where,
            "status",
            lambda: fields.one_of(body.get("status", "active"), "status", ("active", "retired")),
        ),
        first_seen_sha=_optional(body, where, "firstSeenSha"),
        last_seen_sha=_optional(body, where, "lastSeenSha"),
    )


def _edge(raw: object, where: Where, project_id: str) -> Edge:
    body = _fields(raw, where, EDGE_FIELDS)
    ends = {
        name: _required_text(body, where, name)
        for name in ("fromControlPointId", "toControlPointId")
    }
    confidence = _confidence(body.get("confidence", 1), where / "confidence")
    evidence = mapping(or_empty(body.get("evidence")), where / "evidence")
    return Edge(
        edge_id=_optional(body, where, "edgeId")
        or derived_id("edge_", project_id, *ends.values(), str(body.get("edgeKind"))),
        from_control_point_id=ends["fromControlPointId"],
        to_control_point_id=ends["toControlPointId"],
        edge_kind=_field(
            where,
            "edgeKind",
            lambda: fields.one_of(
                fields.required(body, "edgeKind"), "edgeKind", get_args(EdgeKind)
            ),
        ),
        source=_field(
            where,
            "source",
            lambda: fields.one_of(
                body.get("source", "deterministic"), "source", ("deterministic", "inferred")
            ),
        ),
        confidence=confidence,
        evidence=MappingProxyType(
            check_json_value(evidence, where.source, (where / "evidence").path)
        ),
        detected_at_sha=_optional(body, where, "detectedAtSha"),
    )


def _confidence(raw: object, where: Where) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 <= raw <= 1:
        raise FixtureError(where.says(f"expected a number from 0 to 1, got {describe(raw)}"))
    return raw


def derived_id(prefix: str, *names: str) -> str:
    """A seeded row without an id gets one derived from what names it (its organisation or
    project, and its slug or key): the same on every start and reset, so tests can use it."""
    return prefix + crockford(hashlib.sha256("\0".join(names).encode()).digest())


def _readiness(raw: object, where: Where) -> tuple[int, int]:
    if raw is None:
        return (0, 0)
    body = mapping(raw, where, _READINESS_FIELDS)
    bound = _optional_of(body, where, "bound", lambda v, n: fields.integer(v, n, minimum=0)) or 0
    total = _optional_of(body, where, "total", lambda v, n: fields.integer(v, n, minimum=0)) or 0
    return (bound, total)


def _check_edges(edges: tuple[Edge, ...], known: set[str], where: Where) -> None:
    for index, edge in enumerate(edges):
        for name, end in (
            ("fromControlPointId", edge.from_control_point_id),
            ("toControlPointId", edge.to_control_point_id),
        ):
            if end not in known:
                raise FixtureError(
                    (where / str(index) / name).says(
                        f"no control point {end!r} in this project's controlPoints"
                    )
                )


def _check_unique(values: list[str], where: Where, name: str, what: str) -> None:
    seen: set[str] = set()
    for index, value in enumerate(values):
        if value in seen:
            raise FixtureError((where / str(index) / name).says(f"{what} {value!r} is used twice"))
        seen.add(value)


def check_unique_across_orgs(seed: ManagementSeed, where: Where) -> None:
    """Tokens and ids are global: one token speaks for one principal, one id names one row, in
    every organisation and across files and merges. `where` is the `orgs` mapping's place."""
    owners: dict[str, str] = {}
    for org in seed.orgs.values():
        for path, value, what in _global_names(org, where / org.org_id):
            if value in owners:
                raise FixtureError(path.says(f"{what} is already used at {owners[value]}"))
            owners[value] = path.path


def _global_names(org: SeededOrg, where: Where) -> Iterator[tuple[Where, str, str]]:
    """Every token and id of an organisation, with where it stands and what it is."""
    keys = [p for p in org.principals if p.scope != "cli"]
    sessions = [p for p in org.principals if p.scope == "cli"]
    for index, principal in enumerate(keys):
        yield where / "keys" / str(index) / "key", principal.token, "this key"
    for index, principal in enumerate(sessions):
        yield where / "sessions" / str(index) / "token", principal.token, "this session token"
    for p, project in enumerate(org.projects):
        at = where / "projects" / str(p)
        yield at / "projectId", project.project_id, f"id {project.project_id!r}"
        for e, env in enumerate(project.environments):
            yield at / "environments" / str(e) / "envId", env.env_id, f"id {env.env_id!r}"
        for c, point in enumerate(project.control_points):
            cp_id = point.control_point_id
            yield at / "controlPoints" / str(c) / "controlPointId", cp_id, f"id {cp_id!r}"
        for k, edge in enumerate(project.edges):
            yield at / "edges" / str(k) / "edgeId", edge.edge_id, f"id {edge.edge_id!r}"


def _each(raw: object, where: Where, parse: Callable[[object, Where], T]) -> tuple[T, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise FixtureError(where.says(f"expected a list, got {describe(raw)}"))
    return tuple(parse(item, where / str(index)) for index, item in enumerate(raw))


def _fields(raw: object, where: Where, allowed: tuple[str, ...]) -> dict[str, object]:
    return mapping(raw, where, allowed)


def _field(where: Where, name: str, check: Callable[[], T]) -> T:
    """Run a shared field check; its error becomes this fixture's key path."""
    try:
        return check()
    except FieldError as error:
        problem = error.problem
        at = where / name
        for part in error.path[1:]:
            at = at / str(part)
        raise FixtureError(at.says(problem)) from None


def _required_text(body: Mapping[str, object], where: Where, name: str) -> str:
    return _field(where, name, lambda: fields.text(fields.required(body, name), name))


def _rules(body: Mapping[str, object], where: Where, name: str) -> tuple[RefRule, ...]:
    return _field(where, name, lambda: fields.ref_rules(body.get(name, []), name))


def _optional(body: Mapping[str, object], where: Where, name: str) -> str | None:
    return _field(where, name, lambda: fields.optional_text(body.get(name), name))


def _optional_of(
    body: Mapping[str, object], where: Where, name: str, check: Callable[[object, str], T]
) -> T | None:
    raw = body.get(name)
    return None if raw is None else _field(where, name, lambda: check(raw, name))


def _id(body: Mapping[str, object], where: Where, name: str, prefix: str) -> str | None:
    value = _optional(body, where, name)
    if value is not None and (not value.startswith(prefix) or len(value) == len(prefix)):
        raise FixtureError((where / name).says(f"expected an id starting with {prefix}"))
    return value


def _timestamp(body: Mapping[str, object], where: Where, name: str) -> str | None:
    """ISO 8601; an unquoted YAML timestamp (a datetime) is written back as one."""
    raw = body.get(name)
    if raw is None:
        return None
    try:  # before 9000: a write moves updatedAt on, and it must stay a four-digit year
        if isinstance(raw, datetime.datetime):
            return iso(raw if raw.tzinfo else raw.replace(tzinfo=datetime.UTC))
        if isinstance(raw, datetime.date):
            return iso(datetime.datetime(raw.year, raw.month, raw.day, tzinfo=datetime.UTC))
        if isinstance(raw, str):
            return iso(datetime.datetime.fromisoformat(raw.replace("Z", "+00:00")))
    except (ValueError, OverflowError):  # not ISO 8601, or outside the years UTC can carry
        pass
    raise FixtureError(
        (where / name).says(f"expected an ISO 8601 timestamp before 9000, got {describe(raw)}")
    )


def iso(moment: datetime.datetime) -> str:
    """`2026-11-24T21:00:00.000Z`: UTC, milliseconds, as the service writes timestamps."""
    utc = moment.astimezone(datetime.UTC) if moment.tzinfo else moment
    if utc.year >= 9000:
        raise ValueError("a timestamp from the year 9000 on")
    # isoformat pads the year to four digits on every platform (strftime's %Y does not)
    return utc.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"
