"""The management plane's rows, defined once: a seed parses into them and the store serves
them. Immutable, so the seed stays as parsed across resets; the store writes by replacing a
row (and what a seed left unsaid, the None fields, it fills in when it serves the seed)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from stub.management.fields import ProjectStatus, RefRule
from stub.validation import JsonValue

Json = dict[str, Any]
ControlPointKind = Literal["boolean", "string", "number", "json"]
EdgeKind = Literal["lexical-nesting", "call-graph", "co-occurrence", "declared"]


class Environment(NamedTuple):
    """A deployment target of a project: seeded, or created and edited through the plane."""

    env_id: str
    project_id: str
    slug: str
    display_name: str | None = None
    """None: not said in the seed; served as the slug."""
    is_default: bool | None = None
    """None: not said in the seed (the first environment of a project then becomes the
    default)."""
    created_at: str | None = None
    """None: not said in the seed; served as the store's start."""
    updated_at: str | None = None
    """None: not said in the seed; served as createdAt."""
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


PLACEHOLDER_SLUG = "production"
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


class ControlPoint(NamedTuple):
    """A row registered by a merge: read-only on the plane, so seeded and never changed."""

    control_point_id: str
    key: str
    kind: ControlPointKind
    repo_resource_identifier: str | None = None
    default_value: JsonValue = None
    surface_id: str | None = None
    description: str | None = None
    status: Literal["active", "retired"] = "active"
    first_seen_sha: str | None = None
    last_seen_sha: str | None = None

    def row(self, project_id: str) -> Json:
        return {
            "controlPointId": self.control_point_id,
            "projectId": project_id,
            "key": self.key,
            "repoResourceIdentifier": self.repo_resource_identifier,
            "kind": self.kind,
            "defaultValue": self.default_value,
            "surfaceId": self.surface_id,
            "description": self.description,
            "status": self.status,
            "firstSeenSha": self.first_seen_sha,
            "lastSeenSha": self.last_seen_sha,
        }


class Edge(NamedTuple):
    edge_id: str
    from_control_point_id: str
    to_control_point_id: str
    edge_kind: EdgeKind
    source: Literal["deterministic", "inferred"] = "deterministic"
    confidence: float = 1
    evidence: Mapping[str, JsonValue] = MappingProxyType({})
    detected_at_sha: str | None = None

    def row(self) -> Json:
        return {
            "edgeId": self.edge_id,
            "fromControlPointId": self.from_control_point_id,
            "toControlPointId": self.to_control_point_id,
            "edgeKind": self.edge_kind,
            "source": self.source,
            "confidence": self.confidence,
            "evidence": dict(self.evidence),
            "detectedAtSha": self.detected_at_sha,
        }


class Project(NamedTuple):
    project_id: str
    org_id: str
    """Never on the wire: it says whose the project is."""
    name: str
    slug: str
    description: str | None = None
    status: ProjectStatus = "active"
    created_at: str | None = None
    """None: not said in the seed; served as the store's start."""
    updated_at: str | None = None
    """None: not said in the seed; served as createdAt."""
    environments: tuple[Environment, ...] = ()
    control_points: tuple[ControlPoint, ...] = ()
    edges: tuple[Edge, ...] = ()

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
        ordered = sorted(self.environments, key=lambda e: e.slug)
        ordered.sort(key=lambda e: e.promotion_rank, reverse=True)
        ordered.sort(key=lambda e: e.last_seen_at or "", reverse=True)
        ordered.sort(key=lambda e: not e.is_favourite)
        return ordered

    def default_slug(self) -> str:
        listed = self.listed_environments()
        if not listed:
            return PLACEHOLDER_SLUG
        return next((e.slug for e in listed if e.is_default), listed[0].slug)
