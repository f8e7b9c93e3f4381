"""`svc-stub verify`: the same probes sent to the real service and to svc-stub, and their answers
compared: the status, the headers clients read, the JSON shape everywhere (members, types,
nesting, envelopes, error codes) and, where the stub serves what was recorded from this
service, the values. Probes are data (`PROBES`); ids and timestamps compare by shape. Every
answer is scrubbed of keys as it arrives, so no line, report or baseline can repeat one."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, NamedTuple

import aiohttp
import orjson

from stub.config import Upstream
from stub.upstream.record import (
    DEFINITIONS_SPELLINGS,
    FLAGS_SPELLINGS,
    RECORDING_CONTEXT,
)
from stub.upstream.transport import MAX_ANSWER_BYTES, Answer, Secrets, call

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
SHOWN_PER_LINE = 4
"""Differences written on a probe's line; the report has every one."""


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
    capture: tuple[str, str] | None = None
    """(name, member path): remember this member of the answer, per side, as `{name}`."""
    vendor: bool = False
    """A legacy vendor route: skipped where the upstream does not serve it (404)."""


def _evaluate(name: str, body: dict[str, Any]) -> Probe:
    return Probe(f"evaluate/{name}", "POST", "/v1/flags/evaluate", "runtime", body)


CONTEXT = {"targetingKey": RECORDING_CONTEXT}
SIGNAL = {"type": "signal", "targetingKey": RECORDING_CONTEXT, "name": "svc-stub-verify"}
SCRATCH = "/v1/projects/{scratch}"
VENDOR_FLAGS = {"api_key": "{vendor-key}", "distinct_id": RECORDING_CONTEXT}

PROBES: tuple[Probe, ...] = (
    _evaluate("one-flag", {**CONTEXT, "flagKeys": ["{flag}"]}),
    _evaluate("several", {**CONTEXT, "flagKeys": "{flags}"}),
    _evaluate("all", CONTEXT),
    _evaluate("missing-flag", {**CONTEXT, "flagKeys": [MISSING_FLAG]}),
    *(_evaluate(f"type-{kind}", {**CONTEXT, "flagKeys": [f"{{flag:{kind}}}"]}) for kind in TYPES),
    _evaluate("no-targeting-key", {"flagKeys": ["{flag}"]}),
    Probe("evaluate/malformed-body", "POST", "/v1/flags/evaluate", "runtime", Raw(b"{not json")),
    # A valid batch is stored by the service for good (no route removes it): a write.
    Probe("capture/valid", "POST", "/v1/capture", "runtime", {"events": [SIGNAL]}, writes=True),
    Probe("capture/empty", "POST", "/v1/capture", "runtime", {"events": []}),
    Probe("capture/bad", "POST", "/v1/capture", "runtime", {"events": "not a list"}),
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
    *(
        Probe(name, "POST", path, "none", {"api_key": "{vendor-key}", "batch": []}, vendor=True)
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


class Side(NamedTuple):
    """One side of the comparison: where it is, the keys it takes, what was learnt of it."""

    name: str
    base: Upstream
    keys: Mapping[str, str]
    """runtime, org, vendor, ci-read: the ones this side has."""
    known: dict[str, Any]
    """{flag}, {project} and the like (discovered on the upstream), and captured ids."""
    secrets: Secrets = Secrets(())
    """Taken out of every answer as it arrives."""
    max_answer_bytes: int = MAX_ANSWER_BYTES


class Kind(str):
    """A description (a JSON type, present or absent), shown as words rather than a value."""

    __slots__ = ()


PRESENT, ABSENT = Kind("present"), Kind("absent")


class Difference(NamedTuple):
    where: str
    upstream: object
    stub: object

    def __str__(self) -> str:
        return f"{self.where}: {_shown(self.upstream)} (upstream) vs {_shown(self.stub)} (stub)"


class Outcome(NamedTuple):
    probe: Probe
    result: Literal["same", "differs", "accepted", "skipped"]
    differences: tuple[Difference, ...] = ()
    why: str = ""

    def line(self) -> str:
        word = {"same": "SAME", "differs": "DIFFERS", "accepted": "ACCEPTED", "skipped": "SKIPPED"}
        text = f"{word[self.result]:<8} {self.probe.name}"
        if self.differences:
            shown = self.differences[:SHOWN_PER_LINE]
            text += ": " + "; ".join(str(d) for d in shown)
            if len(self.differences) > len(shown):
                text += f"; and {len(self.differences) - len(shown)} more (see --report)"
        return text + (f": {self.why}" if self.why else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "probe": self.probe.name,
            "method": self.probe.method,
            "path": self.probe.path,
            "outcome": self.result,
            "differences": [
                {"where": d.where, "upstream": d.upstream, "stub": d.stub} for d in self.differences
            ],
            "why": self.why or None,
        }


Accepted = frozenset[tuple[str, str, str, str]]
"""(probe name, where, upstream, stub) of differences a team has accepted, the two sides as
shown: the same place drifting again (another value) is new drift."""


async def discover(client: aiohttp.ClientSession, upstream: Side) -> None:
    """What the probes name: the flags the upstream serves (one of each type) and a project."""
    answer = await _send(client, upstream, _evaluate("all", CONTEXT))
    decisions = _member(answer.json(), "decisions")
    found = [
        d for d in decisions if isinstance(d, dict) and d.get("found") and _named(d, "flagKey")
    ]
    if found:
        upstream.known["flag"] = found[0]["flagKey"]
        upstream.known["flags"] = [d["flagKey"] for d in found[:3]]
    for decision in found:
        kind = _type_of(decision.get("value"))
        upstream.known.setdefault(f"flag:{kind}", decision["flagKey"])
    if "org" in upstream.keys:
        projects = await _send(client, upstream, Probe("", "GET", "/v1/projects", "org"))
        listed = [p for p in _member(projects.json(), "projects") if _named(p, "projectId")]
        if listed:
            upstream.known["project"] = listed[0]["projectId"]


def _member(document: object, name: str) -> list[Any]:
    """`document[name]` when it is a list (else empty: the probes then say what is missing)."""
    found = document.get(name) if isinstance(document, dict) else None
    return found if isinstance(found, list) else []


def _named(item: object, name: str) -> bool:
    return isinstance(item, dict) and isinstance(item.get(name), str)


async def run_probes(
    client: aiohttp.ClientSession,
    upstream: Side,
    stub: Side,
    *,
    writes: bool,
    values: bool,
    accepted: Accepted = frozenset(),
) -> list[Outcome]:
    await discover(client, upstream)
    for name in ("flag", "flags", "project", *(f"flag:{kind}" for kind in TYPES)):
        if name in upstream.known:
            stub.known[name] = upstream.known[name]
    slug = f"svc-stub-verify-{int(time.time())}"
    upstream.known["slug"] = stub.known["slug"] = slug
    outcomes = []
    try:
        for probe in PROBES:
            outcomes.append(await _probe(client, probe, upstream, stub, writes, values, accepted))
    finally:  # interrupted or not, no scratch project outlives the run
        if writes:
            for side in (upstream, stub):
                await _remove_scratch(client, side)
    return outcomes


async def _remove_scratch(client: aiohttp.ClientSession, side: Side) -> None:
    """Every project of this run's slug, found by listing (its id may never have been read:
    an answer lost after the service made the project)."""
    if "org" not in side.keys:
        return
    listed = await _send(client, side, Probe("", "GET", "/v1/projects", "org"))
    projects = (listed.json() or {}).get("projects") if listed.status == 200 else None
    for project in projects if isinstance(projects, list) else []:
        if isinstance(project, dict) and project.get("slug") == side.known.get("slug"):
            side.known["scratch"] = str(project.get("projectId"))
            await _send(client, side, Probe("", "DELETE", SCRATCH, "org"))


async def _probe(
    client: aiohttp.ClientSession,
    probe: Probe,
    upstream: Side,
    stub: Side,
    writes: bool,
    values: bool,
    accepted: Accepted,
) -> Outcome:
    missing = _missing(probe, upstream, stub, writes)
    if missing:
        return Outcome(probe, "skipped", why=missing)
    theirs = await _send(client, upstream, probe)
    if probe.vendor and theirs.status == 404:
        return Outcome(probe, "skipped", why="the upstream does not serve this spelling (404)")
    ours = await _send(client, stub, probe)
    for side, answer in ((upstream, theirs), (stub, ours)):
        _remember(probe, side, answer)
    differences = tuple(compare(theirs, ours, values=values))
    if not differences:
        return Outcome(probe, "same")
    if all(accepted_key(probe.name, d) in accepted for d in differences):
        return Outcome(probe, "accepted", differences)
    return Outcome(probe, "differs", differences)


def _missing(probe: Probe, upstream: Side, stub: Side, writes: bool) -> str:
    """Why the probe cannot run here ('' when it can)."""
    if probe.writes and not writes:
        return "writes only with --allow-writes"
    needs = {"org": "org", "ci-read": "ci-read", "org-on-runtime": "org", "vendor": "vendor"}
    role = needs.get(probe.key)
    for side in (upstream, stub):
        if role is not None and role not in side.keys:
            return f"no {role} key for the {side.name}"
    for name in _placeholders(probe):
        if name in _CAPTURED_BY:
            unfilled = _unfilled(name, upstream, stub)
            if unfilled:
                return unfilled
        elif name not in ("slug", "vendor-key") and name not in upstream.known:
            return f"the upstream serves no {name.replace(':', ' of type ')}"
    return ""


def _unfilled(name: str, upstream: Side, stub: Side) -> str:
    """Why an id captured from an earlier answer is missing on a side ('' when it is not):
    a probe never sends a placeholder as it is written (`/v1/projects/{scratch}`)."""
    for side in (upstream, stub):
        if name not in side.known:
            return f"no {{{name}}} on the {side.name}: {_CAPTURED_BY[name]} did not make one"
    return ""


_PLACEHOLDER = re.compile(r"\{([a-z-]+(?::[a-z]+)?)\}")
_CAPTURED_BY = {probe.capture[0]: probe.name for probe in PROBES if probe.capture is not None}
"""Each id a probe remembers from its answer (`{scratch}`), by the probe that does."""


def _placeholders(probe: Probe) -> Iterator[str]:
    body = "" if isinstance(probe.body, Raw) else orjson.dumps(probe.body).decode()
    yield from _PLACEHOLDER.findall(probe.path + body)


async def _send(client: aiohttp.ClientSession, side: Side, probe: Probe) -> Answer:
    body = probe.body
    if isinstance(body, Raw):
        sent: bytes | None = body.data
    else:
        sent = None if body is None else orjson.dumps(_filled(body, side))
    path = _filled(probe.path, side)
    key = _key(probe.key, side)
    answer = await call(
        client, side.base, probe.method, path, key=key, body=sent, max_bytes=side.max_answer_bytes
    )
    return side.secrets.answer(answer)


def _key(role: KeyRole, side: Side) -> str | None:
    return {
        "none": None,
        "unknown-runtime": UNKNOWN_RUNTIME_KEY,
        "unknown-org": UNKNOWN_ORG_KEY,
        "org-on-runtime": side.keys.get("org"),
        "runtime-on-management": side.keys.get("runtime"),
    }.get(role, side.keys.get(role))


def _filled(value: Any, side: Side) -> Any:
    if isinstance(value, str):
        if value == "{flags}":
            return side.known.get("flags", [])
        for name, known in {**side.known, "vendor-key": _vendor_key(side)}.items():
            if isinstance(known, str):
                value = value.replace("{" + name + "}", known)
        return value
    if isinstance(value, dict):
        return {k: _filled(v, side) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v, side) for v in value]
    return value


def _vendor_key(side: Side) -> str:
    return side.keys.get("vendor") or side.keys.get("runtime", "")


def _remember(probe: Probe, side: Side, answer: Answer) -> None:
    if probe.capture is not None and answer.status in (200, 201):
        name, member = probe.capture
        found: Any = answer.json()
        for part in member.split("."):
            found = found.get(part) if isinstance(found, dict) else None
        if isinstance(found, str):
            side.known[name] = found


_HEADERS = ("Content-Type", "Retry-After", "ETag", "Allow")
_BY_SHAPE = ("message", "requestId", "etag")


def compare(theirs: Answer, ours: Answer, *, values: bool) -> Iterator[Difference]:
    """Every way the stub's answer differs from the upstream's, as a client would notice."""
    if theirs.status != ours.status:
        yield Difference("status", theirs.status, ours.status)
    for header in _HEADERS:
        mine, their = (_header(header, a.headers.get(header.lower())) for a in (ours, theirs))
        if mine != their:
            yield Difference(f"header {header}", their, mine)
    if theirs.body or ours.body:
        their_json, our_json = theirs.json(), ours.json()
        if (their_json is None) != (our_json is None):
            yield Difference("body", _body_kind(their_json), _body_kind(our_json))
        elif their_json is not None:
            yield from _differences(their_json, our_json, "body", values)


def _body_kind(document: object) -> Kind:
    return Kind("not JSON") if document is None else _kind(document)


def _header(name: str, value: str | None) -> object:
    """What a client reads of it: the media type, that there is a Retry-After or an ETag, the
    set of methods allowed."""
    if value is None:
        return None
    if name == "Content-Type":
        return value.partition(";")[0].strip().lower()
    if name == "Allow":
        return ", ".join(sorted(m.strip().upper() for m in value.split(",")))
    return PRESENT


def _differences(theirs: Any, ours: Any, at: str, values: bool) -> Iterator[Difference]:
    if _kind(theirs) != _kind(ours):
        yield Difference(at, _kind(theirs), _kind(ours))
    elif isinstance(theirs, dict):
        for member in sorted(theirs.keys() | ours.keys()):
            where = f"{at}.{member}"
            if member not in ours:
                yield Difference(where, PRESENT, ABSENT)
            elif member not in theirs:
                yield Difference(where, ABSENT, PRESENT)
            else:
                yield from _differences(theirs[member], ours[member], where, values)
    elif isinstance(theirs, list):
        yield from _list_differences(theirs, ours, at, values)
    elif _compared(at, values) and theirs != ours:
        yield Difference(at, theirs, ours)


def _list_differences(
    theirs: list[Any], ours: list[Any], at: str, values: bool
) -> Iterator[Difference]:
    pairing = _pairing_key(theirs, ours)
    if values and pairing is not None:
        mine = {item[pairing]: item for item in ours}
        their = {item[pairing]: item for item in theirs}
        for key in sorted(their.keys() | mine.keys(), key=str):
            where = f"{at}[{pairing}={key}]"
            if key not in mine:
                yield Difference(where, PRESENT, ABSENT)
            elif key not in their:
                yield Difference(where, ABSENT, PRESENT)
            else:
                yield from _differences(their[key], mine[key], where, values)
    elif values and len(theirs) != len(ours):
        yield Difference(at, Kind(f"{len(theirs)} items"), Kind(f"{len(ours)} items"))
    elif values:
        for index, (a, b) in enumerate(zip(theirs, ours, strict=True)):
            yield from _differences(a, b, f"{at}[{index}]", values)
    elif theirs and ours:  # shapes only: the first item of each stands for the rest
        yield from _differences(theirs[0], ours[0], f"{at}[0]", values)


def accepted_key(probe: str, difference: Difference) -> tuple[str, str, str, str]:
    return (probe, difference.where, _shown(difference.upstream), _shown(difference.stub))


def _pairing_key(theirs: list[Any], ours: list[Any]) -> str | None:
    """The member that names an item in both lists (flagKey, projectId, ...), if there is one."""
    items = theirs + ours
    if not items or not all(isinstance(item, dict) for item in items):
        return None
    for key in ("flagKey", "controlPointId", "edgeId", "envId", "projectId", "slug", "key"):
        if all(isinstance(item.get(key), str) for item in items):
            return key
    return None


def _compared(at: str, values: bool) -> bool:
    """Error codes always; other values only when the stub serves a recording, and never
    ids, timestamps, messages or request ids (those compare by shape)."""
    member = at.rpartition(".")[2].partition("[")[0]
    if at in ("body.error", "body.error.code"):
        return True
    if not values or member in _BY_SHAPE:
        return False
    return not (member == "id" or member.endswith(("Id", "At")))


def _kind(value: object) -> Kind:
    if value is None:
        return Kind("null")
    if isinstance(value, bool):
        return Kind("boolean")
    if isinstance(value, int | float):
        return Kind("number")
    if isinstance(value, str):
        return Kind("string")
    return Kind("array" if isinstance(value, list) else "object")


def _type_of(value: object) -> str:
    kind = _kind(value)
    return "object" if kind in ("array", "object") else kind


def _shown(value: object) -> str:
    text = str(value) if isinstance(value, Kind) else orjson.dumps(value).decode()
    return text if len(text) <= 80 else text[:77] + "..."


def summary(outcomes: Sequence[Outcome]) -> str:
    counts = {kind: sum(o.result == kind for o in outcomes) for kind in ("same", "differs")}
    accepted = sum(o.result == "accepted" for o in outcomes)
    skipped = sum(o.result == "skipped" for o in outcomes)
    return (
        f"{len(outcomes)} probes: {counts['same']} same, {counts['differs']} differ, "
        f"{accepted} accepted, {skipped} skipped"
    )
