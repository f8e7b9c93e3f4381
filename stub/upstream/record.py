"""`svc-stub record`: a fixture file written from the real service. The flags as the service
answers them for one context; with an organisation key, its projects, environments and control
points as a `management:` section. Keys are never written: placeholders of the right family
stand in for them, the service's answers are scrubbed of any key as they arrive, and the file
says where real ones go. Every value the service gave goes through the YAML emitter, the
header's too, so the file always loads."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

import aiohttp
import orjson

from stub.config import Upstream
from stub.management.seed import (
    CONTROL_POINT_FIELDS,
    EDGE_FIELDS,
    ENVIRONMENT_FIELDS,
    PROJECT_FIELDS,
)
from stub.upstream.transport import (
    MAX_ANSWER_BYTES,
    Answer,
    Secrets,
    UpstreamError,
    call,
)
from stub.wire import MAX_WRITABLE_DEPTH

RECORDING_CONTEXT = "svc-stub-recorder"
"""The targeting key the flags are recorded for (and `verify` evaluates with)."""
NEVER_MATCHED = "svc-stub-recorded-for-no-context"
"""The targeting key a flag the service did not serve to the recording context is kept for."""
RECORDED_ORG_KEY = "svc_org_recorded"
"""The placeholder organisation key a recorded `management:` section is served for."""
RECORDED_CI_READ_KEY = "svc_org_recorded_ci"
"""Its org:ci-read placeholder, when a ci-read key was given."""
PLACEHOLDERS = (RECORDED_ORG_KEY, RECORDED_CI_READ_KEY)
"""Keys svc-stub writes itself: no secret, so never scrubbed."""
MAX_VALUE_DEPTH = MAX_WRITABLE_DEPTH - 4
"""The deepest value a fixture file can hold and svc-stub serve (an answer wraps it)."""

FLAGS_SPELLINGS = ("/flags/?v=2", "/flags?v=2", "/flags/?v=4")
DEFINITIONS_SPELLINGS = (
    "/flags/definitions?token={key}&send_cohorts",
    "/api/feature_flag/local_evaluation/?token={key}&send_cohorts",
    "/api/feature_flag/local_evaluation?token={key}",
)
"""Every spelling of the legacy vendor reads a published client sends (vendor-routes.md), the
one current clients use first: the service may serve only some of them."""

_PROJECT_FIELDS = tuple(
    name for name in PROJECT_FIELDS if name not in ("environments", "controlPoints", "edges")
)
"""A project's own fields: its environments, control points and edges are read apart."""
_ENVIRONMENT_FIELDS = tuple(
    name
    for name in ENVIRONMENT_FIELDS
    if name not in ("envId", "webhookAliases", "createdAt", "updatedAt")
)
"""What an environment list row carries of the seed's fields (it has no id, aliases or
timestamps; the row of one environment is read only by its id, which no list shows)."""


class Keys(NamedTuple):
    """The user's keys for the service: sent to it, and nowhere else."""

    runtime: str
    org: str | None = None
    ci_read: str | None = None
    """Only says the organisation has one: the recording gets a placeholder of that scope."""
    vendor: str | None = None
    """For the legacy vendor routes (else the runtime key)."""

    def secrets(self) -> Secrets:
        """What no answer kept from the service may repeat: these keys, and any of a family."""
        return Secrets(self, keep=PLACEHOLDERS)


class Recording(NamedTuple):
    document: dict[str, Any]
    notes: list[str]
    """What was left out, and why, and which spellings the service answered, for the file's
    header (service values in it already written by `_quoted`)."""


class Service(NamedTuple):
    """The service as record reads it: every answer bounded in size and scrubbed of keys as
    it arrives, so nothing after this can write one."""

    client: aiohttp.ClientSession
    upstream: Upstream
    secrets: Secrets
    max_answer_bytes: int = MAX_ANSWER_BYTES

    async def ask(
        self, method: str, path: str, key: str | None = None, body: bytes | None = None
    ) -> Answer:
        answer = await call(
            self.client,
            self.upstream,
            method,
            path,
            key=key,
            body=body,
            max_bytes=self.max_answer_bytes,
        )
        return self.secrets.answer(answer)


async def recorded(
    client: aiohttp.ClientSession,
    upstream: Upstream,
    keys: Keys,
    flag_keys: Sequence[str] = (),
    targeting_key: str = RECORDING_CONTEXT,
    *,
    max_answer_bytes: int = MAX_ANSWER_BYTES,
) -> Recording:
    service = Service(client, upstream, keys.secrets(), max_answer_bytes)
    notes: list[str] = []
    flags = await _flags(service, keys.runtime, flag_keys, targeting_key, notes)
    document: dict[str, Any] = {"flags": flags}
    vendor = await _vendor(service, keys.vendor or keys.runtime, targeting_key, notes)
    if vendor:
        document["vendor"] = vendor
    if keys.org is not None:
        document["management"] = await _management(
            service, keys.org, notes, ci_read=keys.ci_read is not None
        )
    return Recording(document, notes)


async def _flags(
    service: Service,
    key: str,
    flag_keys: Sequence[str],
    targeting_key: str,
    notes: list[str],
) -> dict[str, Any]:
    asked: dict[str, Any] = {"targetingKey": targeting_key}
    if flag_keys:
        asked["flagKeys"] = list(flag_keys)
    answer = await _read(service, "POST", "/v1/flags/evaluate", key, asked)
    decisions = answer.get("decisions")
    if not isinstance(decisions, list):
        raise UpstreamError("POST /v1/flags/evaluate answered without a `decisions` list")
    flags: dict[str, Any] = {}
    for decision in decisions:
        if not isinstance(decision, dict) or not isinstance(decision.get("flagKey"), str):
            continue
        fixture = flag_fixture(decision)
        if fixture is None:  # it exists, but not for this context: so it stays for the stub
            fixture = {"type": "boolean", "value": False, "matchTargetingKey": NEVER_MATCHED}
            notes.append(
                f"flag {_quoted(decision['flagKey'])}: the service did not serve it to this "
                f"context (reason {_quoted(decision.get('reason'))}); recorded as a flag that "
                "matches no context"
            )
        for member in ("value", "payload"):
            where = f"POST /v1/flags/evaluate: flag {_quoted(decision['flagKey'])}'s {member}"
            _check_depth(fixture.get(member), where)
        flags[decision["flagKey"]] = fixture
    return flags


async def _vendor(service: Service, key: str, context: str, notes: list[str]) -> dict[str, Any]:
    """The legacy vendor routes' answers, verbatim, where the service serves them: the
    definitions document (whose conditions no evaluate answer shows) and `/flags` for the
    recording context, each from the first of its spellings that the service answers."""
    recorded: dict[str, Any] = {}
    asked = orjson.dumps({"api_key": key, "distinct_id": context})
    flags = [
        (f"POST {path}", await service.ask("POST", path, body=asked)) for path in FLAGS_SPELLINGS
    ]
    definitions = [
        (f"GET {path.format(key='...')}", await service.ask("GET", path.format(key=key), key=key))
        for path in DEFINITIONS_SPELLINGS
    ]
    for name, answers in (("flags", flags), ("definitions", definitions)):
        document = _first_document(name, answers, notes)
        if document is not None:
            recorded[name] = document
    return recorded


def _first_document(
    name: str, answers: list[tuple[str, Answer]], notes: list[str]
) -> dict[str, Any] | None:
    """The document of the first spelling the service answered, and a note of what each
    spelling (as shown: never with the key) was answered."""
    said = ", ".join(f"{asked} {answer.status}" for asked, answer in answers)
    for asked, answer in answers:
        document = answer.json()
        if answer.status == 200 and isinstance(document, dict):
            notes.append(f"vendor {name}: recorded from {asked} (the service answered {said})")
            _check_depth(document, f"{asked}: the document")
            return document
    notes.append(f"Not recorded: vendor {name} (the service answered {said})")
    return None


def _check_depth(value: object, what: str) -> None:
    """UpstreamError, in one line, for a value nested deeper than a fixture file can hold
    (measured without recursion: a hostile answer nests as deep as its parser allows)."""
    pending: list[tuple[object, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if depth > MAX_VALUE_DEPTH:
            raise UpstreamError(
                f"{what} nests more than {MAX_VALUE_DEPTH} levels deep, deeper than svc-stub "
                "can write or serve; leave it out (record --flag KEY for the others)"
            )
        if isinstance(item, dict):
            pending.extend((member, depth + 1) for member in item.values())
        elif isinstance(item, list):
            pending.extend((member, depth + 1) for member in item)


def flag_fixture(decision: dict[str, Any]) -> dict[str, Any] | None:
    """A fixture that svc-stub answers exactly as the service answered this decision (None
    for a flag the service did not serve to this context)."""
    value = decision.get("value")
    if decision.get("found") is False or value is None:
        return None
    fixture: dict[str, Any] = {"type": _type_of(value), "value": value}
    enabled = decision.get("enabled", True)
    if enabled is False:
        fixture["enabled"] = False
    variant = decision.get("variant")
    if isinstance(variant, str):
        fixture["variant"] = variant
    if decision.get("payload") is not None:
        fixture["payload"] = decision["payload"]
    metadata = decision.get("flagMetadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    version = metadata.get("svc.flagVersion", metadata.get("fireweave.flagVersion"))
    if isinstance(version, int) and not isinstance(version, bool):
        fixture["metadata"] = {"version": version}
    split = isinstance(variant, str)  # as svc-stub derives it: any variant, "" too
    derived = "DISABLED" if enabled is False else "SPLIT" if split else "TARGETING_MATCH"
    if isinstance(decision.get("reason"), str) and decision["reason"] != derived:
        fixture["reason"] = decision["reason"]
    return fixture


def _type_of(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int | float):
        return "number"
    return "object"


async def _management(
    service: Service, key: str, notes: list[str], ci_read: bool
) -> dict[str, Any]:
    whoami = await _read(service, "GET", "/v1/whoami", key)
    listed = await _read(service, "GET", "/v1/projects", key)
    projects = []
    for item in _rows(listed.get("projects"), "GET /v1/projects: projects"):
        if not isinstance(item.get("projectId"), str):
            raise UpstreamError("GET /v1/projects: a project without a projectId")
        projects.append(await _project(service, key, item["projectId"]))
    scope = whoami.get("scope")
    principal = {
        "key": RECORDED_ORG_KEY,
        "scope": scope if scope in ("org:management", "org:ci-read") else "org:management",
        "userId": whoami.get("userId", "svc_principal_recorded"),
    }
    if scope == "cli":
        notes.append("the key was a CLI session; the placeholder is an organisation key")
    principals = [principal]
    if ci_read:
        principals.append({"key": RECORDED_CI_READ_KEY, "scope": "org:ci-read"})
    org = {"keys": principals, "projects": projects}
    return {"orgs": {str(whoami.get("orgId", "org_recorded")): org}}


async def _project(service: Service, key: str, project_id: str) -> dict[str, Any]:
    base = f"/v1/projects/{project_id}"
    row = (await _read(service, "GET", base, key)).get("project") or {}
    project = _kept(row, _PROJECT_FIELDS)
    listed = await _read(service, "GET", base + "/environments", key)
    project["environments"] = [
        _kept(env, _ENVIRONMENT_FIELDS)
        for env in _rows(listed.get("environments"), f"GET {base}/environments")
        if not env.get("synthesised")
    ]
    points = await _read(service, "GET", base + "/control-points", key)
    project["controlPoints"] = [
        _kept(point, CONTROL_POINT_FIELDS)
        for point in _rows(_data(points).get("controlPoints"), f"GET {base}/control-points")
    ]
    graph = await _read(service, "GET", base + "/control-points/graph", key)
    project["edges"] = [
        _kept(edge, EDGE_FIELDS)
        for edge in _rows(_data(graph).get("edges"), f"GET {base}/control-points/graph")
    ]
    return project


def _data(document: dict[str, Any]) -> dict[str, Any]:
    data = document.get("data")
    return data if isinstance(data, dict) else {}


def _rows(raw: object, where: str) -> list[dict[str, Any]]:
    """A list of objects, or UpstreamError saying where the service answered otherwise."""
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(row, dict) for row in raw):
        raise UpstreamError(f"{where}: expected a list of objects")
    return raw


def _kept(row: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    return {name: row[name] for name in names if row.get(name) is not None}


async def _read(
    service: Service,
    method: str,
    path: str,
    key: str,
    body: object = None,
) -> dict[str, Any]:
    sent = None if body is None else orjson.dumps(body)
    answer = await service.ask(method, path, key=key, body=sent)
    document = answer.json()
    if answer.status != 200:
        raise UpstreamError(f"{method} {path} answered {answer.status}: {_said(document)}")
    if not isinstance(document, dict):
        shown = "not JSON" if document is None else "JSON that is not an object"
        raise UpstreamError(f"{method} {path} answered 200 with {shown}")
    return document


def _said(document: object) -> str:
    """The service's own error words, if it gave any (never anything of the request)."""
    if isinstance(document, dict):
        error = document.get("error")
        if isinstance(error, dict):
            return str(error.get("message", error.get("code", "")))[:200]
        return str(document.get("message", error or ""))[:200]
    return "not JSON"


def _quoted(value: object) -> str:
    """A value of the service's in the header, on one line that no value can end: a string
    written by the YAML emitter double-quoted (a newline, or any line break YAML knows, is
    escaped), anything else as ASCII JSON. So nothing the service says becomes YAML."""
    import yaml

    if not isinstance(value, str):
        return json.dumps(value, ensure_ascii=True)
    text = yaml.safe_dump(value, default_style='"', allow_unicode=False, width=2**31)
    return text.removesuffix("\n...\n").strip()


def fixture_text(recording: Recording, upstream: Upstream, context: str) -> str:
    """The fixture file: a header that says what it is and where keys go, then YAML."""
    import yaml

    header = [
        f"# Recorded by `svc-stub record` from {upstream.shown}, for targetingKey "
        f"{_quoted(context)}.",
        "# Each flag serves what the service answered that context, to every context.",
        "# Keys are never recorded. Runtime and vendor routes take any non-empty key unless you",
        "# list yours (svc-stub --api-key, or a keys: section).",
    ]
    if "management" in recording.document:
        header.append(
            f"# The management plane takes {RECORDED_ORG_KEY} (and {RECORDED_CI_READ_KEY} where"
        )
        header.append("# listed): replace them below with the keys your tool sends, or send these.")
    header += [f"# {note}" for note in recording.notes]
    body = yaml.safe_dump(recording.document, sort_keys=False, allow_unicode=True, width=100)
    if any(breaking in body for breaking in _UNICODE_LINE_BREAKS):
        body = yaml.safe_dump(recording.document, sort_keys=False, allow_unicode=False, width=100)
    return "\n".join(header) + "\n" + body


_UNICODE_LINE_BREAKS = ("\x85", "\u2028", "\u2029")
"""Line breaks to a YAML reader that PyYAML writes as they are with `allow_unicode`: inside a
quoted value they would be read back as a space, so a file holding one is written escaped."""
