"""Comparing the two answers to a probe as a client would notice: the status, the headers
clients read, the JSON shape everywhere (members, types, nesting, envelopes, error codes) and,
where the stub serves what was recorded from this service, the values. Ids and timestamps
compare by shape."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import orjson

from stub.upstream.transport import Answer


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


Accepted = frozenset[tuple[str, str, str, str]]
"""(probe name, where, upstream, stub) of differences a team has accepted, the two sides as
shown: the same place drifting again (another value) is new drift."""


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
        yield from _keyed_differences(theirs, ours, lambda member: f"{at}.{member}", values)
    elif isinstance(theirs, list):
        yield from _list_differences(theirs, ours, at, values)
    elif _compared(at, values) and theirs != ours:
        yield Difference(at, theirs, ours)


def _keyed_differences(
    theirs: dict[Any, Any], ours: dict[Any, Any], where: Callable[[Any], str], values: bool
) -> Iterator[Difference]:
    """Two maps compared key by key (an object's members, or list items paired by a key):
    what one side has and the other lacks, then what both have, each `where` it stands."""
    for key in sorted(theirs.keys() | ours.keys(), key=str):
        if key not in ours:
            yield Difference(where(key), PRESENT, ABSENT)
        elif key not in theirs:
            yield Difference(where(key), ABSENT, PRESENT)
        else:
            yield from _differences(theirs[key], ours[key], where(key), values)


def _list_differences(
    theirs: list[Any], ours: list[Any], at: str, values: bool
) -> Iterator[Difference]:
    pairing = _pairing_key(theirs, ours)
    if values and pairing is not None:
        yield from _keyed_differences(
            {item[pairing]: item for item in theirs},
            {item[pairing]: item for item in ours},
            lambda key: f"{at}[{pairing}={key}]",
            values,
        )
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


def type_of(value: object) -> str:
    kind = _kind(value)
    return "object" if kind in ("array", "object") else kind


def _shown(value: object) -> str:
    text = str(value) if isinstance(value, Kind) else orjson.dumps(value).decode()
    return text if len(text) <= 80 else text[:77] + "..."
