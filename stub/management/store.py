"""The management plane's state: organisations' projects and environments, built from the seed,
changed only by whole, already validated operations (each runs without an await, so a write is
atomic and two concurrent creates of one slug cannot both succeed), and reset to the seed."""

from __future__ import annotations

import calendar
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson

from stub.management.fields import RefRule
from stub.management.ids import new_id
from stub.management.seed import (
    ControlPoint,
    Edge,
    ManagementSeed,
    Principal,
    SeededEnvironment,
    SeededOrg,
    SeededProject,
    check_unique_across_orgs,
)
from stub.validation import Where

Json = dict[str, Any]

PLACEHOLDER_SLUG = "production"
MAX_PROJECTS = 1_000
"""Projects one organisation can hold: a tool stuck in a create loop meets a clear 409, not a
stub that grows until the machine runs out of memory."""
MAX_ENVIRONMENTS = 100
"""Environments one project can hold."""


class NotFound(Exception):
    """Unknown, or another organisation's: the two are never told apart."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} not found")
        self.what = what


class Conflict(Exception):
    pass


@dataclass(slots=True)
class Environment:
    env_id: str
    project_id: str
    slug: str
    display_name: str
    is_default: bool
    created_at: str
    updated_at: str
    promotion_rank: int = 0
    branch_rules: tuple[RefRule, ...] = ()
    tag_rules: tuple[RefRule, ...] = ()
    webhook_aliases: tuple[str, ...] = ()
    is_favourite: bool = False
    first_seen_at: str | None = None
    last_seen_at: str | None = None
    last_deployed_sha: str | None = None
    readiness: tuple[int, int] = (0, 0)

    def row(self) -> Json:
        """The management row (create, get, update)."""
        return {
            "envId": self.env_id,
            "projectId": self.project_id,
            "environmentName": self.slug,
            "slug": self.slug,
            "displayName": self.display_name,
            "promotionRank": self.promotion_rank,
            "isDefault": self.is_default,
            "branchRules": [rule.to_json() for rule in self.branch_rules],
            "tagRules": [rule.to_json() for rule in self.tag_rules],
            "webhookAliases": list(self.webhook_aliases),
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }

    def list_row(self) -> Json:
        """The list row: a different shape, with no envId and no webhookAliases."""
        return {
            "environmentName": self.slug,
            "slug": self.slug,
            "displayName": self.display_name,
            "promotionRank": self.promotion_rank,
            "isDefault": self.is_default,
            "isFavourite": self.is_favourite,
            "synthesised": False,
            "branchRules": [rule.to_json() for rule in self.branch_rules],
            "tagRules": [rule.to_json() for rule in self.tag_rules],
            "readiness": {"bound": self.readiness[0], "total": self.readiness[1]},
            "firstSeenAt": self.first_seen_at,
            "lastSeenAt": self.last_seen_at,
            "lastDeployedSha": self.last_deployed_sha,
        }


PLACEHOLDER_ROW: Json = {
    "environmentName": PLACEHOLDER_SLUG,
    "slug": PLACEHOLDER_SLUG,
    "displayName": "Production",
    "promotionRank": 0,
    "isDefault": True,
    "isFavourite": False,
    "synthesised": True,
    "branchRules": [],
    "tagRules": [],
    "readiness": {"bound": 0, "total": 0},
    "firstSeenAt": None,
    "lastSeenAt": None,
    "lastDeployedSha": None,
}
"""What a project without environments lists (the spec's synthesised placeholder)."""


@dataclass(slots=True)
class Project:
    project_id: str
    org_id: str
    name: str
    slug: str
    description: str | None
    status: str
    created_at: str
    updated_at: str
    environments: dict[str, Environment] = field(default_factory=dict)
    control_points: tuple[ControlPoint, ...] = ()
    edges: tuple[Edge, ...] = ()
    _answers: dict[str, bytes] = field(default_factory=dict)
    """Read answers encoded once and served until the project or an environment changes:
    tools poll these far more often than they write."""

    def answer(self, view: str, render: Callable[[Project], object]) -> bytes:
        encoded = self._answers.get(view)
        if encoded is None:
            encoded = self._answers[view] = orjson.dumps(render(self))
        return encoded

    def changed(self) -> None:
        """Every write to the project or its environments calls this (only the store writes)."""
        self._answers.clear()

    def row(self) -> Json:
        """The full row; no organisation id ever goes on the wire."""
        return {
            "projectId": self.project_id,
            "name": self.name,
            "slug": self.slug,
            "description": self.description,
            "status": self.status,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }

    def list_item(self) -> Json:
        return {
            "projectId": self.project_id,
            "name": self.name,
            "slug": self.slug,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }

    def listed_environments(self) -> list[Environment]:
        """Favourites first, then last seen (newest first, never-seen last), then promotion
        rank (highest first), then slug."""
        ordered = sorted(self.environments.values(), key=lambda e: e.slug)
        ordered.sort(key=lambda e: e.promotion_rank, reverse=True)
        ordered.sort(key=lambda e: e.last_seen_at or "", reverse=True)
        ordered.sort(key=lambda e: not e.is_favourite)
        return ordered

    def default_slug(self) -> str:
        listed = self.listed_environments()
        if not listed:
            return PLACEHOLDER_SLUG
        return next((e.slug for e in listed if e.is_default), listed[0].slug)


class NewEnvironment(NamedTuple):
    slug: str
    display_name: str
    is_default: bool | None
    branch_rules: tuple[RefRule, ...] = ()
    tag_rules: tuple[RefRule, ...] = ()
    webhook_aliases: tuple[str, ...] = ()


class _Clock:
    """ISO timestamps with milliseconds, cheap on the write path: the part up to the second is
    formatted once a second, and the last stamp given out is remembered, not parsed back."""

    def __init__(self) -> None:
        self._second = -1
        self._formatted_second = ""
        self._last = ("", 0)

    def now(self) -> str:
        return self._format(time.time_ns() // 1_000_000)

    def after(self, stamp: str) -> str:
        """Now, or a millisecond after `stamp` if now is not later: `updatedAt` moves on every
        change, even two within one millisecond."""
        text, millis = self._last
        if stamp != text:
            second = calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S"))
            millis = second * 1000 + int(stamp[20:23])
        return self._format(max(time.time_ns() // 1_000_000, millis + 1))

    def _format(self, millis: int) -> str:
        second, milli = divmod(millis, 1000)
        if second != self._second:
            self._second = second
            self._formatted_second = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        text = f"{self._formatted_second}.{milli:03d}Z"
        self._last = (text, millis)
        return text


class ManagementStore:
    """Every organisation's rows; an organisation only ever sees its own."""

    def __init__(self, seed: ManagementSeed) -> None:
        self._clock = _Clock()
        self._seeded_at = self._clock.now()
        """Seeded rows without timestamps carry the store's birth, so a reset restores them
        to the very same values."""
        self.reseed(seed)

    def reseed(self, seed: ManagementSeed) -> None:
        """Serve this seed from now on, from exactly its seeded state."""
        self.seed = seed
        self.reset()

    def merged_seed(self, later: ManagementSeed, where: Where) -> ManagementSeed:
        """The current seed overlaid with `later` (per organisation), tokens and ids checked
        across both; FixtureError names the first clash."""
        merged = self.seed.overlaid_with(later)
        check_unique_across_orgs(merged, where)
        return merged

    def merge(self, later: ManagementSeed, merged: ManagementSeed) -> None:
        """Serve `merged` (from `merged_seed(later)`): the organisations `later` names start
        from their seed; every other one keeps what was done to it at run time."""
        self.seed = merged
        self._principals = {p.token: p for org in merged.orgs.values() for p in org.principals}
        for project_id in [p.project_id for p in self._projects.values() if p.org_id in later.orgs]:
            del self._projects[project_id]
        self._add_seeded(later.orgs.values())

    def reset(self) -> None:
        """Back to exactly the seeded state: created rows gone, deleted ones back, edits undone."""
        self._principals = {p.token: p for org in self.seed.orgs.values() for p in org.principals}
        self._projects: dict[str, Project] = {}
        self._add_seeded(self.seed.orgs.values())

    def _add_seeded(self, orgs: Iterable[SeededOrg]) -> None:
        for org in orgs:
            for seeded in org.projects:
                project = self._seeded_project(org.org_id, seeded)
                self._projects[project.project_id] = project

    def principal(self, token: str) -> Principal | None:
        return self._principals.get(token)

    # Projects

    def projects(self, org_id: str) -> list[Project]:
        return [p for p in self._projects.values() if p.org_id == org_id]

    def project(self, org_id: str, project_id: str) -> Project:
        project = self._projects.get(project_id)
        if project is None or project.org_id != org_id:
            raise NotFound("Project")
        return project

    def create_project(self, org_id: str, name: str, slug: str, description: str | None) -> Project:
        self._check_project_slug(org_id, slug)
        _check_room(len(self.projects(org_id)), MAX_PROJECTS, "projects per organisation")
        now = self._clock.now()
        project = Project(new_id("proj_"), org_id, name, slug, description, "active", now, now)
        self._projects[project.project_id] = project
        return project

    def update_project(self, org_id: str, project_id: str, changes: Mapping[str, Any]) -> Project:
        """`changes` holds validated values by attribute: name, description, status."""
        project = self.project(org_id, project_id)
        for name, value in changes.items():
            setattr(project, name, value)
        project.updated_at = self._clock.after(project.updated_at)
        project.changed()
        return project

    def delete_project(self, org_id: str, project_id: str) -> None:
        """Its environments, control points and edges go with it."""
        del self._projects[self.project(org_id, project_id).project_id]

    # Environments

    def environment(self, org_id: str, project_id: str, env_id: str) -> Environment:
        environment = self.project(org_id, project_id).environments.get(env_id)
        if environment is None:
            raise NotFound("Environment")
        return environment

    def create_environment(self, org_id: str, project_id: str, new: NewEnvironment) -> Environment:
        project = self.project(org_id, project_id)
        if any(e.slug == new.slug for e in project.environments.values()):
            raise Conflict("an environment with this slug already exists in this project")
        _check_room(len(project.environments), MAX_ENVIRONMENTS, "environments per project")
        now = self._clock.now()
        first = not project.environments
        environment = Environment(
            env_id=new_id("env_"),
            project_id=project.project_id,
            slug=new.slug,
            display_name=new.display_name,
            # Only an absent isDefault makes the first environment the default: the
            # Terraform provider always sends an explicit false, and means it.
            is_default=first if new.is_default is None else new.is_default,
            created_at=now,
            updated_at=now,
            branch_rules=new.branch_rules,
            tag_rules=new.tag_rules,
            webhook_aliases=new.webhook_aliases,
        )
        project.environments[environment.env_id] = environment
        if environment.is_default:
            self._only_default(project, environment)
        project.changed()
        return environment

    def update_environment(
        self, org_id: str, project_id: str, env_id: str, changes: Mapping[str, Any]
    ) -> Environment:
        """`changes` holds validated values by attribute (display_name, is_default, rules)."""
        project = self.project(org_id, project_id)
        environment = self.environment(org_id, project_id, env_id)
        for name, value in changes.items():
            setattr(environment, name, value)
        environment.updated_at = self._clock.after(environment.updated_at)
        if changes.get("is_default") is True:
            self._only_default(project, environment)
        project.changed()
        return environment

    def delete_environment(self, org_id: str, project_id: str, env_id: str) -> None:
        """Deleting the default hands it to the first remaining environment in list order;
        deleting the last brings the synthesised `production` row back."""
        project = self.project(org_id, project_id)
        removed = project.environments.pop(self.environment(org_id, project_id, env_id).env_id)
        remaining = project.listed_environments()
        if removed.is_default and remaining:
            successor = remaining[0]
            successor.is_default = True
            successor.updated_at = self._clock.after(successor.updated_at)
        project.changed()

    # Control points: read-only, and another organisation's project reads as empty

    def control_points(self, org_id: str, project_id: str) -> tuple[ControlPoint, ...]:
        project = self._projects.get(project_id)
        return project.control_points if project and project.org_id == org_id else ()

    def edges(self, org_id: str, project_id: str) -> tuple[Edge, ...]:
        project = self._projects.get(project_id)
        return project.edges if project and project.org_id == org_id else ()

    # For the test-control plane: everything, every organisation, no tokens

    def snapshot(self) -> Json:
        orgs: Json = {}
        for org_id, org in self.seed.orgs.items():
            orgs[org_id] = {
                "principals": [{"userId": p.user_id, "scope": p.scope} for p in org.principals],
                "projects": [_project_snapshot(p) for p in self.projects(org_id)],
            }
        return {"orgs": orgs}

    def _check_project_slug(self, org_id: str, slug: str) -> None:
        if any(p.slug == slug for p in self.projects(org_id)):
            raise Conflict("a project with this slug already exists")

    def _only_default(self, project: Project, keep: Environment) -> None:
        for other in project.environments.values():
            if other is not keep and other.is_default:
                other.is_default = False
                other.updated_at = self._clock.after(other.updated_at)

    def _seeded_project(self, org_id: str, seeded: SeededProject) -> Project:
        created = seeded.created_at or self._seeded_at
        project = Project(
            project_id=seeded.project_id,
            org_id=org_id,
            name=seeded.name,
            slug=seeded.slug,
            description=seeded.description,
            status=seeded.status,
            created_at=created,
            updated_at=seeded.updated_at or created,
            control_points=seeded.control_points,
            edges=seeded.edges,
        )
        explicit_default = any(e.is_default for e in seeded.environments)
        for index, env in enumerate(seeded.environments):
            first_by_default = index == 0 and not explicit_default and env.is_default is None
            environment = _seeded_environment(project, env, self._seeded_at, first_by_default)
            project.environments[environment.env_id] = environment
        return project


def _check_room(held: int, most: int, what: str) -> None:
    if held >= most:
        raise Conflict(f"this stub holds at most {most:,} {what}: delete some, or reset it")


def _seeded_environment(
    project: Project, seeded: SeededEnvironment, seeded_at: str, first_by_default: bool
) -> Environment:
    created = seeded.created_at or seeded_at
    return Environment(
        env_id=seeded.env_id,
        project_id=project.project_id,
        slug=seeded.slug,
        display_name=seeded.display_name if seeded.display_name is not None else seeded.slug,
        is_default=bool(seeded.is_default) or first_by_default,
        created_at=created,
        updated_at=seeded.updated_at or created,
        promotion_rank=seeded.promotion_rank,
        branch_rules=seeded.branch_rules,
        tag_rules=seeded.tag_rules,
        webhook_aliases=seeded.webhook_aliases,
        is_favourite=seeded.is_favourite,
        first_seen_at=seeded.first_seen_at,
        last_seen_at=seeded.last_seen_at,
        last_deployed_sha=seeded.last_deployed_sha,
        readiness=seeded.readiness,
    )


def _project_snapshot(project: Project) -> Json:
    environments = [{**e.list_row(), **e.row()} for e in project.listed_environments()]
    return {
        **project.row(),
        "environments": environments,
        "controlPoints": [c.row(project.project_id) for c in project.control_points],
        "edges": [edge.row() for edge in project.edges],
    }
