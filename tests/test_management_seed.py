"""The `management:` fixture section: every refusal names the source, the key path and the
problem; what it accepts is served in the spec's shapes; files, the command line and the
test-control routes load, overlay and reset it."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from conftest import AiohttpClient, one_line, run_stub
from stub import StubConfig, create_app
from stub.fixtures import (
    FixtureError,
    FixtureSet,
    load_fixture_paths,
    parse_fixture_document,
    parse_yaml,
)
from stub.management.rows import Environment
from stub.management.seed import DEFAULT_SEED, ManagementSeed

SOURCE = "x.yaml"
SEED = Path(__file__).parent / "fixtures" / "management.yaml"
ADMIN = "svc_org_acme_admin"
SEEDED_TOKENS = ("svc_org_acme_admin", "svc_org_acme_ci", "svc_cli_alice", "svc_org_globex_admin")
ID = re.compile(r"(proj|env|cp|edge)_[0-9A-HJKMNP-TV-Z]{26}")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")

Client = TestClient[Any, Any]

# Key paths of the documents the helpers below build.
ORG = "x.yaml: management.orgs.o"
PROJECT = f"{ORG}.projects.0"
ENV = f"{PROJECT}.environments.0"
CP = f"{PROJECT}.controlPoints.1"
EDGE = f"{PROJECT}.edges.0"


def parse(text: str, source: str = SOURCE) -> FixtureSet:
    """YAML text to a fixture set, exactly as a fixture file is read."""
    return parse_fixture_document(parse_yaml(text, source), source)


def seed_of(text: str) -> ManagementSeed:
    management = parse(text).management
    assert management is not None
    return management


def error_of(text: str) -> str:
    """The message of the FixtureError that parsing `text` raises."""
    with pytest.raises(FixtureError) as info:
        parse(text)
    return str(info.value)


def org(body: str) -> str:
    """A document whose one organisation, `o`, has this body."""
    return f"management: {{orgs: {{o: {body}}}}}"


def project(body: str) -> str:
    """A document whose organisation `o` has one project with this body."""
    return org(f"{{projects: [{body}]}}")


def environments(*bodies: str) -> str:
    """A document whose one project has these environments."""
    return project(f"{{name: N, slug: s, environments: [{', '.join(bodies)}]}}")


def control_point(body: str) -> str:
    """A document whose one project has a valid control point, then this one (index 1)."""
    return project(f"{{name: N, slug: s, controlPoints: [{{key: a, kind: boolean}}, {body}]}}")


def edge(body: str) -> str:
    """A document whose one project has control point `cp_a` and one edge with this body."""
    return project(
        "{name: N, slug: s, controlPoints: [{controlPointId: cp_a, key: a, kind: boolean}], "
        f"edges: [{body}]}}"
    )


def first_environment(text: str) -> Environment:
    return seed_of(text).orgs["o"].projects[0].environments[0]


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


async def get(client: Client, path: str, key: str) -> Any:
    response = await client.get(path, headers={"Authorization": f"Bearer {key}"})
    assert response.status == 200, await response.text()
    return await response.json()


async def control(client: Client, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
    response = await client.request(method, path, **kwargs)
    return response.status, await response.json()


async def snapshot(client: Client) -> Any:
    status, body = await control(client, "GET", "/_test/management")
    assert status == 200, body
    return body


def refused(message: str) -> dict[str, Any]:
    """The test-control plane's answer to a bad seed."""
    return {"ok": False, "error": "INVALID_FIXTURES", "message": message}


# --------------------------------------------------------------------------------------------
# Refusals: one message naming the source, the key path and the problem.
# --------------------------------------------------------------------------------------------


class TestSectionShapeErrors:
    @pytest.mark.parametrize(
        ("text", "message"),
        [
            pytest.param(
                "management: [1]", "x.yaml: management: expected a mapping, got a list", id="list"
            ),
            pytest.param(
                "management: 5", "x.yaml: management: expected a mapping, got 5", id="number"
            ),
            pytest.param(
                "management: {orgz: {}}",
                "x.yaml: management.orgz: unknown key (expected one of orgs)",
                id="unknown-key",
            ),
            pytest.param(
                "management: {orgs: [o]}",
                "x.yaml: management.orgs: expected a mapping, got a list",
                id="orgs-a-list",
            ),
            pytest.param(
                "management: {orgs: {1: {}}}",
                "x.yaml: management.orgs: expected string keys, got 1",
                id="org-id-a-number",
            ),
            pytest.param(
                org("[keys]"),
                "x.yaml: management.orgs.o: expected a mapping, got a list",
                id="org-a-list",
            ),
            pytest.param(
                org("{users: []}"),
                "x.yaml: management.orgs.o.users: unknown key "
                "(expected one of keys, sessions, projects)",
                id="unknown-org-key",
            ),
            pytest.param(
                "management: {orgs: {'': {}}}",
                "x.yaml: management.orgs: an organisation id cannot be empty or blank",
                id="empty-org-id",
            ),
            pytest.param(
                "management: {orgs: {'  ': {}}}",
                "x.yaml: management.orgs: an organisation id cannot be empty or blank",
                id="blank-org-id",
            ),
        ],
    )
    def test_the_section_is_orgs_by_id_each_with_keys_sessions_and_projects(
        self, text: str, message: str
    ) -> None:
        assert error_of(text) == message


class TestKeyErrors:
    @pytest.mark.parametrize(
        ("keys", "message"),
        [
            pytest.param(
                "{key: svc_org_a}",
                f"{ORG}.keys: expected a list, got an object",
                id="keys-a-mapping",
            ),
            pytest.param(
                "svc_org_a", f'{ORG}.keys: expected a list, got "svc_org_a"', id="keys-a-string"
            ),
            pytest.param(
                "[svc_org_a]",
                f'{ORG}.keys.0: expected a mapping, got "svc_org_a"',
                id="entry-a-string",
            ),
            pytest.param(
                "[{key: svc_org_a, role: admin}]",
                f"{ORG}.keys.0.role: unknown key (expected one of key, scope, userId)",
                id="unknown-field",
            ),
            pytest.param("[{scope: 'org:ci-read'}]", f"{ORG}.keys.0.key: required", id="no-key"),
            pytest.param("[{key: ''}]", f"{ORG}.keys.0.key: must not be empty", id="empty-key"),
            pytest.param(
                "[{key: 5}]", f"{ORG}.keys.0.key: must be a string, got a number", id="key-number"
            ),
            pytest.param(
                "[{key: svc_org_a, scope: admin}]",
                f"{ORG}.keys.0.scope: must be one of org:management, org:ci-read, got 'admin'",
                id="unknown-scope",
            ),
            pytest.param(
                "[{key: svc_org_a, scope: cli}]",
                f"{ORG}.keys.0.scope: must be one of org:management, org:ci-read, got 'cli'",
                id="cli-is-for-sessions",
            ),
            pytest.param(
                "[{key: svc_org_a, userId: 3}]",
                f"{ORG}.keys.0.userId: must be a string, got a number",
                id="user-id-number",
            ),
        ],
    )
    def test_a_bad_key_entry_is_refused(self, keys: str, message: str) -> None:
        assert error_of(org(f"{{keys: {keys}}}")) == message

    @pytest.mark.parametrize(
        "key", ["project-api-key_a", "svc_public_a", "phc_a", "svc_cli_alice", "svc_orga"]
    )
    def test_an_organisation_key_must_start_with_svc_org(self, key: str) -> None:
        assert error_of(org(f"{{keys: [{{key: {key}}}]}}")) == (
            f"{ORG}.keys.0.key: an organisation key must start with svc_org_"
        )


class TestSessionErrors:
    @pytest.mark.parametrize(
        "token",
        ["svc_org_a", "svc_public_a", "project-api-key_a", "phc_a", "phs_a", "phx_a"],
    )
    def test_a_session_token_may_not_look_like_an_api_key(self, token: str) -> None:
        assert error_of(org(f"{{sessions: [{{token: {token}, userId: u}}]}}")) == (
            f"{ORG}.sessions.0.token: a CLI session token must not look like an API key "
            "(no svc_org_, svc_public_, project-api-key_ or phc_/phs_/phx_ prefix)"
        )

    @pytest.mark.parametrize(
        ("sessions", "message"),
        [
            pytest.param("[{token: t}]", f"{ORG}.sessions.0.userId: required", id="no-user-id"),
            pytest.param(
                "[{token: t, userId: ''}]",
                f"{ORG}.sessions.0.userId: must not be empty",
                id="empty-user-id",
            ),
            pytest.param("[{userId: u}]", f"{ORG}.sessions.0.token: required", id="no-token"),
            pytest.param(
                "[{token: t, userId: u, scope: cli}]",
                f"{ORG}.sessions.0.scope: unknown key (expected one of token, userId)",
                id="unknown-field",
            ),
            pytest.param(
                "{token: t}", f"{ORG}.sessions: expected a list, got an object", id="not-a-list"
            ),
        ],
    )
    def test_a_bad_session_entry_is_refused(self, sessions: str, message: str) -> None:
        assert error_of(org(f"{{sessions: {sessions}}}")) == message


class TestTokensAreGlobal:
    @pytest.mark.parametrize(
        ("orgs", "message"),
        [
            pytest.param(
                "{o: {keys: [{key: svc_org_a}, {key: svc_org_a, scope: 'org:ci-read'}]}}",
                "x.yaml: management.orgs.o.keys.1.key: this key is already used at "
                "management.orgs.o.keys.0.key",
                id="key-twice-in-one-org",
            ),
            pytest.param(
                "{o: {sessions: [{token: t, userId: u}, {token: t, userId: v}]}}",
                "x.yaml: management.orgs.o.sessions.1.token: this session token is already used "
                "at management.orgs.o.sessions.0.token",
                id="session-twice-in-one-org",
            ),
            pytest.param(
                "{o: {keys: [{key: svc_org_a}]}, p: {keys: [{key: svc_org_a}]}}",
                "x.yaml: management.orgs.p.keys.0.key: this key is already used at "
                "management.orgs.o.keys.0.key",
                id="key-in-two-orgs",
            ),
            pytest.param(
                "{o: {sessions: [{token: t, userId: u}]}, p: {sessions: [{token: t, userId: u}]}}",
                "x.yaml: management.orgs.p.sessions.0.token: this session token is already used "
                "at management.orgs.o.sessions.0.token",
                id="session-in-two-orgs",
            ),
        ],
    )
    def test_one_token_speaks_for_one_principal(self, orgs: str, message: str) -> None:
        assert error_of(f"management: {{orgs: {orgs}}}") == message

    def test_the_message_never_echoes_the_token(self) -> None:
        message = error_of(org("{keys: [{key: svc_org_secret}, {key: svc_org_secret}]}"))
        assert "svc_org_secret" not in message


class TestProjectErrors:
    @pytest.mark.parametrize(
        ("body", "message"),
        [
            pytest.param("{slug: s}", f"{PROJECT}.name: required", id="no-name"),
            pytest.param("{name: N}", f"{PROJECT}.slug: required", id="no-slug"),
            pytest.param("{name: '', slug: s}", f"{PROJECT}.name: must not be empty", id="no-name"),
            pytest.param(
                "{name: N, slug: ' '}", f"{PROJECT}.slug: must not be empty", id="blank-slug"
            ),
            pytest.param(
                "{name: N, slug: [s]}",
                f"{PROJECT}.slug: must be a string, got an array",
                id="slug-a-list",
            ),
            pytest.param(
                "{name: N, slug: s, projectId: checkout}",
                f"{PROJECT}.projectId: expected an id starting with proj_",
                id="id-without-prefix",
            ),
            pytest.param(
                "{name: N, slug: s, projectId: proj_}",
                f"{PROJECT}.projectId: expected an id starting with proj_",
                id="id-only-the-prefix",
            ),
            pytest.param(
                "{name: N, slug: s, projectId: 5}",
                f"{PROJECT}.projectId: must be a string, got a number",
                id="id-a-number",
            ),
            pytest.param(
                "{name: N, slug: s, status: deleted}",
                f"{PROJECT}.status: must be one of active, archived, got 'deleted'",
                id="bad-status",
            ),
            pytest.param(
                "{name: N, slug: s, description: 3}",
                f"{PROJECT}.description: must be a string, got a number",
                id="description-a-number",
            ),
            pytest.param(
                "{name: N, slug: s, createdAt: yesterday}",
                f'{PROJECT}.createdAt: expected an ISO 8601 timestamp before 9000, got "yesterday"',
                id="bad-timestamp",
            ),
            pytest.param(
                "{name: N, slug: s, updatedAt: '2026-02-30'}",
                f"{PROJECT}.updatedAt: expected an ISO 8601 timestamp before 9000, "
                'got "2026-02-30"',
                id="no-such-day",
            ),
            pytest.param(
                "{name: N, slug: s, owner: me}",
                f"{PROJECT}.owner: unknown key (expected one of projectId, name, slug, "
                "description, status, createdAt, updatedAt, environments, controlPoints, edges)",
                id="unknown-field",
            ),
            pytest.param(
                "{name: N, slug: s, environments: {production: {}}}",
                f"{PROJECT}.environments: expected a list, got an object",
                id="environments-a-mapping",
            ),
            pytest.param("[N, s]", f"{PROJECT}: expected a mapping, got a list", id="a-list"),
        ],
    )
    def test_a_bad_project_is_refused(self, body: str, message: str) -> None:
        assert error_of(project(body)) == message

    def test_a_project_slug_is_unique_in_its_organisation(self) -> None:
        text = org("{projects: [{name: A, slug: s}, {name: B, slug: s}]}")
        assert error_of(text) == f"{ORG}.projects.1.slug: project slug 's' is used twice"

    def test_the_same_project_slug_in_two_organisations_is_fine(self) -> None:
        seed = seed_of(
            "management: {orgs: {o: {projects: [{name: A, slug: s}]}, "
            "p: {projects: [{name: B, slug: s}]}}}"
        )
        ids = [seed.orgs[o].projects[0].project_id for o in ("o", "p")]
        assert ids[0] != ids[1]


class TestEnvironmentErrors:
    @pytest.mark.parametrize(
        ("body", "message"),
        [
            pytest.param("{displayName: X}", f"{ENV}.slug: required", id="no-slug"),
            pytest.param("{slug: '  '}", f"{ENV}.slug: must not be empty", id="blank-slug"),
            pytest.param(
                "{slug: a, envId: production}",
                f"{ENV}.envId: expected an id starting with env_",
                id="id-without-prefix",
            ),
            pytest.param(
                "{slug: a, isDefault: 'yes'}",
                f"{ENV}.isDefault: must be a boolean, got a string",
                id="is-default-a-string",
            ),
            pytest.param(
                "{slug: a, promotionRank: 1.5}",
                f"{ENV}.promotionRank: must be an integer, got 1.5",
                id="rank-a-float",
            ),
            pytest.param(
                "{slug: a, promotionRank: 2.0}",
                f"{ENV}.promotionRank: must be an integer, got 2.0",
                id="rank-a-whole-float",
            ),
            pytest.param(
                "{slug: a, promotionRank: '2'}",
                f"{ENV}.promotionRank: must be an integer, got a string",
                id="rank-a-string",
            ),
            pytest.param(
                "{slug: a, branchRules: [{kind: exact, value: m}, {kind: regex, value: m}]}",
                f"{ENV}.branchRules.1.kind: must be one of exact, prefix, glob, got 'regex'",
                id="rule-bad-kind",
            ),
            pytest.param(
                "{slug: a, branchRules: [{kind: exact}]}",
                f"{ENV}.branchRules.0.value: required",
                id="rule-no-value",
            ),
            pytest.param(
                "{slug: a, tagRules: [{kind: exact, value: ''}]}",
                f"{ENV}.tagRules.0.value: must not be empty",
                id="rule-empty-value",
            ),
            pytest.param(
                "{slug: a, tagRules: [{kind: exact, value: v, branch: main}]}",
                f"{ENV}.tagRules.0.branch: unknown field (expected one of kind, value, repo)",
                id="rule-unknown-field",
            ),
            pytest.param(
                "{slug: a, tagRules: [main]}",
                f"{ENV}.tagRules.0: must be an object {{kind, value, repo?}}, got a string",
                id="rule-not-an-object",
            ),
            pytest.param(
                "{slug: a, tagRules: main}",
                f"{ENV}.tagRules: must be an array of ref-rules, got a string",
                id="rules-not-a-list",
            ),
            pytest.param(
                "{slug: a, webhookAliases: [prod, 2]}",
                f"{ENV}.webhookAliases.1: must be a string, got a number",
                id="alias-a-number",
            ),
            pytest.param(
                "{slug: a, webhookAliases: prod}",
                f"{ENV}.webhookAliases: must be an array of strings, got a string",
                id="aliases-not-a-list",
            ),
            pytest.param(
                "{slug: a, readiness: {bound: -1, total: 2}}",
                f"{ENV}.readiness.bound: must be at least 0, got -1",
                id="readiness-negative",
            ),
            pytest.param(
                "{slug: a, readiness: {bound: 1, ready: 2}}",
                f"{ENV}.readiness.ready: unknown key (expected one of bound, total)",
                id="readiness-unknown-field",
            ),
            pytest.param(
                "{slug: a, readiness: 3}",
                f"{ENV}.readiness: expected a mapping, got 3",
                id="readiness-a-number",
            ),
            pytest.param(
                "{slug: a, firstSeenAt: yesterday}",
                f'{ENV}.firstSeenAt: expected an ISO 8601 timestamp before 9000, got "yesterday"',
                id="bad-timestamp",
            ),
            pytest.param(
                "{slug: a, lastSeenAt: 5}",
                f"{ENV}.lastSeenAt: expected an ISO 8601 timestamp before 9000, got 5",
                id="timestamp-a-number",
            ),
            pytest.param(
                "{slug: a, isFavourite: 1}",
                f"{ENV}.isFavourite: must be a boolean, got a number",
                id="favourite-a-number",
            ),
            pytest.param(
                "{slug: a, colour: red}",
                f"{ENV}.colour: unknown key (expected one of envId, slug, displayName, "
                "isDefault, promotionRank, branchRules, tagRules, webhookAliases, isFavourite, "
                "firstSeenAt, lastSeenAt, lastDeployedSha, readiness, createdAt, updatedAt)",
                id="unknown-field",
            ),
        ],
    )
    def test_a_bad_environment_is_refused(self, body: str, message: str) -> None:
        assert error_of(environments(body)) == message

    @pytest.mark.parametrize(
        ("first", "second"),
        [("staging", "staging"), ("staging", "' Staging'"), ("STAGING", "' staging '")],
    )
    def test_an_environment_slug_is_unique_after_trimming_and_lowercasing(
        self, first: str, second: str
    ) -> None:
        assert error_of(environments(f"{{slug: {first}}}", f"{{slug: {second}}}")) == (
            f"{PROJECT}.environments.1.slug: slug 'staging' is used twice"
        )

    def test_only_one_environment_may_say_it_is_the_default(self) -> None:
        text = environments("{slug: a, isDefault: true}", "{slug: b}", "{slug: c, isDefault: true}")
        assert error_of(text) == (
            f"{PROJECT}.environments.2.isDefault: "
            "only one environment of a project can be the default"
        )


class TestControlPointErrors:
    @pytest.mark.parametrize(
        ("body", "message"),
        [
            pytest.param("{kind: boolean}", f"{CP}.key: required", id="no-key"),
            pytest.param("{key: b}", f"{CP}.kind: required", id="no-kind"),
            pytest.param(
                "{key: b, kind: bool}",
                f"{CP}.kind: must be one of boolean, string, number, json, got 'bool'",
                id="bad-kind",
            ),
            pytest.param(
                "{key: a, kind: string}", f"{CP}.key: key 'a' is used twice", id="duplicate-key"
            ),
            pytest.param(
                "{key: b, kind: string, controlPointId: b}",
                f"{CP}.controlPointId: expected an id starting with cp_",
                id="id-without-prefix",
            ),
            pytest.param(
                "{key: b, kind: string, status: gone}",
                f"{CP}.status: must be one of active, retired, got 'gone'",
                id="bad-status",
            ),
            pytest.param(
                "{key: b, kind: json, defaultValue: !!set {a: null}}",
                f"{CP}.defaultValue: expected a JSON value, got a set",
                id="default-a-set",
            ),
            pytest.param(
                "{key: b, kind: number, defaultValue: .nan}",
                f"{CP}.defaultValue: expected a finite number (JSON has no nan), got nan",
                id="default-nan",
            ),
            pytest.param(
                "{key: b, kind: number, defaultValue: .inf}",
                f"{CP}.defaultValue: expected a finite number (JSON has no inf), got inf",
                id="default-infinite",
            ),
            pytest.param(
                "{key: b, kind: json, defaultValue: {at: 2026-11-20}}",
                f"{CP}.defaultValue.at: expected a JSON value, got a date",
                id="default-holds-a-date",
            ),
            pytest.param(
                "{key: b, kind: string, owner: me}",
                f"{CP}.owner: unknown key (expected one of controlPointId, key, "
                "repoResourceIdentifier, kind, defaultValue, surfaceId, description, status, "
                "firstSeenSha, lastSeenSha)",
                id="unknown-field",
            ),
        ],
    )
    def test_a_bad_control_point_is_refused(self, body: str, message: str) -> None:
        assert error_of(control_point(body)) == message


class TestEdgeErrors:
    @pytest.mark.parametrize(
        ("body", "message"),
        [
            pytest.param(
                "{fromControlPointId: cp_a, toControlPointId: cp_zz, edgeKind: declared}",
                f"{EDGE}.toControlPointId: no control point 'cp_zz' in this project's "
                "controlPoints",
                id="unknown-to",
            ),
            pytest.param(
                "{fromControlPointId: a, toControlPointId: cp_a, edgeKind: declared}",
                f"{EDGE}.fromControlPointId: no control point 'a' in this project's controlPoints",
                id="a-key-is-not-an-id",
            ),
            pytest.param(
                "{fromControlPointId: cp_a, edgeKind: declared}",
                f"{EDGE}.toControlPointId: required",
                id="no-to",
            ),
            pytest.param(
                "{fromControlPointId: cp_a, toControlPointId: cp_a}",
                f"{EDGE}.edgeKind: required",
                id="no-kind",
            ),
            pytest.param(
                "{fromControlPointId: cp_a, toControlPointId: cp_a, edgeKind: calls}",
                f"{EDGE}.edgeKind: must be one of lexical-nesting, call-graph, co-occurrence, "
                "declared, got 'calls'",
                id="bad-kind",
            ),
            pytest.param(
                "{fromControlPointId: cp_a, toControlPointId: cp_a, edgeKind: declared, "
                "confidence: 1.5}",
                f"{EDGE}.confidence: expected a number from 0 to 1, got 1.5",
                id="confidence-above-one",
            ),
            pytest.param(
                "{fromControlPointId: cp_a, toControlPointId: cp_a, edgeKind: declared, "
                "confidence: -0.1}",
                f"{EDGE}.confidence: expected a number from 0 to 1, got -0.1",
                id="confidence-negative",
            ),
            pytest.param(
                "{fromControlPointId: cp_a, toControlPointId: cp_a, edgeKind: declared, "
                "confidence: .nan}",
                f"{EDGE}.confidence: expected a number from 0 to 1, got nan",
                id="confidence-nan",
            ),
            pytest.param(
                "{fromControlPointId: cp_a, toControlPointId: cp_a, edgeKind: declared, "
                "confidence: high}",
                f'{EDGE}.confidence: expected a number from 0 to 1, got "high"',
                id="confidence-a-string",
            ),
            pytest.param(
                "{fromControlPointId: cp_a, toControlPointId: cp_a, edgeKind: declared, "
                "confidence: true}",
                f"{EDGE}.confidence: expected a number from 0 to 1, got true",
                id="confidence-a-boolean",
            ),
            pytest.param(
                "{fromControlPointId: cp_a, toControlPointId: cp_a, edgeKind: declared, "
                "source: guessed}",
                f"{EDGE}.source: must be one of deterministic, inferred, got 'guessed'",
                id="bad-source",
            ),
            pytest.param(
                "{fromControlPointId: cp_a, toControlPointId: cp_a, edgeKind: declared, "
                "evidence: [checkout.py]}",
                f"{EDGE}.evidence: expected a mapping, got a list",
                id="evidence-a-list",
            ),
            pytest.param(
                "{fromControlPointId: cp_a, toControlPointId: cp_a, edgeKind: declared, "
                "evidence: {at: 2026-11-20}}",
                f"{EDGE}.evidence.at: expected a JSON value, got a date",
                id="evidence-holds-a-date",
            ),
            pytest.param(
                "{fromControlPointId: cp_a, toControlPointId: cp_a, edgeKind: declared, weight: 2}",
                f"{EDGE}.weight: unknown key (expected one of edgeId, fromControlPointId, "
                "toControlPointId, edgeKind, source, confidence, evidence, detectedAtSha)",
                id="unknown-field",
            ),
        ],
    )
    def test_a_bad_edge_is_refused(self, body: str, message: str) -> None:
        assert error_of(edge(body)) == message


class TestIdsAreGlobal:
    @pytest.mark.parametrize(
        ("orgs", "message"),
        [
            pytest.param(
                "{o: {projects: [{projectId: proj_1, name: A, slug: a}, "
                "{projectId: proj_1, name: B, slug: b}]}}",
                "x.yaml: management.orgs.o.projects.1.projectId: id 'proj_1' is already used at "
                "management.orgs.o.projects.0.projectId",
                id="project-id-twice-in-one-org",
            ),
            pytest.param(
                "{o: {projects: [{name: A, slug: a, environments: [{envId: env_1, slug: x}]}, "
                "{name: B, slug: b, environments: [{envId: env_1, slug: y}]}]}}",
                "x.yaml: management.orgs.o.projects.1.environments.0.envId: id 'env_1' is already "
                "used at management.orgs.o.projects.0.environments.0.envId",
                id="env-id-in-two-projects",
            ),
            pytest.param(
                "{o: {projects: [{name: A, slug: a, "
                "controlPoints: [{controlPointId: cp_1, key: k, kind: boolean}]}, "
                "{name: B, slug: b, "
                "controlPoints: [{controlPointId: cp_1, key: k, kind: boolean}]}]}}",
                "x.yaml: management.orgs.o.projects.1.controlPoints.0.controlPointId: id 'cp_1' is "
                "already used at management.orgs.o.projects.0.controlPoints.0.controlPointId",
                id="control-point-id-in-two-projects",
            ),
            pytest.param(
                "{o: {projects: [{projectId: proj_1, name: A, slug: a}]}, "
                "p: {projects: [{projectId: proj_1, name: B, slug: b}]}}",
                "x.yaml: management.orgs.p.projects.0.projectId: id 'proj_1' is already used at "
                "management.orgs.o.projects.0.projectId",
                id="project-id-in-two-orgs",
            ),
            pytest.param(
                "{o: {projects: [{name: A, slug: a, environments: [{envId: env_1, slug: x}]}]}, "
                "p: {projects: [{name: B, slug: b, environments: [{envId: env_1, slug: x}]}]}}",
                "x.yaml: management.orgs.p.projects.0.environments.0.envId: id 'env_1' is already "
                "used at management.orgs.o.projects.0.environments.0.envId",
                id="env-id-in-two-orgs",
            ),
        ],
    )
    def test_one_id_names_one_row(self, orgs: str, message: str) -> None:
        assert error_of(f"management: {{orgs: {orgs}}}") == message

    def test_an_edge_id_names_one_edge(self) -> None:
        text = edge(
            "{edgeId: edge_1, fromControlPointId: cp_a, toControlPointId: cp_a, "
            "edgeKind: declared}, {edgeId: edge_1, fromControlPointId: cp_a, "
            "toControlPointId: cp_a, edgeKind: call-graph}"
        )
        with pytest.raises(
            FixtureError, match=r"^x\.yaml: management\.orgs\.o.*'edge_1' is already used at"
        ):
            parse(text)


class TestValuesJsonCannotCarry:
    """Whatever a seed accepts must be servable: a value that cannot be written back as JSON,
    or a timestamp that cannot be written in UTC, is a fixture error naming its key path, never
    an exception at load time or a 500 later."""

    @pytest.mark.parametrize(
        ("body", "path"),
        [
            pytest.param(
                "{slug: a, promotionRank: 100000000000000000000000}",
                f"{ENV}.promotionRank: ",
                id="promotion-rank",
            ),
            pytest.param(
                "{slug: a, readiness: {bound: 1, total: 100000000000000000000000}}",
                f"{ENV}.readiness.total: ",
                id="readiness",
            ),
        ],
    )
    def test_an_integer_past_64_bits_is_refused(self, body: str, path: str) -> None:
        assert error_of(environments(body)).startswith(path)

    @pytest.mark.parametrize(
        "moment",
        ["9999-12-31T23:59:59-01:00", "'9999-12-31T23:59:59-01:00'", "0001-01-01T00:00:00+01:00"],
    )
    def test_a_timestamp_that_overflows_in_utc_is_refused(self, moment: str) -> None:
        assert error_of(project(f"{{name: N, slug: s, createdAt: {moment}}}")).startswith(
            f"{PROJECT}.createdAt: "
        )


# --------------------------------------------------------------------------------------------
# What a seed accepts, and how it is served.
# --------------------------------------------------------------------------------------------


class TestTimestamps:
    @pytest.mark.parametrize(
        ("written", "read"),
        [
            pytest.param("2026-11-20T10:00:00Z", "2026-11-20T10:00:00.000Z", id="yaml-utc"),
            pytest.param("2026-11-20", "2026-11-20T00:00:00.000Z", id="yaml-date"),
            pytest.param("2026-11-20 12:00:00+02:00", "2026-11-20T10:00:00.000Z", id="yaml-offset"),
            pytest.param(
                "2026-11-20T10:00:00.123456Z", "2026-11-20T10:00:00.123Z", id="yaml-micros"
            ),
            pytest.param("2026-11-20T10:00:00", "2026-11-20T10:00:00.000Z", id="yaml-naive"),
            pytest.param("'2026-11-20T10:00:00.000Z'", "2026-11-20T10:00:00.000Z", id="string"),
            pytest.param(
                "'2026-11-20T12:00:00+02:00'", "2026-11-20T10:00:00.000Z", id="string-offset"
            ),
        ],
    )
    def test_timestamps_are_read_as_utc_iso_strings_with_milliseconds(
        self, written: str, read: str
    ) -> None:
        assert (
            first_environment(environments(f"{{slug: a, lastSeenAt: {written}}}")).last_seen_at
            == read
        )

    async def test_unquoted_yaml_timestamps_are_served_as_iso_strings(
        self, aiohttp_client: AiohttpClient, tmp_path: Path
    ) -> None:
        seed = write(
            tmp_path,
            "t.yaml",
            """
management:
  orgs:
    org_t:
      keys: [{key: svc_org_t}]
      projects:
        - projectId: proj_t
          name: T
          slug: t
          createdAt: 2026-11-01
          updatedAt: 2026-11-02T08:30:00+02:00
          environments:
            - {envId: env_t, slug: t, createdAt: 2026-11-03T00:00:00Z,
               firstSeenAt: 2026-11-19, lastSeenAt: 2026-11-20T10:00:00Z}
""",
        )
        client = await aiohttp_client(create_app(StubConfig(fixture_paths=(seed,))))
        row = (await get(client, "/v1/projects/proj_t", "svc_org_t"))["project"]
        assert (row["createdAt"], row["updatedAt"]) == (
            "2026-11-01T00:00:00.000Z",
            "2026-11-02T06:30:00.000Z",
        )
        env = (await get(client, "/v1/projects/proj_t/environments/env_t", "svc_org_t"))[
            "environment"
        ]
        assert (env["createdAt"], env["updatedAt"]) == (
            "2026-11-03T00:00:00.000Z",
            "2026-11-03T00:00:00.000Z",
        )
        listed = (await get(client, "/v1/projects/proj_t/environments", "svc_org_t"))[
            "environments"
        ][0]
        assert (listed["firstSeenAt"], listed["lastSeenAt"]) == (
            "2026-11-19T00:00:00.000Z",
            "2026-11-20T10:00:00.000Z",
        )


MINIMAL = """
management:
  orgs:
    org_min:
      keys: [{key: svc_org_min}]
      projects:
        - name: Minimal
          slug: minimal
          environments: [{slug: ' Production '}]
          controlPoints:
            - {controlPointId: cp_flag, key: flag, kind: boolean}
            - {controlPointId: cp_child, key: child, kind: string}
          edges:
            - {fromControlPointId: cp_child, toControlPointId: cp_flag, edgeKind: call-graph}
"""


@pytest.fixture
def minimal(tmp_path: Path) -> Path:
    return write(tmp_path, "minimal.yaml", MINIMAL)


async def minimal_rows(client: Client) -> dict[str, Any]:
    """Every row of the minimal seed's one project, as served."""
    key = "svc_org_min"
    [item] = (await get(client, "/v1/projects", key))["projects"]
    base = f"/v1/projects/{item['projectId']}"
    environments = await get(client, f"{base}/environments", key)
    [listed] = environments["environments"]
    env_id = (await snapshot(client))["orgs"]["org_min"]["projects"][0]["environments"][0]["envId"]
    graph = (await get(client, f"{base}/control-points/graph", key))["data"]
    return {
        "project": (await get(client, base, key))["project"],
        "default": environments["defaultEnvironment"],
        "listed": listed,
        "environment": (await get(client, f"{base}/environments/{env_id}", key))["environment"],
        "controlPoints": (await get(client, f"{base}/control-points", key))["data"][
            "controlPoints"
        ],
        "edges": graph["edges"],
    }


class TestLeftOutFields:
    async def test_fields_left_out_are_served_as_the_specs_empty_values(
        self, aiohttp_client: AiohttpClient, minimal: Path
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(fixture_paths=(minimal,))))
        rows = await minimal_rows(client)
        project = rows["project"]
        seeded_at = project["createdAt"]
        assert TIMESTAMP.fullmatch(seeded_at)
        assert project == {
            "projectId": project["projectId"],
            "name": "Minimal",
            "slug": "minimal",
            "description": None,
            "status": "active",
            "createdAt": seeded_at,
            "updatedAt": seeded_at,
        }
        assert rows["default"] == "production"
        assert rows["environment"] == {
            "envId": rows["environment"]["envId"],
            "projectId": project["projectId"],
            "environmentName": "production",
            "slug": "production",
            "displayName": "production",
            "promotionRank": 0,
            "isDefault": True,
            "branchRules": [],
            "tagRules": [],
            "webhookAliases": [],
            "createdAt": seeded_at,
            "updatedAt": seeded_at,
        }
        assert rows["listed"] == {
            "environmentName": "production",
            "slug": "production",
            "displayName": "production",
            "promotionRank": 0,
            "isDefault": True,
            "isFavourite": False,
            "synthesised": False,
            "branchRules": [],
            "tagRules": [],
            "readiness": {"bound": 0, "total": 0},
            "firstSeenAt": None,
            "lastSeenAt": None,
            "lastDeployedSha": None,
        }
        assert rows["controlPoints"][0] == {
            "controlPointId": "cp_flag",
            "projectId": project["projectId"],
            "key": "flag",
            "repoResourceIdentifier": None,
            "kind": "boolean",
            "defaultValue": None,
            "surfaceId": None,
            "description": None,
            "status": "active",
            "firstSeenSha": None,
            "lastSeenSha": None,
        }
        assert rows["edges"] == [
            {
                "edgeId": rows["edges"][0]["edgeId"],
                "fromControlPointId": "cp_child",
                "toControlPointId": "cp_flag",
                "edgeKind": "call-graph",
                "source": "deterministic",
                "confidence": 1,
                "evidence": {},
                "detectedAtSha": None,
            }
        ]

    def test_a_key_without_a_user_id_speaks_for_the_organisations_principal(self) -> None:
        [principal] = seed_of(org("{keys: [{key: svc_org_a}]}")).orgs["o"].principals
        assert (principal.user_id, principal.scope, principal.org_id) == (
            "svc_principal_o",
            "org:management",
            "o",
        )

    @pytest.mark.parametrize("body", ["", "null", "{}", "{keys: [], sessions: [], projects: []}"])
    def test_an_empty_organisation_is_fine(self, body: str) -> None:
        seeded = seed_of(org(body)).orgs["o"]
        assert (seeded.org_id, seeded.principals, seeded.projects) == ("o", (), ())


class TestEnvironmentSlugs:
    @pytest.mark.parametrize("slug", ["' Staging '", "STAGING", "staging"])
    def test_slugs_are_trimmed_and_lowercased(self, slug: str) -> None:
        env = first_environment(environments(f"{{slug: {slug}}}"))
        assert env.slug == "staging"
        assert env.display_name is None  # served as the slug

    def test_the_derived_id_follows_the_normalised_slug(self) -> None:
        ids = {first_environment(environments(f"{{slug: {s}}}")).env_id for s in ("a", "' A '")}
        assert len(ids) == 1


class TestDerivedIds:
    async def test_rows_without_ids_get_prefixed_ids_stable_across_apps_and_resets(
        self, aiohttp_client: AiohttpClient, minimal: Path
    ) -> None:
        first = await aiohttp_client(create_app(StubConfig(fixture_paths=(minimal,))))
        second = await aiohttp_client(create_app(StubConfig(fixture_paths=(minimal,))))
        rows = await minimal_rows(first)
        ids = {
            "proj_": rows["project"]["projectId"],
            "env_": rows["environment"]["envId"],
            "edge_": rows["edges"][0]["edgeId"],
        }
        for prefix, row_id in ids.items():
            assert ID.fullmatch(row_id)
            assert row_id.startswith(prefix)

        def ids_of(rows: dict[str, Any]) -> list[str]:
            return [
                rows["project"]["projectId"],
                rows["environment"]["envId"],
                rows["edges"][0]["edgeId"],
            ]

        assert ids_of(await minimal_rows(second)) == ids_of(rows)
        assert (await first.post("/_test/reset")).status == 200
        assert ids_of(await minimal_rows(first)) == ids_of(rows)

    def test_a_control_point_without_an_id_gets_a_cp_id(self) -> None:
        seed = seed_of(project("{name: N, slug: s, controlPoints: [{key: a, kind: boolean}]}"))
        [point] = seed.orgs["o"].projects[0].control_points
        assert ID.fullmatch(point.control_point_id)
        assert point.control_point_id.startswith("cp_")

    def test_explicit_ids_are_kept(self) -> None:
        seed = seed_of(SEED.read_text())
        checkout = seed.orgs["org_acme"].projects[0]
        assert checkout.project_id == "proj_checkout"
        assert [e.env_id for e in checkout.environments] == [
            "env_production",
            "env_staging",
            "env_preview",
        ]
        assert [e.edge_id for e in checkout.edges] == ["edge_01"]

    def test_the_same_slugs_in_two_organisations_get_different_ids(self) -> None:
        body = (
            "{projects: [{name: A, slug: a, environments: [{slug: x}], "
            "controlPoints: [{key: k, kind: json}]}]}"
        )
        seed = seed_of(f"management: {{orgs: {{o: {body}, p: {body}}}}}")
        o, p = (seed.orgs[name].projects[0] for name in ("o", "p"))
        assert o.project_id != p.project_id
        assert o.environments[0].env_id != p.environments[0].env_id
        assert o.control_points[0].control_point_id != p.control_points[0].control_point_id


class TestDefaultEnvironment:
    @pytest.mark.parametrize(
        ("bodies", "defaults", "listed_default"),
        [
            pytest.param(("{slug: prod}", "{slug: dev}"), ["prod"], "prod", id="first-by-default"),
            pytest.param(
                ("{slug: prod}", "{slug: dev, isDefault: true}"), ["dev"], "dev", id="explicit"
            ),
            pytest.param(
                ("{slug: prod, isDefault: false}", "{slug: dev, isDefault: false}"),
                [],
                "dev",  # none is the default: the list's first row is named
                id="explicitly-none",
            ),
        ],
    )
    async def test_the_first_environment_is_the_default_unless_one_says_otherwise(
        self,
        aiohttp_client: AiohttpClient,
        tmp_path: Path,
        bodies: tuple[str, ...],
        defaults: list[str],
        listed_default: str,
    ) -> None:
        text = org(
            "{keys: [{key: svc_org_o}], projects: [{projectId: proj_p, name: N, slug: s, "
            f"environments: [{', '.join(bodies)}]}}]}}"
        )
        seed = write(tmp_path, "d.yaml", text)
        client = await aiohttp_client(create_app(StubConfig(fixture_paths=(seed,))))
        body = await get(client, "/v1/projects/proj_p/environments", "svc_org_o")
        assert [e["slug"] for e in body["environments"] if e["isDefault"]] == defaults
        assert body["defaultEnvironment"] == listed_default


class TestWithoutASection:
    @pytest.mark.parametrize("text", ["flags: {}", "vendor: {}", "keys: {}"])
    def test_a_document_without_a_management_section_says_nothing_about_the_plane(
        self, text: str
    ) -> None:
        fixtures = parse(text)
        assert fixtures.management is None
        assert fixtures.management_seed is DEFAULT_SEED

    async def test_the_default_organisation_and_its_key_work(self, client: Client) -> None:
        assert await get(client, "/v1/whoami", "svc_org_default") == {
            "userId": "svc_principal_default",
            "orgId": "org_default",
            "scope": "org:management",
        }
        assert await get(client, "/v1/projects", "svc_org_default") == {"projects": []}


# --------------------------------------------------------------------------------------------
# Loading: several files, and the command line.
# --------------------------------------------------------------------------------------------


class TestSeveralFiles:
    def test_a_later_file_replaces_an_organisation_whole_and_adds_new_ones(
        self, tmp_path: Path
    ) -> None:
        earlier = write(
            tmp_path,
            "a.yaml",
            "management: {orgs: {"
            "org_a: {keys: [{key: svc_org_a}], projects: [{name: A, slug: a}]}, "
            "org_shared: {keys: [{key: svc_org_old}], sessions: [{token: t_old, userId: u}], "
            "projects: [{projectId: proj_shared, name: Old, slug: old}, {name: Gone, slug: gone}]}"
            "}}",
        )
        later = write(
            tmp_path,
            "b.yaml",
            "management: {orgs: {"
            "org_shared: {keys: [{key: svc_org_new}], "
            "projects: [{projectId: proj_shared, name: New, slug: new}]}, "
            "org_b: {keys: [{key: svc_org_b}]}"
            "}}",
        )
        seed = load_fixture_paths([earlier, later]).management_seed
        assert list(seed.orgs) == ["org_a", "org_shared", "org_b"]
        shared = seed.orgs["org_shared"]
        assert [p.token for p in shared.principals] == ["svc_org_new"]
        assert [(p.project_id, p.name) for p in shared.projects] == [("proj_shared", "New")]
        assert seed.orgs["org_a"] == seed_of(earlier.read_text()).orgs["org_a"]
        assert [p.token for p in seed.orgs["org_b"].principals] == ["svc_org_b"]

    def test_a_later_file_without_a_section_leaves_the_seed_alone(self, tmp_path: Path) -> None:
        earlier = write(tmp_path, "a.yaml", org("{keys: [{key: svc_org_a}]}"))
        later = write(tmp_path, "b.yaml", "flags: {}")
        assert load_fixture_paths([earlier, later]).management == seed_of(earlier.read_text())
        assert load_fixture_paths([later]).management_seed is DEFAULT_SEED

    @pytest.mark.parametrize(
        ("earlier", "later"),
        [
            pytest.param(
                "{org_a: {keys: [{key: svc_org_same}]}}",
                "{org_b: {keys: [{key: svc_org_same}]}}",
                id="same-key",
            ),
            pytest.param(
                "{org_a: {projects: [{projectId: proj_same, name: A, slug: a}]}}",
                "{org_b: {projects: [{projectId: proj_same, name: B, slug: b}]}}",
                id="same-project-id",
            ),
        ],
    )
    def test_tokens_and_ids_stay_global_across_files(
        self, tmp_path: Path, earlier: str, later: str
    ) -> None:
        first = write(tmp_path, "a.yaml", f"management: {{orgs: {earlier}}}")
        second = write(tmp_path, "b.yaml", f"management: {{orgs: {later}}}")
        with pytest.raises(FixtureError) as info:
            load_fixture_paths([first, second])
        assert str(info.value).startswith(f"{second}: management.orgs.org_b")
        assert "is already used at management.orgs.org_a." in str(info.value)


class TestCommandLine:
    def test_a_bad_management_section_is_one_line_naming_the_file_and_key_path(
        self, tmp_path: Path
    ) -> None:
        bad = write(tmp_path, "bad.yaml", environments("{slug: staging}", "{slug: ' Staging'}"))
        said = one_line(run_stub("--port", "0", "--fixtures", str(bad)))
        assert said == (
            f"svc-stub: error: {bad}: management.orgs.o.projects.0.environments.1.slug: "
            "slug 'staging' is used twice"
        )

    def test_a_timestamp_that_overflows_in_utc_is_one_line_not_a_traceback(
        self, tmp_path: Path
    ) -> None:
        bad = write(
            tmp_path,
            "bad.yaml",
            project("{name: N, slug: s, createdAt: 9999-12-31T23:59:59-01:00}"),
        )
        said = one_line(run_stub("--port", "0", "--fixtures", str(bad)))
        assert said.startswith(f"svc-stub: error: {bad}: management.orgs.o.projects.0.createdAt: ")


# --------------------------------------------------------------------------------------------
# The test-control routes: re-seeding, reading back, overlaying and resetting the plane.
# --------------------------------------------------------------------------------------------


@pytest.fixture
async def seeded(aiohttp_client: AiohttpClient) -> Client:
    """The stub in process, started with tests/fixtures/management.yaml."""
    return await aiohttp_client(create_app(StubConfig(fixture_paths=(SEED,))))


NEW_ORG = {
    "org_new": {
        "keys": [{"key": "svc_org_new"}],
        "sessions": [{"token": "cli_new", "userId": "user_new"}],
        "projects": [{"projectId": "proj_new", "name": "New", "slug": "new"}],
    }
}
NEW_ORG_YAML = """
orgs:
  org_new:
    keys: [{key: svc_org_new}]
    sessions: [{token: cli_new, userId: user_new}]
    projects:
      - {projectId: proj_new, name: New, slug: new, createdAt: 2026-11-20T10:00:00Z}
"""


async def whoami(client: Client, key: str) -> tuple[int, Any]:
    return await control(client, "GET", "/v1/whoami", headers={"Authorization": f"Bearer {key}"})


async def create_project(client: Client, slug: str) -> str:
    status, body = await control(
        client,
        "POST",
        "/v1/projects",
        json={"name": slug, "slug": slug},
        headers={"Authorization": f"Bearer {ADMIN}"},
    )
    assert status == 201, body
    project_id: str = body["project"]["projectId"]
    return project_id


def slugs(state: Any, org_id: str) -> list[str]:
    return [p["slug"] for p in state["orgs"][org_id]["projects"]]


class TestSeedRoute:
    @pytest.mark.parametrize(
        "request_body",
        [
            pytest.param({"json": {"orgs": NEW_ORG}}, id="json"),
            pytest.param(
                {"data": NEW_ORG_YAML, "headers": {"Content-Type": "application/yaml"}}, id="yaml"
            ),
        ],
    )
    async def test_a_seed_replaces_the_plane_and_answers_its_snapshot(
        self, seeded: Client, request_body: dict[str, Any]
    ) -> None:
        status, answer = await control(seeded, "POST", "/_test/management", **request_body)
        assert status == 200, answer
        assert answer == await snapshot(seeded)
        assert list(answer["orgs"]) == ["org_new"]
        assert answer["orgs"]["org_new"]["principals"] == [
            {"userId": "svc_principal_org_new", "scope": "org:management"},
            {"userId": "user_new", "scope": "cli"},
        ]
        assert slugs(answer, "org_new") == ["new"]
        assert (await whoami(seeded, "svc_org_new"))[1]["orgId"] == "org_new"
        assert (await whoami(seeded, "cli_new"))[1]["scope"] == "cli"
        assert (await whoami(seeded, ADMIN))[0] == 401

    async def test_a_yaml_seed_may_use_unquoted_timestamps(self, seeded: Client) -> None:
        headers = {"Content-Type": "application/yaml"}
        status, answer = await control(
            seeded, "POST", "/_test/management", data=NEW_ORG_YAML, headers=headers
        )
        assert status == 200, answer
        new = answer["orgs"]["org_new"]["projects"][0]
        assert (new["createdAt"], new["updatedAt"]) == ("2026-11-20T10:00:00.000Z",) * 2

    @pytest.mark.parametrize(
        ("path", "request_body", "message"),
        [
            pytest.param(
                "/_test/management",
                {"json": {"orgs": {"org_new": {"keys": [{"scope": "org:ci-read"}]}}}},
                "body: orgs.org_new.keys.0.key: required",
                id="management-json",
            ),
            pytest.param(
                "/_test/management",
                {
                    "data": "orgs: {o: {projects: [{name: N, slug: s, createdAt: yesterday}]}}",
                    "headers": {"Content-Type": "application/yaml"},
                },
                "body: orgs.o.projects.0.createdAt: "
                'expected an ISO 8601 timestamp before 9000, got "yesterday"',
                id="management-yaml",
            ),
            pytest.param(
                "/_test/management",
                {
                    "json": {
                        "orgs": {
                            "o": {"keys": [{"key": "svc_org_x"}]},
                            "p": {"keys": [{"key": "svc_org_x"}]},
                        }
                    }
                },
                "body: orgs.p.keys.0.key: this key is already used at orgs.o.keys.0.key",
                id="management-token-twice",
            ),
            pytest.param(
                "/_test/fixtures",
                {
                    "json": {
                        "flags": {},
                        "management": {"orgs": {"o": {"sessions": [{"token": "t"}]}}},
                    }
                },
                "body: management.orgs.o.sessions.0.userId: required",
                id="fixtures",
            ),
            pytest.param(
                "/_test/fixtures?merge=true",
                {
                    "json": {
                        "management": {
                            "orgs": {
                                "o": {"projects": [{"name": "N", "slug": "s", "status": "gone"}]}
                            }
                        }
                    }
                },
                "body: management.orgs.o.projects.0.status: must be one of active, archived, "
                "got 'gone'",
                id="fixtures-merge",
            ),
        ],
    )
    async def test_a_bad_seed_is_a_400_naming_the_key_path_and_changes_nothing(
        self, seeded: Client, path: str, request_body: dict[str, Any], message: str
    ) -> None:
        created = await create_project(seeded, "mobile")
        before = await snapshot(seeded)
        assert await control(seeded, "POST", path, **request_body) == (400, refused(message))
        assert await snapshot(seeded) == before
        assert created in repr(before)

    async def test_the_snapshot_never_shows_a_key_or_session_token(self, seeded: Client) -> None:
        seeded_state = await snapshot(seeded)
        status, answered = await control(
            seeded, "POST", "/_test/management", json={"orgs": NEW_ORG}
        )
        assert status == 200
        for state in (seeded_state, answered, await snapshot(seeded)):
            for token in (*SEEDED_TOKENS, "svc_org_new", "cli_new"):
                assert token not in repr(state)
            for org_state in state["orgs"].values():
                for principal in org_state["principals"]:
                    assert set(principal) == {"userId", "scope"}


class TestFixturesRoute:
    async def test_a_management_section_re_seeds_the_plane(self, seeded: Client) -> None:
        await create_project(seeded, "mobile")
        status, answer = await control(
            seeded, "POST", "/_test/fixtures", json={"management": {"orgs": NEW_ORG}}
        )
        assert (status, answer) == (200, {"ok": True, "flags": []})
        state = await snapshot(seeded)
        assert list(state["orgs"]) == ["org_new"]
        assert slugs(state, "org_new") == ["new"]

    async def test_without_a_management_section_the_plane_is_left_alone(
        self, seeded: Client
    ) -> None:
        created = await create_project(seeded, "mobile")
        before = await snapshot(seeded)
        flags = {"flags": {"f": {"type": "boolean", "value": True}}}
        for query in ("", "?merge=true"):
            status, answer = await control(seeded, "POST", f"/_test/fixtures{query}", json=flags)
            assert (status, answer) == (200, {"ok": True, "flags": ["f"]})
            assert await snapshot(seeded) == before
        assert slugs(before, "org_acme") == ["checkout", "billing", "mobile"]
        assert created in repr(before)

    async def test_merge_overlays_the_plane_per_organisation(self, seeded: Client) -> None:
        before = await snapshot(seeded)
        overlay = {
            "org_globex": {"keys": [{"key": "svc_org_globex_new"}]},
            **NEW_ORG,
        }
        status, _ = await control(
            seeded, "POST", "/_test/fixtures?merge=true", json={"management": {"orgs": overlay}}
        )
        assert status == 200
        state = await snapshot(seeded)
        assert list(state["orgs"]) == ["org_acme", "org_globex", "org_new"]
        assert state["orgs"]["org_acme"] == before["orgs"]["org_acme"]
        assert state["orgs"]["org_globex"] == {
            "principals": [{"userId": "svc_principal_org_globex", "scope": "org:management"}],
            "projects": [],
        }
        assert slugs(state, "org_new") == ["new"]
        assert (await whoami(seeded, "svc_org_globex_admin"))[0] == 401
        assert (await whoami(seeded, "svc_org_globex_new"))[1]["orgId"] == "org_globex"
        assert (await whoami(seeded, ADMIN))[1]["orgId"] == "org_acme"

    @pytest.mark.parametrize(
        "overlay",
        [
            pytest.param({"org_new": {"keys": [{"key": ADMIN}]}}, id="another-orgs-key"),
            pytest.param(
                {
                    "org_new": {
                        "projects": [{"projectId": "proj_checkout", "name": "X", "slug": "x"}]
                    }
                },
                id="another-orgs-project-id",
            ),
        ],
    )
    async def test_a_merge_may_not_reuse_another_organisations_token_or_id(
        self, seeded: Client, overlay: dict[str, Any]
    ) -> None:
        before = await snapshot(seeded)
        status, answer = await control(
            seeded, "POST", "/_test/fixtures?merge=true", json={"management": {"orgs": overlay}}
        )
        assert status == 400, answer
        assert answer["error"] == "INVALID_FIXTURES"
        assert answer["message"].startswith("body: management.orgs.org_new")
        assert await snapshot(seeded) == before
        assert (await whoami(seeded, ADMIN))[1]["orgId"] == "org_acme"


async def seed_json(client: Client) -> None:
    status, _ = await control(client, "POST", "/_test/management", json={"orgs": NEW_ORG})
    assert status == 200


async def seed_yaml(client: Client) -> None:
    headers = {"Content-Type": "application/yaml"}
    status, _ = await control(
        client, "POST", "/_test/management", data=NEW_ORG_YAML, headers=headers
    )
    assert status == 200


async def fixtures_with_section(client: Client) -> None:
    body = {"management": {"orgs": NEW_ORG}}
    assert (await control(client, "POST", "/_test/fixtures", json=body))[0] == 200


async def fixtures_merged(client: Client) -> None:
    body = {"management": {"orgs": {**NEW_ORG, "org_globex": {}}}}
    assert (await control(client, "POST", "/_test/fixtures?merge=true", json=body))[0] == 200


async def fixtures_without_section(client: Client) -> None:
    await create_project(client, "mobile")
    body = {"flags": {"f": {"type": "boolean", "value": True}}}
    assert (await control(client, "POST", "/_test/fixtures", json=body))[0] == 200


async def edits(client: Client) -> None:
    await create_project(client, "mobile")
    headers = {"Authorization": f"Bearer {ADMIN}"}
    path = "/v1/projects/proj_checkout/environments/env_staging"
    assert (await control(client, "PATCH", path, json={"isDefault": True}, headers=headers))[
        0
    ] == 200
    assert (await control(client, "DELETE", "/v1/projects/proj_checkout", headers=headers))[
        0
    ] == 200


Change = Callable[[Client], Awaitable[None]]


class TestReset:
    @pytest.mark.parametrize(
        "change",
        [
            seed_json,
            seed_yaml,
            fixtures_with_section,
            fixtures_merged,
            fixtures_without_section,
            edits,
        ],
    )
    async def test_reset_restores_the_start_up_seed_exactly(
        self, seeded: Client, change: Change
    ) -> None:
        start = await snapshot(seeded)
        await change(seeded)
        assert await snapshot(seeded) != start
        assert (await seeded.post("/_test/reset")).status == 200
        assert await snapshot(seeded) == start
        assert (await whoami(seeded, ADMIN))[1]["orgId"] == "org_acme"
        assert (await whoami(seeded, "svc_org_new"))[0] == 401
