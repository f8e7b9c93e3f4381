"""`svc-stub verify`: the probes (`probes.py`) sent to the real service and to svc-stub, and
each pair of answers compared (`comparison.py`) into an outcome. Every answer is scrubbed of
keys as it arrives, so no line, report or baseline can repeat one."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, NamedTuple

import aiohttp
import orjson

from stub.config import Upstream
from stub.upstream.comparison import Accepted, Difference, accepted_key, compare, type_of
from stub.upstream.probes import (
    CONTEXT,
    PROBES,
    SCRATCH,
    TYPES,
    UNKNOWN_ORG_KEY,
    UNKNOWN_RUNTIME_KEY,
    KeyRole,
    Probe,
    Raw,
    evaluate_probe,
)
from stub.upstream.transport import MAX_ANSWER_BYTES, Answer, Secrets, call

SHOWN_PER_LINE = 4
"""Differences written on a probe's line; the report has every one."""


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


async def discover(client: aiohttp.ClientSession, upstream: Side) -> None:
    """What the probes name: the flags the upstream serves (one of each type) and a project."""
    answer = await _send(client, upstream, evaluate_probe("all", CONTEXT))
    decisions = _member(answer.json(), "decisions")
    found = [
        d for d in decisions if isinstance(d, dict) and d.get("found") and _named(d, "flagKey")
    ]
    if found:
        upstream.known["flag"] = found[0]["flagKey"]
        upstream.known["flags"] = [d["flagKey"] for d in found[:3]]
    for decision in found:
        kind = type_of(decision.get("value"))
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


def summary(outcomes: Sequence[Outcome]) -> str:
    counts = {kind: sum(o.result == kind for o in outcomes) for kind in ("same", "differs")}
    accepted = sum(o.result == "accepted" for o in outcomes)
    skipped = sum(o.result == "skipped" for o in outcomes)
    return (
        f"{len(outcomes)} probes: {counts['same']} same, {counts['differs']} differ, "
        f"{accepted} accepted, {skipped} skipped"
    )
