"""The probe table of `svc-stub verify`: the requests sent alike to the real service and to
svc-stub, as data (`PROBES`), with the placeholders each side fills in."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from stub.upstream.record import (
    DEFINITIONS_SPELLINGS,
    FLAGS_SPELLINGS,
    RECORDING_CONTEXT,
)

KeyRole = Literal[
    "runtime",
    "org",
    "vendor",
    "ci-read",
    "none",
    "unknown-runtime",
    "unknown-org",
    "org-on-runtime",
    "runtime-on-management",
]
UNKNOWN_RUNTIME_KEY = "project-api-key_svc-stub-verify-unknown"
UNKNOWN_ORG_KEY = "svc_org_svc-stub-verify-unknown"
MISSING_FLAG = "svc-stub-verify-missing-flag"
MISSING_PROJECT = "proj_svcstubverifymissing"
TYPES = ("boolean", "string", "number", "object")


class Raw(NamedTuple):
    """A body sent as these bytes (not JSON)."""

    data: bytes


class Probe(NamedTuple):
    """One request, sent alike to both sides. In `path` and string members of `body`,
    `{flag}`, `{flag:TYPE}`, `{project}`, `{scratch}`, `{env}`, `{slug}` and `{vendor-key}`
    are filled per side; `"{flags}"` alone becomes a list of up to three flag keys."""

    name: str
    method: str
    path: str
    key: KeyRole
    body: Any = None
    writes: bool = False
    """Sent only with --allow-writes: its route stores what it is sent (or it needs the
    scratch project). An empty or malformed batch counts: a permissive service keeps it."""
    capture: tuple[str, str] | None = None
    """(name, member path): remember this member of the answer, per side, as `{name}`."""
    vendor: bool = False
    """A legacy vendor route: skipped where the upstream does not serve it (404)."""


def evaluate_probe(name: str, body: dict[str, Any]) -> Probe:
    return Probe(f"evaluate/{name}", "POST", "/v1/flags/evaluate", "runtime", body)


CONTEXT = {"targetingKey": RECORDING_CONTEXT}
SIGNAL = {"type": "signal", "targetingKey": RECORDING_CONTEXT, "name": "svc-stub-verify"}
SCRATCH = "/v1/projects/{scratch}"
VENDOR_FLAGS = {"api_key": "{vendor-key}", "distinct_id": RECORDING_CONTEXT}

PROBES: tuple[Probe, ...] = (
    evaluate_probe("one-flag", {**CONTEXT, "flagKeys": ["{flag}"]}),
    evaluate_probe("several", {**CONTEXT, "flagKeys": "{flags}"}),
    evaluate_probe("all", CONTEXT),
    evaluate_probe("missing-flag", {**CONTEXT, "flagKeys": [MISSING_FLAG]}),
    *(
        evaluate_probe(f"type-{kind}", {**CONTEXT, "flagKeys": [f"{{flag:{kind}}}"]})
        for kind in TYPES
    ),
    evaluate_probe("no-targeting-key", {"flagKeys": ["{flag}"]}),
    Probe("evaluate/malformed-body", "POST", "/v1/flags/evaluate", "runtime", Raw(b"{not json")),
    # What a capture stores, the service keeps for good (no route removes it). Even a batch
    # that should store nothing is a write: a permissive service answered `accepted: 1`.
    Probe("capture/valid", "POST", "/v1/capture", "runtime", {"events": [SIGNAL]}, writes=True),
    Probe("capture/empty", "POST", "/v1/capture", "runtime", {"events": []}, writes=True),
    Probe("capture/bad", "POST", "/v1/capture", "runtime", {"events": "not a list"}, writes=True),
    Probe("auth/runtime-no-key", "POST", "/v1/flags/evaluate", "none", CONTEXT),
    Probe("auth/runtime-unknown-key", "POST", "/v1/flags/evaluate", "unknown-runtime", CONTEXT),
    Probe("auth/org-key-on-runtime", "POST", "/v1/flags/evaluate", "org-on-runtime", CONTEXT),
    Probe("auth/management-no-key", "GET", "/v1/whoami", "none"),
    Probe("auth/management-unknown-key", "GET", "/v1/whoami", "unknown-org"),
    Probe("auth/runtime-key-on-management", "GET", "/v1/whoami", "runtime-on-management"),
    *(
        Probe(name, "POST", path, "none", VENDOR_FLAGS, vendor=True)
        for name, path in zip(
            ("vendor/flags", "vendor/flags-no-slash", "vendor/flags-v4"),
            FLAGS_SPELLINGS,
            strict=True,
        )
    ),
    *(  # the vendor's ingestion route: a write, empty batch or not (as capture/empty)
        Probe(
            name,
            "POST",
            path,
            "none",
            {"api_key": "{vendor-key}", "batch": []},
            writes=True,
            vendor=True,
        )
        for name, path in (("vendor/batch", "/batch/"), ("vendor/batch-no-slash", "/batch"))
    ),
    *(
        Probe(name, "GET", path.format(key="{vendor-key}"), "vendor", vendor=True)
        for name, path in zip(
            (
                "vendor/definitions",
                "vendor/definitions-local-evaluation-slash",
                "vendor/definitions-local-evaluation",
            ),
            DEFINITIONS_SPELLINGS,
            strict=True,
        )
    ),
    Probe("management/whoami", "GET", "/v1/whoami", "org"),
    Probe("management/projects", "GET", "/v1/projects", "org"),
    Probe("management/project", "GET", "/v1/projects/{project}", "org"),
    Probe("management/unknown-project", "GET", f"/v1/projects/{MISSING_PROJECT}", "org"),
    Probe("management/environments", "GET", "/v1/projects/{project}/environments", "org"),
    Probe("management/control-points", "GET", "/v1/projects/{project}/control-points", "org"),
    Probe("management/graph", "GET", "/v1/projects/{project}/control-points/graph", "org"),
    Probe("ci-read/whoami", "GET", "/v1/whoami", "ci-read"),
    Probe("ci-read/projects", "GET", "/v1/projects", "ci-read"),
    Probe(
        "register/target",
        "POST",
        "/v1/targets/register",
        "runtime",
        {"targetingKey": "svc-stub-verify", "kind": "user", "properties": {"by": "svc-stub"}},
        writes=True,
    ),
    Probe(
        "scratch/create-project",
        "POST",
        "/v1/projects",
        "org",
        {"name": "svc-stub verify scratch", "slug": "{slug}", "description": "svc-stub verify"},
        writes=True,
        capture=("scratch", "project.projectId"),
    ),
    Probe("scratch/project", "GET", SCRATCH, "org", writes=True),
    Probe("scratch/patch-project", "PATCH", SCRATCH, "org", {"name": "patched"}, writes=True),
    Probe(
        "scratch/create-environment",
        "POST",
        SCRATCH + "/environments",
        "org",
        {"slug": "svc-stub-verify", "displayName": "svc-stub verify"},
        writes=True,
        capture=("env", "environment.envId"),
    ),
    Probe("scratch/environment", "GET", SCRATCH + "/environments/{env}", "org", writes=True),
    Probe(
        "scratch/patch-environment",
        "PATCH",
        SCRATCH + "/environments/{env}",
        "org",
        {"displayName": "svc-stub verify (patched)"},
        writes=True,
    ),
    Probe(
        "scratch/delete-environment",
        "DELETE",
        SCRATCH + "/environments/{env}",
        "org",
        writes=True,
    ),
    Probe("scratch/delete-project", "DELETE", SCRATCH, "org", writes=True),
)


def left_out_when_read_only() -> list[str]:
    """The writing probes' names, as a read-only run's header lists them: a family of several
    probes that all write as `family/*`, so the line stays short as the table grows."""
    shown: list[str] = []
    for probe in (p for p in PROBES if p.writes):
        family = [p for p in PROBES if _family(p.name) == _family(probe.name)]
        whole = len(family) > 1 and all(p.writes for p in family)
        name = f"{_family(probe.name)}/*" if whole else probe.name
        if name not in shown:
            shown.append(name)
    return shown


def _family(name: str) -> str:
    return name.partition("/")[0]
