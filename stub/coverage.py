"""What a run's tests exercised: each route a client called against each outcome it was served
(success, each refusal, each fault mode), counted as requests are journaled, for a namespace
and for the whole run, and held against a profile of what a kind of client is expected to meet.

Counting is one increment of a small key per request (the request path pays nothing else); a
cell's outcome is named when the coverage is read. It survives `reset` (a test's reset is not
the run's), and is bounded: past `MAX_CELLS` distinct cells, new ones are counted together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

MAX_CELLS = 4096
"""Distinct (route, status, fault) keys kept; a status fault can make up to 500 per route."""
OK, NO_ANSWER, OTHER = "ok", "no answer", "other"


class Key(NamedTuple):
    """What one request met, as recorded: its route (None: an unknown path), the status it was
    answered with (None: none), and the fault that fired (its mode and source), if one did."""

    route: str | None
    status: int | None
    mode: str | None
    source: str | None


_OTHER = Key(OTHER, None, None, None)


class Coverage:
    """Counts of what requests met; `count` is the request path's one call."""

    __slots__ = ("cells",)

    def __init__(self) -> None:
        self.cells: Counter[Key] = Counter()

    def count(self, key: Key, times: int = 1) -> None:
        cells = self.cells
        if key in cells or len(cells) < MAX_CELLS:
            cells[key] += times
        else:
            cells[_OTHER] += times

    def clear(self) -> None:
        self.cells.clear()


def outcome(key: Key) -> str:
    """A cell's outcome in the words a user acts on: `ok`, a refusal's status (`401`), a fault
    mode (`fault 429`, `fault delay`), `rate limited` or `no answer`."""
    if key.source == "rate-limit":
        return "rate limited"
    if key.mode is not None and key.mode != "none":
        return f"fault {key.mode}"
    if key.status is None:
        return NO_ANSWER
    if key.status < 400:
        return OK
    return str(key.status)


def matrix(coverage: Coverage) -> list[dict[str, Any]]:
    """Every cell met, by route then outcome: `{"route", "outcome", "count"}`."""
    merged: Counter[tuple[str, str]] = Counter()
    for key, count in coverage.cells.items():
        merged[(key.route or "unknown path", outcome(key))] += count
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


PROFILES: Mapping[str, Profile] = {profile.name: profile for profile in (_runtime(),)}


def held_against(coverage: Coverage, profile: Profile) -> dict[str, Any]:
    """The profile's cells met and not, the gaps first in words."""
    met = {(key.route, outcome(key)) for key in coverage.cells}
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
    return any(route == cell.route and found in cell.outcomes for route, found in met)
