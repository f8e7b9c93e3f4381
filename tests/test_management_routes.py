"""The management plane in process: every route and rule of the spec's table, with exact bodies."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from conftest import AiohttpClient
from stub import StubConfig, create_app

SEED = Path(__file__).parent / "fixtures" / "management.yaml"
ADMIN = "svc_org_acme_admin"
CI = "svc_org_acme_ci"
SESSION = "svc_cli_alice"
GLOBEX = "svc_org_globex_admin"
CHECKOUT = "/v1/projects/proj_checkout"
ID = re.compile(r"(proj|env)_[0-9A-HJKMNP-TV-Z]{26}")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")

Client = TestClient[Any, Any]


@pytest.fixture
async def mgmt(aiohttp_client: AiohttpClient) -> Client:
    """The stub in process, seeded with tests/fixtures/management.yaml."""
    return await aiohttp_client(create_app(StubConfig(fixture_paths=(SEED,))))


async def call(
    client: Client, method: str, path: str, body: object = None, *, key: str | None = ADMIN
) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
    response = await client.request(method, path, json=body, headers=headers)
    assert response.content_type == "application/json", await response.text()
    return response.status, await response.json()


async def ok(
    client: Client, method: str, path: str, body: object = None, *, key: str = ADMIN
) -> Any:
    status, answer = await call(client, method, path, body, key=key)
    assert status in (200, 201), answer
    return answer


def error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


async def create_project(client: Client, slug: str = "mobile", **extra: Any) -> dict[str, Any]:
    status, body = await call(
        client, "POST", "/v1/projects", {"name": "Mobile", "slug": slug, **extra}
    )
    assert status == 201, body
    project: dict[str, Any] = body["project"]
    return project


async def create_environment(
    client: Client, project_id: str, slug: str, **extra: Any
) -> dict[str, Any]:
    path = f"/v1/projects/{project_id}/environments"
    status, body = await call(client, "POST", path, {"slug": slug, "displayName": slug, **extra})
    assert status == 201, body
    environment: dict[str, Any] = body["environment"]
    return environment


class TestWhoami:
    @pytest.mark.parametrize(
        ("key", "expected"),
        [
            (
                ADMIN,
                {"userId": "svc_principal_acme", "orgId": "org_acme", "scope": "org:management"},
            ),
            (CI, {"userId": "svc_principal_acme_ci", "orgId": "org_acme", "scope": "org:ci-read"}),
            (SESSION, {"userId": "user_alice", "orgId": "org_acme", "scope": "cli"}),
            (
                GLOBEX,
                {
                    "userId": "svc_principal_org_globex",
                    "orgId": "org_globex",
                    "scope": "org:management",
                },
            ),
        ],
    )
    async def test_whoami_is_the_bare_session_of_the_token(
        self, mgmt: Client, key: str, expected: dict[str, str]
    ) -> None:
        assert await ok(mgmt, "GET", "/v1/whoami", key=key) == expected

    async def test_the_default_organisation_works_without_a_management_section(
        self, client: Client
    ) -> None:
        body = await ok(client, "GET", "/v1/whoami", key="svc_org_default")
        assert body == {
            "userId": "svc_principal_default",
            "orgId": "org_default",
            "scope": "org:management",
        }
        assert await ok(client, "GET", "/v1/projects", key="svc_org_default") == {"projects": []}


class TestProjects:
    async def test_list_items_carry_only_the_five_list_fields(self, mgmt: Client) -> None:
        body = await ok(mgmt, "GET", "/v1/projects")
        assert [p["slug"] for p in body["projects"]] == ["checkout", "billing"]
        for item in body["projects"]:
            assert set(item) == {"projectId", "name", "slug", "createdAt", "updatedAt"}

    async def test_create_answers_201_with_the_full_row(self, mgmt: Client) -> None:
        project = await create_project(mgmt, description="Apps")
        assert set(project) == {
            "projectId",
            "name",
            "slug",
            "description",
            "status",
            "createdAt",
            "updatedAt",
        }
        assert ID.fullmatch(project["projectId"])
        assert project["projectId"].startswith("proj_")
        assert (project["name"], project["slug"], project["description"]) == (
            "Mobile",
            "mobile",
            "Apps",
        )
        assert project["status"] == "active"
        assert TIMESTAMP.fullmatch(project["createdAt"])
        assert project["createdAt"] == project["updatedAt"]

    async def test_a_created_project_reads_back_exactly_as_created(self, mgmt: Client) -> None:
        created = await create_project(mgmt)
        read = await ok(mgmt, "GET", f"/v1/projects/{created['projectId']}")
        assert read == {"project": created}

    async def test_description_left_out_reads_null_and_empty_stays_empty(
        self, mgmt: Client
    ) -> None:
        absent = await create_project(mgmt, "a")
        empty = await create_project(mgmt, "b", description="")
        assert absent["description"] is None
        assert empty["description"] == ""
        read = await ok(mgmt, "GET", f"/v1/projects/{empty['projectId']}")
        assert read["project"]["description"] == ""

    async def test_a_slug_used_in_the_organisation_is_a_409(self, mgmt: Client) -> None:
        status, body = await call(mgmt, "POST", "/v1/projects", {"name": "X", "slug": "checkout"})
        assert (status, body) == (409, error("CONFLICT", "a project with this slug already exists"))

    async def test_the_same_slug_in_another_organisation_is_fine(self, mgmt: Client) -> None:
        await create_project(mgmt, "mobile")
        status, _ = await call(
            mgmt, "POST", "/v1/projects", {"name": "M", "slug": "mobile"}, key=GLOBEX
        )
        assert status == 201

    @pytest.mark.parametrize(
        ("body", "message"),
        [
            ({"slug": "x"}, "name: required"),
            ({"name": "X"}, "slug: required"),
            ({"name": "X", "slug": 5}, "slug: must be a string, got a number"),
            ({"name": "", "slug": "x"}, "name: must not be empty"),
            (
                {"name": "X", "slug": "x", "description": 3},
                "description: must be a string, got a number",
            ),
            (
                {"name": "X", "slug": "x", "status": "archived"},
                "status: unknown field (expected one of name, slug, description)",
            ),
            ([], "body: expected a JSON object, got an array"),
        ],
    )
    async def test_a_bad_create_body_is_a_400_naming_the_field_and_changes_nothing(
        self, mgmt: Client, body: object, message: str
    ) -> None:
        before = await ok(mgmt, "GET", "/v1/projects")
        assert await call(mgmt, "POST", "/v1/projects", body) == (400, error("VALIDATION", message))
        assert await ok(mgmt, "GET", "/v1/projects") == before

    async def test_a_body_that_is_not_json_is_a_validation_error(self, mgmt: Client) -> None:
        response = await mgmt.post(
            "/v1/projects", data=b"{nope", headers={"Authorization": f"Bearer {ADMIN}"}
        )
        body = await response.json()
        assert response.status == 400
        assert body["error"]["code"] == "VALIDATION"
        assert body["error"]["message"].startswith("body: not valid JSON")

    async def test_get_of_another_organisations_project_is_404_never_403(
        self, mgmt: Client
    ) -> None:
        expected = (404, error("NOT_FOUND", "Project not found"))
        assert await call(mgmt, "GET", "/v1/projects/proj_globex") == expected
        assert await call(mgmt, "GET", "/v1/projects/proj_nothing") == expected
        assert await call(mgmt, "PATCH", "/v1/projects/proj_globex", {"name": "X"}) == expected
        assert await call(mgmt, "DELETE", "/v1/projects/proj_globex") == expected
        assert (await ok(mgmt, "GET", "/v1/projects/proj_globex", key=GLOBEX))["project"][
            "name"
        ] == ("Globex checkout")

    async def test_patch_changes_name_description_and_status_and_moves_updated_at(
        self, mgmt: Client
    ) -> None:
        created = await create_project(mgmt)
        path = f"/v1/projects/{created['projectId']}"
        body = await ok(
            mgmt, "PATCH", path, {"name": "Apps", "description": None, "status": "archived"}
        )
        project = body["project"]
        assert (project["name"], project["description"], project["status"]) == (
            "Apps",
            None,
            "archived",
        )
        assert project["createdAt"] == created["createdAt"]
        assert project["updatedAt"] > created["updatedAt"]
        assert await ok(mgmt, "GET", path) == body

    @pytest.mark.parametrize(
        ("body", "message"),
        [
            ({"slug": "other"}, "slug: not writable after create"),
            ({"status": "deleted"}, "status: must be one of active, archived, got 'deleted'"),
            ({"name": None}, "name: must be a string, got null"),
            ({"owner": "x"}, "owner: unknown field (expected one of name, description, status)"),
        ],
    )
    async def test_a_bad_patch_is_a_400_and_changes_nothing(
        self, mgmt: Client, body: object, message: str
    ) -> None:
        before = await ok(mgmt, "GET", CHECKOUT)
        assert await call(mgmt, "PATCH", CHECKOUT, body) == (400, error("VALIDATION", message))
        assert await ok(mgmt, "GET", CHECKOUT) == before

    async def test_delete_removes_the_project_with_its_environments_and_control_points(
        self, mgmt: Client
    ) -> None:
        assert await ok(mgmt, "DELETE", CHECKOUT) == {"deleted": True, "projectId": "proj_checkout"}
        assert (await call(mgmt, "GET", CHECKOUT))[0] == 404
        assert (await call(mgmt, "GET", f"{CHECKOUT}/environments/env_staging"))[0] == 404
        points = await ok(mgmt, "GET", f"{CHECKOUT}/control-points")
        assert points == {"success": True, "data": {"controlPoints": []}}
        assert (await call(mgmt, "DELETE", CHECKOUT))[0] == 404

    async def test_no_organisation_id_appears_in_any_row(self, mgmt: Client) -> None:
        created = await create_project(mgmt)
        env = await create_environment(mgmt, created["projectId"], "dev")
        answers = [
            await ok(mgmt, "GET", "/v1/projects"),
            await ok(mgmt, "GET", CHECKOUT),
            await ok(mgmt, "GET", f"{CHECKOUT}/environments"),
            await ok(mgmt, "GET", f"{CHECKOUT}/control-points/graph"),
            env,
        ]
        assert "org_acme" not in repr(answers)
        assert "orgId" not in repr(answers)


class TestEnvironments:
    async def test_a_project_without_environments_lists_the_synthesised_production_row(
        self, mgmt: Client
    ) -> None:
        project = await create_project(mgmt)
        body = await ok(mgmt, "GET", f"/v1/projects/{project['projectId']}/environments")
        assert body == {
            "defaultEnvironment": "production",
            "environments": [
                {
                    "environmentName": "production",
                    "slug": "production",
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
            ],
        }

    async def test_list_rows_are_the_list_shape_in_the_spec_order(self, mgmt: Client) -> None:
        body = await ok(mgmt, "GET", f"{CHECKOUT}/environments")
        # favourite first, then last seen, then promotion rank
        assert [e["slug"] for e in body["environments"]] == ["preview", "production", "staging"]
        assert body["defaultEnvironment"] == "production"
        production = body["environments"][1]
        assert production == {
            "environmentName": "production",
            "slug": "production",
            "displayName": "Production",
            "promotionRank": 2,
            "isDefault": True,
            "isFavourite": False,
            "synthesised": False,
            "branchRules": [{"kind": "exact", "value": "main"}],
            "tagRules": [],
            "readiness": {"bound": 3, "total": 4},
            "firstSeenAt": None,
            "lastSeenAt": "2026-11-20T10:00:00.000Z",
            "lastDeployedSha": "abc123",
        }

    async def test_never_seen_environments_order_by_rank_then_slug(self, mgmt: Client) -> None:
        project = await create_project(mgmt)
        for slug in ("b", "a", "c"):
            await create_environment(mgmt, project["projectId"], slug)
        body = await ok(mgmt, "GET", f"/v1/projects/{project['projectId']}/environments")
        assert [e["slug"] for e in body["environments"]] == ["a", "b", "c"]

    async def test_create_answers_the_management_row(self, mgmt: Client) -> None:
        project = await create_project(mgmt)
        rules = [
            {"kind": "exact", "value": "main"},
            {"kind": "glob", "value": "r/*", "repo": "acme/app"},
        ]
        env = await create_environment(
            mgmt, project["projectId"], "  QA ", branchRules=rules, webhookAliases=["qa"]
        )
        assert set(env) == {
            "envId",
            "projectId",
            "environmentName",
            "slug",
            "displayName",
            "promotionRank",
            "isDefault",
            "branchRules",
            "tagRules",
            "webhookAliases",
            "createdAt",
            "updatedAt",
        }
        assert ID.fullmatch(env["envId"])
        assert env["envId"].startswith("env_")
        assert (env["slug"], env["environmentName"], env["projectId"]) == (
            "qa",
            "qa",
            project["projectId"],
        )
        assert env["promotionRank"] == 0
        assert isinstance(env["promotionRank"], int)
        assert env["branchRules"] == rules
        assert env["tagRules"] == []
        assert env["webhookAliases"] == ["qa"]
        read = await ok(
            mgmt, "GET", f"/v1/projects/{project['projectId']}/environments/{env['envId']}"
        )
        assert read == {"environment": env}

    async def test_a_null_repo_is_the_same_as_none(self, mgmt: Client) -> None:
        project = await create_project(mgmt)
        env = await create_environment(
            mgmt,
            project["projectId"],
            "qa",
            tagRules=[{"kind": "prefix", "value": "v", "repo": None}],
        )
        assert env["tagRules"] == [{"kind": "prefix", "value": "v"}]

    async def test_the_first_environment_becomes_the_default_only_when_isdefault_is_absent(
        self, mgmt: Client
    ) -> None:
        first = await create_project(mgmt, "one")
        assert (await create_environment(mgmt, first["projectId"], "prod"))["isDefault"] is True
        second = await create_project(mgmt, "two")
        explicit = await create_environment(mgmt, second["projectId"], "prod", isDefault=False)
        assert explicit["isDefault"] is False

    async def test_setting_isdefault_leaves_exactly_one_default(self, mgmt: Client) -> None:
        env = await create_environment(mgmt, "proj_checkout", "canary", isDefault=True)
        assert env["isDefault"] is True
        listed = await ok(mgmt, "GET", f"{CHECKOUT}/environments")
        assert [e["slug"] for e in listed["environments"] if e["isDefault"]] == ["canary"]
        assert listed["defaultEnvironment"] == "canary"
        await ok(mgmt, "PATCH", f"{CHECKOUT}/environments/env_staging", {"isDefault": True})
        listed = await ok(mgmt, "GET", f"{CHECKOUT}/environments")
        assert [e["slug"] for e in listed["environments"] if e["isDefault"]] == ["staging"]
        production = await ok(mgmt, "GET", f"{CHECKOUT}/environments/env_production")
        assert production["environment"]["isDefault"] is False

    async def test_slugs_are_unique_per_project_after_trimming_and_lowercasing(
        self, mgmt: Client
    ) -> None:
        body = {"slug": " Staging ", "displayName": "Again"}
        status, answer = await call(mgmt, "POST", f"{CHECKOUT}/environments", body)
        assert (status, answer) == (
            409,
            error("CONFLICT", "an environment with this slug already exists in this project"),
        )
        other = await create_project(mgmt)
        assert (await create_environment(mgmt, other["projectId"], "staging"))["slug"] == "staging"

    @pytest.mark.parametrize(
        ("body", "message"),
        [
            ({"displayName": "X"}, "slug: required"),
            ({"slug": "x"}, "displayName: required"),
            ({"slug": "  ", "displayName": "X"}, "slug: must not be empty"),
            (
                {"slug": "x", "displayName": "X", "isDefault": "yes"},
                "isDefault: must be a boolean, got a string",
            ),
            (
                {
                    "slug": "x",
                    "displayName": "X",
                    "branchRules": [
                        {"kind": "exact", "value": "m"},
                        {"kind": "regex", "value": "m"},
                    ],
                },
                "branchRules[1].kind: must be one of exact, prefix, glob, got 'regex'",
            ),
            (
                {"slug": "x", "displayName": "X", "tagRules": [{"kind": "exact"}]},
                "tagRules[0].value: required",
            ),
            (
                {"slug": "x", "displayName": "X", "tagRules": [{"kind": "exact", "value": ""}]},
                "tagRules[0].value: must not be empty",
            ),
            (
                {"slug": "x", "displayName": "X", "tagRules": "main"},
                "tagRules: must be an array of ref-rules, got a string",
            ),
            (
                {
                    "slug": "x",
                    "displayName": "X",
                    "tagRules": [{"kind": "exact", "value": "v", "on": 1}],
                },
                "tagRules[0].on: unknown field (expected one of kind, value, repo)",
            ),
            (
                {"slug": "x", "displayName": "X", "webhookAliases": ["a", 2]},
                "webhookAliases[1]: must be a string, got a number",
            ),
            (
                {"slug": "x", "displayName": "X", "promotionRank": 2},
                "promotionRank: unknown field (expected one of slug, displayName, isDefault, "
                "branchRules, tagRules, webhookAliases)",
            ),
        ],
    )
    async def test_a_bad_create_body_is_a_400_and_creates_nothing(
        self, mgmt: Client, body: object, message: str
    ) -> None:
        before = await ok(mgmt, "GET", f"{CHECKOUT}/environments")
        status, answer = await call(mgmt, "POST", f"{CHECKOUT}/environments", body)
        assert (status, answer) == (400, error("VALIDATION", message))
        assert await ok(mgmt, "GET", f"{CHECKOUT}/environments") == before

    async def test_patch_updates_the_writable_fields_but_never_the_slug(self, mgmt: Client) -> None:
        path = f"{CHECKOUT}/environments/env_staging"
        before = (await ok(mgmt, "GET", path))["environment"]
        status, answer = await call(mgmt, "PATCH", path, {"slug": "qa", "displayName": "QA"})
        assert (status, answer) == (400, error("VALIDATION", "slug: not writable after create"))
        body = await ok(
            mgmt,
            "PATCH",
            path,
            {
                "displayName": "Stage",
                "tagRules": [{"kind": "exact", "value": "v1"}],
                "webhookAliases": [],
            },
        )
        env = body["environment"]
        assert (env["slug"], env["displayName"]) == ("staging", "Stage")
        assert env["tagRules"] == [{"kind": "exact", "value": "v1"}]
        assert env["branchRules"] == before["branchRules"]
        assert env["webhookAliases"] == []
        assert env["createdAt"] == before["createdAt"]
        assert env["updatedAt"] > before["updatedAt"]

    async def test_an_environment_of_another_project_is_not_found(self, mgmt: Client) -> None:
        other = await create_project(mgmt)
        path = f"/v1/projects/{other['projectId']}/environments/env_staging"
        expected = (404, error("NOT_FOUND", "Environment not found"))
        assert await call(mgmt, "GET", path) == expected
        assert await call(mgmt, "PATCH", path, {"displayName": "X"}) == expected
        assert await call(mgmt, "DELETE", path) == expected
        envs_of_other_org = "/v1/projects/proj_globex/environments"
        assert await call(mgmt, "GET", envs_of_other_org) == (
            404,
            error("NOT_FOUND", "Project not found"),
        )

    async def test_deleting_the_default_hands_it_on_and_the_last_brings_production_back(
        self, mgmt: Client
    ) -> None:
        project = await create_project(mgmt)
        base = f"/v1/projects/{project['projectId']}/environments"
        prod = await create_environment(mgmt, project["projectId"], "prod")
        dev = await create_environment(mgmt, project["projectId"], "dev")
        assert await ok(mgmt, "DELETE", f"{base}/{prod['envId']}") == {
            "deleted": True,
            "envId": prod["envId"],
        }
        listed = await ok(mgmt, "GET", base)
        assert listed["defaultEnvironment"] == "dev"
        assert listed["environments"][0]["isDefault"] is True
        await ok(mgmt, "DELETE", f"{base}/{dev['envId']}")
        listed = await ok(mgmt, "GET", base)
        assert listed["defaultEnvironment"] == "production"
        assert listed["environments"][0]["synthesised"] is True


class TestControlPoints:
    async def test_reads_use_the_success_envelope(self, mgmt: Client) -> None:
        body = await ok(mgmt, "GET", f"{CHECKOUT}/control-points")
        assert body["success"] is True
        assert body["data"]["controlPoints"][0] == {
            "controlPointId": "cp_new_checkout",
            "projectId": "proj_checkout",
            "key": "new-checkout",
            "repoResourceIdentifier": "acme/shop",
            "kind": "boolean",
            "defaultValue": False,
            "surfaceId": None,
            "description": None,
            "status": "active",
            "firstSeenSha": "a1",
            "lastSeenSha": "b2",
        }
        assert [c["key"] for c in body["data"]["controlPoints"]] == [
            "new-checkout",
            "checkout-copy",
        ]

    async def test_the_graph_has_control_point_rows_as_nodes_and_edges(self, mgmt: Client) -> None:
        body = await ok(mgmt, "GET", f"{CHECKOUT}/control-points/graph")
        points = await ok(mgmt, "GET", f"{CHECKOUT}/control-points")
        assert body["data"]["nodes"] == points["data"]["controlPoints"]
        assert body["data"]["edges"] == [
            {
                "edgeId": "edge_01",
                "fromControlPointId": "cp_checkout_copy",
                "toControlPointId": "cp_new_checkout",
                "edgeKind": "lexical-nesting",
                "source": "deterministic",
                "confidence": 1,
                "evidence": {"file": "checkout.py", "line": 3},
                "detectedAtSha": "b2",
            }
        ]

    @pytest.mark.parametrize("path", ["/v1/projects/proj_globex", "/v1/projects/proj_nothing"])
    async def test_another_organisations_or_an_unknown_project_reads_as_empty(
        self, mgmt: Client, path: str
    ) -> None:
        assert await ok(mgmt, "GET", f"{path}/control-points") == {
            "success": True,
            "data": {"controlPoints": []},
        }
        assert await ok(mgmt, "GET", f"{path}/control-points/graph") == {
            "success": True,
            "data": {"nodes": [], "edges": []},
        }


ROUTES = [
    ("GET", "/v1/whoami", None),
    ("GET", "/v1/projects", None),
    ("POST", "/v1/projects", {"name": "X", "slug": "x"}),
    ("GET", CHECKOUT, None),
    ("PATCH", CHECKOUT, {"name": "X"}),
    ("DELETE", CHECKOUT, None),
    ("GET", f"{CHECKOUT}/environments", None),
    ("POST", f"{CHECKOUT}/environments", {"slug": "x", "displayName": "X"}),
    ("GET", f"{CHECKOUT}/environments/env_staging", None),
    ("PATCH", f"{CHECKOUT}/environments/env_staging", {"displayName": "X"}),
    ("DELETE", f"{CHECKOUT}/environments/env_staging", None),
    ("GET", f"{CHECKOUT}/control-points", None),
    ("GET", f"{CHECKOUT}/control-points/graph", None),
]
CI_READ = {
    "/v1/whoami",
    "/v1/projects",
    f"{CHECKOUT}/control-points",
    f"{CHECKOUT}/control-points/graph",
}


class TestKeysAndScopes:
    @pytest.mark.parametrize(("method", "path", "body"), ROUTES)
    async def test_a_missing_or_unknown_token_is_a_401(
        self, mgmt: Client, method: str, path: str, body: object
    ) -> None:
        status, answer = await call(mgmt, method, path, body, key=None)
        assert status == 401
        assert answer["error"]["code"] == "UNAUTHORIZED"
        assert answer["error"]["message"].startswith("missing bearer token")
        status, answer = await call(mgmt, method, path, body, key="svc_org_nobody")
        assert status == 401
        assert answer["error"]["message"].startswith(
            "organisation key or session token not recognised"
        )

    @pytest.mark.parametrize(
        ("key", "plane"),
        [
            (
                "project-api-key_abc123",
                "a server runtime key (project-api-key_...) belongs to the runtime plane",
            ),
            ("svc_public_abc123", "a browser key (svc_public_...) belongs to the runtime plane"),
            (
                "phc_abc123",
                "an analytics-vendor key (phc_/phs_/phx_...) belongs to the legacy vendor routes",
            ),
            (
                "phs_abc123",
                "an analytics-vendor key (phc_/phs_/phx_...) belongs to the legacy vendor routes",
            ),
        ],
    )
    async def test_a_key_of_another_plane_is_a_401_that_names_its_plane_not_the_key(
        self, mgmt: Client, key: str, plane: str
    ) -> None:
        status, answer = await call(mgmt, "GET", "/v1/projects", key=key)
        assert status == 401
        assert answer["error"]["code"] == "UNAUTHORIZED"
        assert answer["error"]["message"].startswith(plane)
        assert "abc123" not in repr(answer)

    async def test_x_api_key_is_not_a_management_credential(self, mgmt: Client) -> None:
        response = await mgmt.get("/v1/projects", headers={"x-api-key": ADMIN})
        assert response.status == 401

    @pytest.mark.parametrize(
        ("method", "path", "body"), [r for r in ROUTES if r[1] not in CI_READ or r[0] != "GET"]
    )
    async def test_ci_read_is_refused_every_other_route_with_403_and_nothing_changes(
        self, mgmt: Client, method: str, path: str, body: object
    ) -> None:
        before = await ok(mgmt, "GET", f"{CHECKOUT}/environments")
        projects = await ok(mgmt, "GET", "/v1/projects")
        status, answer = await call(mgmt, method, path, body, key=CI)
        assert status == 403
        assert answer["error"]["code"] == "FORBIDDEN"
        assert answer["error"]["message"].startswith("org:ci-read may not ")
        assert await ok(mgmt, "GET", f"{CHECKOUT}/environments") == before
        assert await ok(mgmt, "GET", "/v1/projects") == projects

    async def test_ci_read_gets_403_even_for_a_project_that_does_not_exist(
        self, mgmt: Client
    ) -> None:
        status, _ = await call(mgmt, "GET", "/v1/projects/proj_nothing", key=CI)
        assert status == 403

    @pytest.mark.parametrize("path", sorted(CI_READ))
    async def test_ci_read_may_call_its_four_read_routes(self, mgmt: Client, path: str) -> None:
        await ok(mgmt, "GET", path, key=CI)

    @pytest.mark.parametrize(("method", "path", "body"), ROUTES)
    async def test_a_cli_session_may_call_every_route(
        self, mgmt: Client, method: str, path: str, body: object
    ) -> None:
        await ok(mgmt, method, path, body, key=SESSION)


class TestPlaneErrors:
    async def test_a_known_path_with_another_method_is_a_405_in_this_planes_envelope(
        self, mgmt: Client
    ) -> None:
        response = await mgmt.put(CHECKOUT, json={}, headers={"Authorization": f"Bearer {ADMIN}"})
        assert response.status == 405
        assert response.headers["Allow"] == "DELETE, GET, PATCH"
        assert await response.json() == error(
            "METHOD_NOT_ALLOWED",
            "PUT is not allowed on /v1/projects/proj_checkout (allowed: DELETE, GET, PATCH)",
        )

    async def test_an_unknown_management_path_is_a_404_in_this_planes_envelope(
        self, mgmt: Client
    ) -> None:
        status, body = await call(mgmt, "GET", f"{CHECKOUT}/rollouts")
        assert (status, body) == (
            404,
            error("NOT_FOUND", "no route GET /v1/projects/proj_checkout/rollouts"),
        )

    @pytest.mark.parametrize(
        ("method", "path", "served"),
        [
            ("GET", "/v1/projects/", "/v1/projects"),
            ("DELETE", "/v1/projects/", "/v1/projects"),
            ("GET", f"{CHECKOUT}/environments/", f"{CHECKOUT}/environments"),
            ("PATCH", f"{CHECKOUT}/", CHECKOUT),
            ("GET", "/v1/whoami/", "/v1/whoami"),
        ],
    )
    async def test_a_trailing_slash_as_from_an_empty_id_is_a_404_that_says_so(
        self, mgmt: Client, method: str, path: str, served: str
    ) -> None:
        status, body = await call(mgmt, method, path, {} if method == "PATCH" else None)
        message = (
            f"no route {method} {path}: {served} is served without the trailing slash "
            "(an id left empty?)"
        )
        assert (status, body) == (404, error("NOT_FOUND", message))
        assert (await ok(mgmt, "GET", CHECKOUT))["project"]["slug"] == "checkout"

    @pytest.mark.parametrize("method", ["GET", "PATCH", "DELETE"])
    @pytest.mark.parametrize("project", ["a%7Bb", "%7Bscratch%7D", "a%7D"])
    async def test_an_id_holding_a_brace_is_a_404_that_says_why_never_a_405(
        self, mgmt: Client, method: str, project: str
    ) -> None:
        """aiohttp's placeholders take no `{` or `}`: the 405 that allowed the very method asked
        came from the catch-all matching otherwise (verify once sent `/v1/projects/{scratch}`)."""
        path = f"/v1/projects/{project}"
        status, body = await call(mgmt, method, path, {} if method == "PATCH" else None)
        shown = path.replace("%7B", "{").replace("%7D", "}")
        why = "no segment holds '{' or '}' (a placeholder left unfilled?)"
        message = f"no route {method} {shown}: {why}"
        assert (status, body) == (404, error("NOT_FOUND", message))

    async def test_the_consoles_routes_under_api_are_not_served_and_say_so_in_this_envelope(
        self, mgmt: Client
    ) -> None:
        status, body = await call(mgmt, "GET", "/api/organizations/org_acme/members")
        assert (status, body) == (
            404,
            error("NOT_FOUND", "no route GET /api/organizations/org_acme/members"),
        )


class TestState:
    async def test_reset_restores_exactly_the_seed(self, mgmt: Client) -> None:
        paths = [
            "/v1/projects",
            CHECKOUT,
            f"{CHECKOUT}/environments",
            f"{CHECKOUT}/control-points/graph",
        ]
        seeded = [await ok(mgmt, "GET", p) for p in paths]
        await create_project(mgmt)
        await ok(mgmt, "PATCH", f"{CHECKOUT}/environments/env_staging", {"isDefault": True})
        await ok(mgmt, "DELETE", CHECKOUT)
        assert (await mgmt.post("/_test/reset")).status == 200
        assert [await ok(mgmt, "GET", p) for p in paths] == seeded

    async def test_fifty_concurrent_creates_of_one_slug_give_one_201(self, mgmt: Client) -> None:
        body = {"name": "Race", "slug": "race"}
        answers = await asyncio.gather(
            *(call(mgmt, "POST", "/v1/projects", body) for _ in range(50))
        )
        statuses = sorted(status for status, _ in answers)
        assert statuses == [201] + [409] * 49
        listed = await ok(mgmt, "GET", "/v1/projects")
        assert [p["slug"] for p in listed["projects"]].count("race") == 1

    async def test_requests_are_recorded_by_route_name_without_the_token(
        self, mgmt: Client
    ) -> None:
        project = await create_project(mgmt)
        await create_environment(mgmt, project["projectId"], "dev")
        await call(mgmt, "GET", "/v1/projects", key=CI)
        await call(mgmt, "DELETE", CHECKOUT, key=CI)
        log = await (await mgmt.get("/_test/requests")).json()
        routes = [(r["route"], r["status"]) for r in log["requests"]]
        assert routes == [
            ("projects.create", 201),
            ("environments.create", 201),
            ("projects.list", 200),
            ("projects.delete", 403),
        ]
        assert ADMIN not in repr(log)
        assert CI not in repr(log)
        only = await (await mgmt.get("/_test/requests?route=projects")).json()
        assert [r["route"] for r in only["requests"]] == [
            "projects.create",
            "projects.list",
            "projects.delete",
        ]


class TestReviewFindings:
    async def test_a_merged_seed_leaves_other_organisations_as_they_are(self, mgmt: Client) -> None:
        await create_project(mgmt, "kept")
        response = await mgmt.post(
            "/_test/management?merge=true",
            json={"orgs": {"org_new": {"keys": [{"key": "svc_org_new"}]}}},
        )
        assert response.status == 200
        listed = await ok(mgmt, "GET", "/v1/projects")
        assert "kept" in [p["slug"] for p in listed["projects"]]
        assert (await ok(mgmt, "GET", "/v1/whoami", key="svc_org_new"))["orgId"] == "org_new"

    async def test_a_merge_naming_an_organisation_starts_it_from_its_seed(
        self, mgmt: Client
    ) -> None:
        await create_project(mgmt, "gone")
        seed = {
            "orgs": {
                "org_acme": {"keys": [{"key": ADMIN}], "projects": [{"name": "N", "slug": "n"}]}
            }
        }
        assert (await mgmt.post("/_test/management?merge=true", json=seed)).status == 200
        listed = await ok(mgmt, "GET", "/v1/projects")
        assert [p["slug"] for p in listed["projects"]] == ["n"]

    async def test_the_401_names_the_default_key_only_when_it_is_seeded(self, mgmt: Client) -> None:
        _, body = await call(mgmt, "GET", "/v1/projects", key="svc_org_nobody")
        assert "svc_org_default" not in body["error"]["message"]

    async def test_an_environment_patch_refuses_an_explicit_null(self, mgmt: Client) -> None:
        path = f"{CHECKOUT}/environments/env_staging"
        assert await call(mgmt, "PATCH", path, {"displayName": None}) == (
            400,
            error("VALIDATION", "displayName: must be a string, got null"),
        )


class TestBounds:
    async def test_text_fields_and_lists_are_bounded(self, mgmt: Client) -> None:
        long_name = {"name": "x" * 1001, "slug": "x"}
        assert await call(mgmt, "POST", "/v1/projects", long_name) == (
            400,
            error("VALIDATION", "name: at most 1,000 characters, got 1,001"),
        )
        long_description = {"name": "X", "slug": "x", "description": "d" * 10_000}
        assert (await call(mgmt, "POST", "/v1/projects", long_description))[0] == 201
        rules = [{"kind": "exact", "value": str(n)} for n in range(101)]
        body = {"slug": "x", "displayName": "X", "branchRules": rules}
        assert await call(mgmt, "POST", f"{CHECKOUT}/environments", body) == (
            400,
            error("VALIDATION", "branchRules: at most 100 items, got 101"),
        )

    async def test_a_full_organisation_refuses_another_project_with_a_clear_409(
        self, mgmt: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr("stub.management.store.MAX_PROJECTS", 3)  # two seeded, one more
        await create_project(mgmt, "third")
        assert await call(mgmt, "POST", "/v1/projects", {"name": "X", "slug": "fourth"}) == (
            409,
            error(
                "CONFLICT",
                "this stub holds at most 3 projects per organisation: delete some, or reset it",
            ),
        )
        await ok(mgmt, "DELETE", "/v1/projects/proj_checkout")
        await create_project(mgmt, "fourth")

    async def test_a_full_project_refuses_another_environment(
        self, mgmt: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr("stub.management.store.MAX_ENVIRONMENTS", 3)
        status, body = await call(
            mgmt, "POST", f"{CHECKOUT}/environments", {"slug": "qa", "displayName": "QA"}
        )
        assert (status, body["error"]["code"]) == (409, "CONFLICT")
        assert "at most 3 environments per project" in body["error"]["message"]


class TestFaults:
    async def test_an_armed_fault_on_a_resource_answers_in_this_planes_envelope(
        self, mgmt: Client
    ) -> None:
        await mgmt.post("/_test/fault", json={"mode": "500", "applyTo": "projects"})
        status, body = await call(mgmt, "POST", "/v1/projects", {"name": "X", "slug": "x"})
        assert (status, body) == (500, error("INTERNAL", "svc-stub fault: 500"))
        assert (await call(mgmt, "GET", f"{CHECKOUT}/environments"))[0] == 200
        assert (await call(mgmt, "GET", "/v1/whoami"))[0] == 200

    async def test_a_faulted_write_changes_nothing(self, mgmt: Client) -> None:
        await mgmt.post(
            "/_test/fault", json={"mode": "500", "applyTo": "projects", "ttlRequests": 1}
        )
        assert (await call(mgmt, "POST", "/v1/projects", {"name": "X", "slug": "x"}))[0] == 500
        listed = await ok(mgmt, "GET", "/v1/projects")
        assert "x" not in [p["slug"] for p in listed["projects"]]

    async def test_the_management_selector_covers_every_resource_and_nothing_else(
        self, mgmt: Client
    ) -> None:
        await mgmt.post(
            "/_test/fault", json={"mode": "status", "status": 503, "applyTo": "management"}
        )
        for method, path, body in ROUTES:
            status, answer = await call(mgmt, method, path, body)
            assert (status, answer) == (503, error("HTTP_503", "svc-stub fault: status")), path
        evaluate = await mgmt.post(
            "/v1/flags/evaluate", json={"targetingKey": "u"}, headers={"Authorization": "Bearer k"}
        )
        assert evaluate.status == 200

    async def test_429_carries_retry_after_and_this_planes_envelope(self, mgmt: Client) -> None:
        response = await mgmt.get(
            "/v1/projects",
            headers={
                "Authorization": f"Bearer {ADMIN}",
                "X-Svc-Test-Fault": "429",
                "X-Svc-Test-Retry-After": "7",
            },
        )
        assert response.status == 429
        assert response.headers["Retry-After"] == "7"
        assert await response.json() == error("RATE_LIMITED", "svc-stub fault: 429")

    async def test_faults_fire_before_authentication(self, mgmt: Client) -> None:
        status, body = await call(mgmt, "GET", "/v1/whoami?fault=401", key=None)
        assert (status, body) == (401, error("UNAUTHORIZED", "svc-stub fault: 401"))

    async def test_the_request_log_names_the_route_and_the_fault(self, mgmt: Client) -> None:
        await mgmt.post("/_test/fault", json={"mode": "500", "applyTo": "environments"})
        await call(mgmt, "DELETE", f"{CHECKOUT}/environments/env_staging")
        log = await (await mgmt.get("/_test/requests?route=environments")).json()
        (entry,) = log["requests"]
        assert entry["route"] == "environments.delete"
        assert entry["status"] == 500
        assert entry["fault"] == {"mode": "500", "source": "armed", "armedId": 1}
