"""How to: test an infrastructure tool (a Terraform provider, a CLI, a sync job) against the
management plane.

Seed the organisation the tool's key belongs to with the marker, run the tool against
`svc_stub.url`, then assert on what the plane holds and on which routes the tool called.
"""

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from stub import StubClient


def archive_project(base_url: str, key: str, slug: str) -> int:
    """The tool under test: finds a project by slug and archives it; the HTTP status."""
    auth = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def call(method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(base_url + path, data, auth, method=method)
        with urllib.request.urlopen(request, timeout=5) as answer:
            return json.load(answer)

    try:
        projects = call("GET", "/v1/projects")["projects"]
        (project,) = (p for p in projects if p["slug"] == slug)
        call("PATCH", f"/v1/projects/{project['projectId']}", {"status": "archived"})
    except urllib.error.HTTPError as error:
        return error.code
    return 200


@pytest.mark.svc_stub(fixtures="fixtures/acme.yaml")
def test_the_tool_archives_the_project(svc_stub: StubClient) -> None:
    assert archive_project(svc_stub.url, "svc_org_acme_admin", "checkout") == 200

    checkout = svc_stub.management().org("org_acme").project("checkout")
    assert checkout["status"] == "archived"
    routes = [r.route for r in svc_stub.requests("projects")]
    assert routes == ["projects.list", "projects.update"]


@pytest.mark.svc_stub(fixtures="fixtures/acme.yaml")
def test_a_read_only_key_is_refused_and_nothing_changes(svc_stub: StubClient) -> None:
    assert archive_project(svc_stub.url, "svc_org_acme_ci", "checkout") == 403

    checkout = svc_stub.management().org("org_acme").project("checkout")
    assert checkout["status"] == "active"


def test_a_failing_plane_for_one_block(svc_stub: StubClient) -> None:
    svc_stub.seed_management({"orgs": {"org_a": {"keys": [{"key": "svc_org_a"}]}}})
    with svc_stub.fault("status", status=503, apply_to="projects"):
        assert archive_project(svc_stub.url, "svc_org_a", "checkout") == 503
