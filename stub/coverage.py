"""What a run's tests exercised: each route a client called against each outcome it was served
(success, each refusal, each fault mode), counted as requests are journaled, for a namespace
and for the whole run, and held against a profile of what a kind of client is expected to meet.

Counting is one increment of a small key per request, in the namespace's count alone (the run's
is the namespaces' counts together, kept when one goes); a cell's outcome is named when the
coverage is read. The fixture flags a request was answered (evaluate's decisions, `/flags`, the
definitions poll) are kept as a set, so the flags no test ever read can be named. It survives
`reset` (a test's reset is not the run's), and is bounded: past `MAX_CELLS` distinct cells, new
ones are counted together; past `MAX_FLAGS` flags read, no more are named.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from typing import Any, NamedTuple

MAX_CELLS = 4096
"""Distinct (route, status, fault) keys kept; a status fault can make up to 500 per route."""
MAX_FLAGS = 4096
"""Flags read that are named: a fixture set of more is beyond what a test suite reads."""
SUMMARY_GAPS = 5
SUMMARY_FLAGS = 5
"""What a summary line names before it says how many more (the report has them all)."""
OK, NO_ANSWER, OTHER = "ok", "no answer", "other"


Cell = tuple[str | None, int | None] | tuple[str | None, int | None, str, str]
"""What one request met: its route (None: an unknown path) and the status it was answered
with (None: none); and when a fault fired, its mode and source."""
Key = str | None | Cell
"""A cell as counted. A request answered 200 with no fault, nearly every one, is counted by
its route alone: a string's hash is kept in it, where a tuple's is computed at each lookup."""

_OTHER: Key = (OTHER, None)


class Coverage:
    """Counts of what requests met. The request path adds to `cells` itself (one `dict.get` and
    one store: see stub/http/exchange.py) and calls `first` only for a cell not met before."""

    __slots__ = ("cells", "flags", "last_read", "retired")

    def __init__(self) -> None:
        self.cells: dict[Key, int] = {}
        self.flags: set[str] = set()
        """The fixture flags requests were answered."""
        self.last_read: Collection[str] = ()
        """The flags added last: a client asking the same again (the same collection, as a
        remembered answer gives it) costs one comparison."""
        self.retired: Coverage | None = None
        """Where this count goes when its namespace is gone or its count is cleared: the run's."""

    def read(self, flags: Collection[str]) -> None:
        """The fixture flags a request was answered: nothing new when they are the very
        collection read last (evaluate checks that itself, to spare the call); named unless
        `MAX_FLAGS` are already."""
        if flags is not self.last_read:
            self.last_read = flags
            if len(self.flags) < MAX_FLAGS:  # inline: a request that asks anew reads here
                self.flags.update(flags)

    def first(self, key: Key) -> None:
        """A cell not met before: counted, unless `MAX_CELLS` are, then counted as other."""
        cells = self.cells
        if len(cells) < MAX_CELLS:
            cells[key] = 1
        else:
            cells[_OTHER] = cells.get(_OTHER, 0) + 1

    def add(self, other: Coverage) -> None:
        for key, count in other.cells.items():
            if key in self.cells or len(self.cells) < MAX_CELLS:
                self.cells[key] = self.cells.get(key, 0) + count
            else:
                self.cells[_OTHER] = self.cells.get(_OTHER, 0) + count
        if len(self.flags) < MAX_FLAGS:
            self.flags.update(other.flags)

    def retire(self) -> None:
        """Its namespace is gone, or a test cleared its count: the run keeps what it met."""
        if self.retired is not None:
            self.retired.add(self)
        self.cells.clear()
        self.flags.clear()
        self.last_read = ()


def key_of(route: str | None, status: int | None, mode: str | None, source: str | None) -> Key:
    if mode is None or source is None:
        return route if status == 200 else (route, status)
    return (route, status, mode, source)


def cell_of(key: Key) -> Cell:
    """The cell a key counts."""
    return key if isinstance(key, tuple) else (key, 200)


def outcome(key: Key) -> str:
    """A cell's outcome in the words a user acts on: `ok`, a refusal's status (`401`), a fault
    mode (`fault 429`, `fault delay`), `rate limited` or `no answer`."""
    cell = cell_of(key)
    status = cell[1]
    if len(cell) == 4:
        if cell[3] == "rate-limit":
            return "rate limited"
        if cell[2] != "none":
            return f"fault {cell[2]}"
    if status is None:
        return NO_ANSWER
    if status < 400:
        return OK
    return str(status)


def matrix(coverage: Coverage) -> list[dict[str, Any]]:
    """Every cell met, by route then outcome: `{"route", "outcome", "count"}`."""
    merged: Counter[tuple[str, str]] = Counter()
    for key, count in coverage.cells.items():
        merged[(cell_of(key)[0] or "unknown path", outcome(key))] += count
    return [
        {"route": route, "outcome": met, "count": count}
        for (route, met), count in sorted(merged.items())
    ]


class Expected(NamedTuple):
    """One cell a profile expects: a route, the outcomes any of which meets it, and the words
    that name it when it was never met."""

    route: str
    outcomes: frozenset[str]
    says: str


class Profile(NamedTuple):
    name: str
    description: str
    expected: tuple[Expected, ...]


def _survived(route: str) -> list[Expected]:
    """What any client of a route must survive: a success, a 401, a 429 with Retry-After, the
    backend unavailable, a timeout."""
    return [
        Expected(route, frozenset({OK}), f"{route} was never answered successfully"),
        Expected(route, frozenset({"401", "fault 401"}), f"{route} never met a 401"),
        Expected(
            route,
            frozenset({"fault 429", "rate limited"}),
            f"{route} never met a 429 with Retry-After",
        ),
        Expected(
            route,
            frozenset({"fault 500", "500", "503"}),
            f"{route} never met the backend unavailable (a 500 or 503)",
        ),
        Expected(
            route,
            frozenset({"fault delay", "fault hang"}),
            f"{route} never met a timeout (a delay or a hang)",
        ),
    ]


def _runtime() -> Profile:
    """The spec's error kinds a runtime client must survive, on evaluate and capture: those of
    every route, and a malformed and a truncated answer; quota limiting on evaluate."""
    cells: list[Expected] = []
    for route in ("evaluate", "capture"):
        cells += [
            *_survived(route),
            Expected(
                route,
                frozenset({"fault invalid_json"}),
                f"{route} never met a malformed answer (invalid_json)",
            ),
            Expected(
                route, frozenset({"fault truncated"}), f"{route} never met a truncated answer"
            ),
        ]
    cells.append(
        Expected(
            "evaluate",
            frozenset({"fault quota_limited"}),
            "evaluate never met quota limiting (quota_limited)",
        )
    )
    return Profile("runtime", "a client of the runtime plane (evaluate, capture)", tuple(cells))


def _vendor() -> Profile:
    """What a PostHog client meets on the vendor routes: refusals, an outage, a timeout."""
    cells = [cell for route in ("flags", "definitions", "batch") for cell in _survived(route)]
    return Profile("vendor", "a PostHog client of the vendor routes", tuple(cells))


def _management() -> Profile:
    """What an infrastructure tool (a Terraform provider) meets on each resource."""
    cells: list[Expected] = []
    for resource in ("projects", "environments"):
        cells += [
            Expected(resource, frozenset({OK}), f"{resource} was never answered successfully"),
            Expected(resource, frozenset({"401", "fault 401"}), f"{resource} never met a 401"),
            Expected(resource, frozenset({"404"}), f"{resource} never met a 404 (a row gone)"),
            Expected(resource, frozenset({"409"}), f"{resource} never met a 409 (a conflict)"),
            Expected(
                resource,
                frozenset({"fault 500", "500", "503", "fault status"}),
                f"{resource} never met the service unavailable (a 500 or 503)",
            ),
        ]
    return Profile("management", "an infrastructure tool of the management plane", tuple(cells))


PROFILES: Mapping[str, Profile] = {
    profile.name: profile for profile in (_runtime(), _vendor(), _management())
}


def report(
    scope: str, coverage: Coverage, profiles: Iterable[Profile], fixture_flags: Collection[str]
) -> dict[str, Any]:
    """`GET /_test/coverage`'s answer: the cells met, each profile held against them, the
    fixture flags read and never read, and the summary every helper prints at a run's end."""
    held = {profile.name: held_against(coverage, profile) for profile in profiles}
    flags = {
        "read": sorted(coverage.flags),
        "neverRead": sorted(set(fixture_flags) - coverage.flags),
        "of": len(fixture_flags),
    }
    return {
        "scope": scope,
        "cells": matrix(coverage),
        "profiles": held,
        "flags": flags,
        "summary": summary(held, flags),
    }


def summary(profiles: Mapping[str, Mapping[str, Any]], flags: Mapping[str, Any]) -> list[str]:
    """A line for each profile a cell of which was met (else one line that says none was),
    its first gaps in words; and one for the fixture flags never read."""
    lines = []
    for name, held in sorted(profiles.items()):
        if held["met"]:
            gaps = _first([gap["says"] for gap in held["gaps"]], SUMMARY_GAPS, "; ")
            lines.append(
                f"svc-stub coverage: {name} {held['met']} of {held['of']} cells met; "
                + (f"gaps: {gaps}" if gaps else "no gaps")
            )
    if not lines:
        each = ", ".join(f"{name} 0 of {held['of']}" for name, held in sorted(profiles.items()))
        lines.append(f"svc-stub coverage: no cell of any profile met ({each or 'no profile'})")
    if flags["of"]:
        never = flags["neverRead"]
        lines.append(
            f"svc-stub coverage: fixture flags read {flags['of'] - len(never)} of {flags['of']}; "
            + (f"never read: {_first(never, SUMMARY_FLAGS, ', ')}" if never else "every one read")
        )
    return lines


def _first(names: list[str], shown: int, between: str) -> str:
    """The first `shown` names, then how many more."""
    if len(names) <= shown:
        return between.join(names)
    return between.join([*names[:shown], f"and {len(names) - shown} more"])


def held_against(coverage: Coverage, profile: Profile) -> dict[str, Any]:
    """The profile's cells met and not, the gaps first in words."""
    return profile_report({(cell_of(key)[0], outcome(key)) for key in coverage.cells}, profile)


def profile_report(met: set[tuple[str | None, str]], profile: Profile) -> dict[str, Any]:
    """`met`: (route, outcome) pairs, as `matrix` names them."""
    gaps = [cell for cell in profile.expected if not _met(cell, met)]
    return {
        "name": profile.name,
        "description": profile.description,
        "met": len(profile.expected) - len(gaps),
        "of": len(profile.expected),
        "gaps": [
            {"route": cell.route, "expected": sorted(cell.outcomes), "says": cell.says}
            for cell in gaps
        ],
    }


def _met(cell: Expected, met: Iterable[tuple[str | None, str]]) -> bool:
    """A resource's cell (`projects`) is met by any of its routes (`projects.create`)."""
    return any(
        route is not None
        and (route == cell.route or route.startswith(cell.route + "."))
        and found in cell.outcomes
        for route, found in met
    )
