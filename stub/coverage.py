"""What a run's tests exercised: each route a client called against each outcome it was served
(success, each refusal, each fault mode), counted as requests are journaled, for a namespace
and for the whole run, and held against a profile of what a kind of client is expected to meet.

Counting is one increment of a small key per request, in the namespace's count alone (the run's
is the namespaces' counts together, kept when one goes); a cell's outcome is named when the
coverage is read. It survives `reset` (a test's reset is not the run's), and is bounded: past
`MAX_CELLS` distinct cells, new ones are counted together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

MAX_CELLS = 4096
"""Distinct (route, status, fault) keys kept; a status fault can make up to 500 per route."""
OK, NO_ANSWER, OTHER = "ok", "no answer", "other"


Key = tuple[str | None, int | None] | tuple[str | None, int | None, str, str]
"""What one request met, as recorded: its route (None: an unknown path) and the status it was
answered with (None: none); and when a fault fired, its mode and source. A plain request's key
is the pair: a tuple of a string and an int hashes in C, where an enum would not."""

_OTHER: Key = (OTHER, None)


class Coverage:
    """Counts of what requests met. The request path adds to `cells` itself (one `dict.get` and
    one store: see stub/http/exchange.py) and calls `first` only for a cell not met before."""

    __slots__ = ("cells", "retired")

    def __init__(self) -> None:
        self.cells: dict[Key, int] = {}
        self.retired: Coverage | None = None
        """Where this count goes when its namespace is gone or its count is cleared: the run's."""

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

    def retire(self) -> None:
        """Its namespace is gone, or a test cleared its count: the run keeps what it met."""
        if self.retired is not None:
            self.retired.add(self)
        self.cells.clear()


def key_of(route: str | None, status: int | None, mode: str | None, source: str | None) -> Key:
    return (route, status) if mode is None or source is None else (route, status, mode, source)


def outcome(key: Key) -> str:
    """A cell's outcome in the words a user acts on: `ok`, a refusal's status (`401`), a fault
    mode (`fault 429`, `fault delay`), `rate limited` or `no answer`."""
    status = key[1]
    if len(key) == 4:
        if key[3] == "rate-limit":
            return "rate limited"
        if key[2] != "none":
            return f"fault {key[2]}"
    if status is None:
        return NO_ANSWER
    if status < 400:
        return OK
    return str(status)


def matrix(coverage: Coverage) -> list[dict[str, Any]]:
    """Every cell met, by route then outcome: `{"route", "outcome", "count"}`."""
    merged: Counter[tuple[str, str]] = Counter()
    for key, count in coverage.cells.items():
        merged[(key[0] or "unknown path", outcome(key))] += count
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


def _runtime() -> Profile:
    """The spec's error kinds a runtime client must survive, on evaluate and capture."""
    cells: list[Expected] = []
    for route in ("evaluate", "capture"):
        cells += [
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
            Expected(
                route,
                frozenset({"fault invalid_json"}),
                f"{route} never met a malformed answer (invalid_json)",
            ),
            Expected(
                route,
                frozenset({"fault truncated"}),
                f"{route} never met a truncated answer",
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
    cells: list[Expected] = []
    for route in ("flags", "definitions", "batch"):
        cells += [
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


def held_against(coverage: Coverage, profile: Profile) -> dict[str, Any]:
    """The profile's cells met and not, the gaps first in words."""
    return profile_report({(key[0], outcome(key)) for key in coverage.cells}, profile)


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
