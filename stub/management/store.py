"""The management plane's state: organisations' projects and environments, built from the seed,
changed only by whole, already validated operations (each runs without an await, so a write is
atomic and two concurrent creates of one slug cannot both succeed), and reset to the seed.

The rows are immutable (rows.py): a write builds the changed row and puts it in the old one's
place, so a reader never holds a half-written row."""

from __future__ import annotations

import calendar
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple, TypeVar

import orjson

from stub.management.fields import RefRule
from stub.management.ids import new_id
from stub.management.rows import ControlPoint, Edge, Environment, Json, Project
from stub.management.seed import (
    ManagementSeed,
    Principal,
    SeededOrg,
    check_unique_across_orgs,
)
from stub.validation import Where

MAX_PROJECTS = 1_000
"""Projects one organisation can hold: a tool stuck in a create loop meets a clear 409, not a
stub that grows until the machine runs out of memory."""
MAX_ENVIRONMENTS = 100
"""Environments one project can hold."""

_Row = TypeVar("_Row", Project, Environment)
"""The rows a write changes: both carry an updatedAt."""


class NotFound(Exception):
    """Unknown, or another organisation's: the two are never told apart."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} not found")
        self.what = what


class Conflict(Exception):
    pass


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
            self._drop(project_id)
        self._add_seeded(later.orgs.values())

    def reset(self) -> None:
        """Back to exactly the seeded state: created rows gone, deleted ones back, edits undone."""
        self._principals = {p.token: p for org in self.seed.orgs.values() for p in org.principals}
        self._projects: dict[str, Project] = {}
        self._answers: dict[str, dict[str, bytes]] = {}
        """Read answers by project id and view, encoded once and served until the project
        or an environment changes: tools poll these far more often than they write."""
        self._add_seeded(self.seed.orgs.values())

    def _add_seeded(self, orgs: Iterable[SeededOrg]) -> None:
        for org in orgs:
            for seeded in org.projects:
                self._put(_served(seeded, self._seeded_at))

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

    def answer(
        self, org_id: str, project_id: str, view: str, render: Callable[[Project], object]
    ) -> bytes:
        """`render(project)` encoded, from the cache while the project is unchanged."""
        project = self.project(org_id, project_id)
        answers = self._answers.setdefault(project_id, {})
        encoded = answers.get(view)
        if encoded is None:
            encoded = answers[view] = orjson.dumps(render(project))
        return encoded

    def create_project(self, org_id: str, name: str, slug: str, description: str | None) -> Project:
        self._check_project_slug(org_id, slug)
        _check_room(len(self.projects(org_id)), MAX_PROJECTS, "projects per organisation")
        now = self._clock.now()
        project = Project(new_id("proj_"), org_id, name, slug, description, "active", now, now)
        return self._put(project)

    def update_project(self, org_id: str, project_id: str, changes: Mapping[str, Any]) -> Project:
        """`changes` holds validated values by attribute: name, description, status."""
        project = self.project(org_id, project_id)
        return self._put(self._touched(project, **changes))

    def delete_project(self, org_id: str, project_id: str) -> None:
        """Its environments, control points and edges go with it."""
        self._drop(self.project(org_id, project_id).project_id)

    # Environments

    def environment(self, org_id: str, project_id: str, env_id: str) -> Environment:
        project = self.project(org_id, project_id)
        environment = next((e for e in project.environments if e.env_id == env_id), None)
        if environment is None:
            raise NotFound("Environment")
        return environment

    def create_environment(self, org_id: str, project_id: str, new: NewEnvironment) -> Environment:
        project = self.project(org_id, project_id)
        if any(e.slug == new.slug for e in project.environments):
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
        environments = (*project.environments, environment)
        if environment.is_default:
            environments = self._only_default(environments, environment)
        self._put(project._replace(environments=environments))
        return environment

    def update_environment(
        self, org_id: str, project_id: str, env_id: str, changes: Mapping[str, Any]
    ) -> Environment:
        """`changes` holds validated values by attribute (display_name, is_default, rules)."""
        project = self.project(org_id, project_id)
        environment = self._touched(self.environment(org_id, project_id, env_id), **changes)
        environments = _replaced(project.environments, environment)
        if changes.get("is_default") is True:
            environments = self._only_default(environments, environment)
        self._put(project._replace(environments=environments))
        return environment

    def delete_environment(self, org_id: str, project_id: str, env_id: str) -> None:
        """Deleting the default hands it to the first remaining environment in list order;
        deleting the last brings the synthesised `production` row back."""
        project = self.project(org_id, project_id)
        removed = self.environment(org_id, project_id, env_id)
        remaining = tuple(e for e in project.environments if e.env_id != removed.env_id)
        project = project._replace(environments=remaining)
        listed = project.listed_environments()
        if removed.is_default and listed:
            successor = self._touched(listed[0], is_default=True)
            project = project._replace(environments=_replaced(remaining, successor))
        self._put(project)

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

    def _put(self, project: Project) -> Project:
        """Every write ends here: the new row takes the old one's place, and the answers
        encoded from the old one go."""
        self._projects[project.project_id] = project
        self._answers.pop(project.project_id, None)
        return project

    def _drop(self, project_id: str) -> None:
        del self._projects[project_id]
        self._answers.pop(project_id, None)

    def _touched(self, row: _Row, **changes: Any) -> _Row:
        """`row` with `changes`, and its updatedAt moved on: every change moves it."""
        assert row.updated_at is not None  # _served filled in what a seed left unsaid
        return row._replace(**changes, updated_at=self._clock.after(row.updated_at))

    def _check_project_slug(self, org_id: str, slug: str) -> None:
        if any(p.slug == slug for p in self.projects(org_id)):
            raise Conflict("a project with this slug already exists")

    def _only_default(
        self, environments: tuple[Environment, ...], keep: Environment
    ) -> tuple[Environment, ...]:
        """One default per project: any other loses it (and its updatedAt moves on)."""
        return tuple(
            self._touched(other, is_default=False)
            if other.env_id != keep.env_id and other.is_default
            else other
            for other in environments
        )


def _check_room(held: int, most: int, what: str) -> None:
    if held >= most:
        raise Conflict(f"this stub holds at most {most:,} {what}: delete some, or reset it")


def _replaced(environments: tuple[Environment, ...], new: Environment) -> tuple[Environment, ...]:
    """`new` in the place of the environment with its id."""
    return tuple(new if e.env_id == new.env_id else e for e in environments)


def _served(seeded: Project, seeded_at: str) -> Project:
    """A seeded project as the store serves it: what the seed left unsaid, filled in."""
    created = seeded.created_at or seeded_at
    explicit_default = any(e.is_default for e in seeded.environments)
    environments = []
    for index, env in enumerate(seeded.environments):
        first_by_default = index == 0 and not explicit_default and env.is_default is None
        environments.append(_served_environment(env, seeded_at, first_by_default))
    return seeded._replace(
        created_at=created,
        updated_at=seeded.updated_at or created,
        environments=tuple(environments),
    )


def _served_environment(seeded: Environment, seeded_at: str, first_by_default: bool) -> Environment:
    created = seeded.created_at or seeded_at
    return seeded._replace(
        display_name=seeded.display_name if seeded.display_name is not None else seeded.slug,
        is_default=bool(seeded.is_default) or first_by_default,
        created_at=created,
        updated_at=seeded.updated_at or created,
    )


def _project_snapshot(project: Project) -> Json:
    environments = [{**e.list_row(), **e.row()} for e in project.listed_environments()]
    return {
        **project.row(),
        "environments": environments,
        "controlPoints": [c.row(project.project_id) for c in project.control_points],
        "edges": [edge.row() for edge in project.edges],
    }
