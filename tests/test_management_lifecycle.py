"""The management plane driven the way an infrastructure client drives it: a small plain-HTTP
client, written here after the Terraform provider's, through a whole apply-and-destroy
lifecycle against a spawned stub; then a cross-organisation probe and a ci-read key."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import HANG_GUARD_S, SpawnedStub, spawn_stub

SEED = Path(__file__).parent / "fixtures" / "management.yaml"
Json = dict[str, Any]


class ApiError(Exception):
    """Any non-2xx, holding the raw body, as the provider's client does (it never retries)."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"{status}: {body}")
        self.status = status
        self.body = body

    @property
    def is_not_found(self) -> bool:
        return self.status == 404


@dataclass
class InfraClient:
    """What a Terraform-style provider needs of the plane, over the standard library only."""

    endpoint: str
    key: str

    def call(self, method: str, path: str, body: Json | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self.key}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(
            self.endpoint + path, data=data, method=method, headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=HANG_GUARD_S) as response:
                return json.load(response)
        except urllib.error.HTTPError as exc:
            with exc:
                raise ApiError(exc.code, exc.read().decode()) from None

    def create_project(self, name: str, slug: str, description: str | None = None) -> Json:
        body: Json = {"name": name, "slug": slug}
        if description is not None:
            body["description"] = description
        project: Json = self.call("POST", "/v1/projects", body)["project"]
        return project

    def get_project(self, project_id: str) -> Json:
        project: Json = self.call("GET", f"/v1/projects/{project_id}")["project"]
        return project

    def create_environment(self, project_id: str, body: Json) -> Json:
        # The provider always sends isDefault, false unless configured.
        sent = {"isDefault": False, **body}
        path = f"/v1/projects/{project_id}/environments"
        environment: Json = self.call("POST", path, sent)["environment"]
        return environment

    def environment_path(self, project_id: str, env_id: str) -> str:
        return f"/v1/projects/{project_id}/environments/{env_id}"


@pytest.fixture(scope="module")
def seeded_stub() -> Iterator[SpawnedStub]:
    with spawn_stub("--fixtures", str(SEED), read_log=False) as stub:
        yield stub


@pytest.fixture
def stub(seeded_stub: SpawnedStub) -> SpawnedStub:
    seeded_stub.post("/_test/reset")
    return seeded_stub


def test_a_terraform_style_lifecycle_leaves_nothing_behind(stub: SpawnedStub) -> None:
    admin = InfraClient(stub.url, "svc_org_acme_admin")
    seeded = admin.call("GET", "/v1/projects")["projects"]

    # apply: a project, then two environments; state is built from what create answered
    planned = admin.create_project("Storefront", "storefront")
    assert planned["description"] is None  # never "": Terraform would call that inconsistent
    assert admin.get_project(planned["projectId"]) == planned
    project_id = planned["projectId"]
    production = admin.create_environment(
        project_id,
        {
            "slug": "production",
            "displayName": "Production",
            "isDefault": True,
            "branchRules": [{"kind": "exact", "value": "main"}],
        },
    )
    staging = admin.create_environment(
        project_id,
        {
            "slug": "staging",
            "displayName": "Staging",
            "tagRules": [{"kind": "glob", "value": "rc-*", "repo": "acme/store"}],
            "webhookAliases": ["stage"],
        },
    )
    for created in (production, staging):
        read = admin.call("GET", admin.environment_path(project_id, created["envId"]))
        assert read == {"environment": created}
        assert isinstance(created["promotionRank"], int)
    assert (production["isDefault"], staging["isDefault"]) == (True, False)

    # refresh: the list agrees with what the resources hold
    listed = admin.call("GET", f"/v1/projects/{project_id}/environments")
    assert listed["defaultEnvironment"] == "production"
    assert {e["slug"]: e["isDefault"] for e in listed["environments"]} == {
        "production": True,
        "staging": False,
    }

    # update in place, then archive the project
    renamed = admin.call(
        "PATCH",
        admin.environment_path(project_id, staging["envId"]),
        {"displayName": "Pre-production", "isDefault": False},
    )["environment"]
    assert renamed["displayName"] == "Pre-production"
    assert renamed["createdAt"] == staging["createdAt"]
    archived = admin.call(
        "PATCH", f"/v1/projects/{project_id}", {"name": "Store", "status": "archived"}
    )["project"]
    assert (archived["name"], archived["status"], archived["slug"]) == (
        "Store",
        "archived",
        "storefront",
    )
    assert admin.get_project(project_id) == archived

    # destroy in reverse order; a second delete is a 404, which the provider takes as done
    for environment in (staging, production):
        path = admin.environment_path(project_id, environment["envId"])
        assert admin.call("DELETE", path) == {"deleted": True, "envId": environment["envId"]}
        with pytest.raises(ApiError) as gone:
            admin.call("DELETE", path)
        assert gone.value.is_not_found
    assert admin.call("DELETE", f"/v1/projects/{project_id}") == {
        "deleted": True,
        "projectId": project_id,
    }
    with pytest.raises(ApiError) as missing:
        admin.get_project(project_id)
    assert missing.value.is_not_found  # read after destroy: dropped from state
    assert admin.call("GET", "/v1/projects")["projects"] == seeded

    # what the tool called, as a test would assert it
    routes = [r["route"] for r in stub.get("/_test/requests?route=projects")["requests"]]
    assert routes[:3] == ["projects.list", "projects.create", "projects.get"]
    assert routes[-2:] == ["projects.get", "projects.list"]


def test_another_organisation_sees_none_of_it(stub: SpawnedStub) -> None:
    acme = InfraClient(stub.url, "svc_org_acme_admin")
    globex = InfraClient(stub.url, "svc_org_globex_admin")
    project = acme.create_project("Private", "private")
    for method, path, body in (
        ("GET", f"/v1/projects/{project['projectId']}", None),
        ("PATCH", f"/v1/projects/{project['projectId']}", {"name": "Mine"}),
        ("DELETE", f"/v1/projects/{project['projectId']}", None),
        ("GET", f"/v1/projects/{project['projectId']}/environments", None),
    ):
        with pytest.raises(ApiError) as probe:
            globex.call(method, path, body)
        assert probe.value.status == 404
        assert json.loads(probe.value.body) == {
            "error": {"code": "NOT_FOUND", "message": "Project not found"}
        }
    points = globex.call("GET", "/v1/projects/proj_checkout/control-points")
    assert points == {"success": True, "data": {"controlPoints": []}}
    assert "private" not in [p["slug"] for p in globex.call("GET", "/v1/projects")["projects"]]
    assert acme.get_project(project["projectId"])["name"] == "Private"


def test_a_ci_read_key_reads_what_a_sync_needs_and_changes_nothing(stub: SpawnedStub) -> None:
    ci = InfraClient(stub.url, "svc_org_acme_ci")
    assert ci.call("GET", "/v1/whoami")["scope"] == "org:ci-read"
    projects = ci.call("GET", "/v1/projects")["projects"]
    assert [p["slug"] for p in projects] == ["checkout", "billing"]
    graph = ci.call("GET", "/v1/projects/proj_checkout/control-points/graph")["data"]
    assert [n["key"] for n in graph["nodes"]] == ["new-checkout", "checkout-copy"]
    with pytest.raises(ApiError) as refused:
        ci.create_project("Sneaky", "sneaky")
    assert refused.value.status == 403  # never 404: a provider would drop the resource
    assert json.loads(refused.value.body)["error"]["code"] == "FORBIDDEN"
    with pytest.raises(ApiError) as refused_read:
        ci.get_project("proj_checkout")
    assert refused_read.value.status == 403
    assert ci.call("GET", "/v1/projects")["projects"] == projects
