"""What a path is, before any route runs: the plane it belongs to (its envelope, its CORS
rule) and the methods it takes, so a path no route claims gets a 404 or 405 in the right
words, with the served route it most resembles, and a browser's preflight the methods the
path serves."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from aiohttp import web

from stub.http.admission import Admits
from stub.wire import ErrorBody, runtime_error_body


class Plane(NamedTuple):
    """A plane's routes and the envelope its errors (and faults) answer in."""

    routes: web.RouteTableDef
    admits: Admits | None = None
    """Whose keys its routes admit (admission.py); None: no plane's (unclaimed paths)."""
    error_body: ErrorBody = runtime_error_body
    trailing_slash: bool = True
    """Also served with a trailing slash (the runtime and vendor clients send one). The
    management plane serves the spec's paths exactly: `GET /v1/projects/` from a tool that
    built the URL from an empty id must be a 404, not the list decoded as an empty row."""
    rate_limited: bool = True
    """Its keys are charged against the per-key rate limit (the management plane has none)."""
    cors: bool = True
    """Pages on any origin may call it, as a public API's are: the runtime plane (the web
    client) and the vendor routes (browser SDKs). Not the management plane: its organisation
    key never belongs in a page, and a page must not drive a developer's stub."""


UNCLAIMED = Plane(web.RouteTableDef())
"""What a path no plane claims answers as: the runtime envelope, to any origin."""


def route_defs(table: web.RouteTableDef) -> list[web.RouteDef]:
    return [route for route in table if isinstance(route, web.RouteDef)]


def by_path(table: web.RouteTableDef) -> dict[str, list[web.RouteDef]]:
    """Routes grouped by path, so each path's methods are added one after another and aiohttp
    keeps them in one resource: a request then tests one pattern per path, not one per route."""
    grouped: dict[str, list[web.RouteDef]] = {}
    for route in route_defs(table):
        grouped.setdefault(route.path, []).append(route)
    return grouped


@dataclass(slots=True)
class Paths:
    """Every served path template: the methods it takes and the plane it belongs to, so a
    path no route claims gets a 405 or 404 in the right plane's words, and a browser's
    preflight the methods the path serves."""

    _methods: dict[str, set[str]] = field(default_factory=dict)
    _patterns: dict[str, re.Pattern[str]] = field(default_factory=dict)
    """Compiled on the first 404 or 405: most runs never need one, and start-up would pay."""
    _prefixes: dict[str, Plane] = field(default_factory=dict)

    def add(self, method: str, path: str, plane: Plane) -> None:
        self._methods.setdefault(path, set()).add(method)
        self._prefixes.setdefault(_prefix(path), plane)

    def allowed(self, path: str) -> list[str]:
        if not self._patterns:
            # a placeholder matches what aiohttp's does: no `{` or `}` in it, so an id holding
            # one is a 404 here as there, never a 405 that allows the very method asked
            self._patterns = {
                template: re.compile(re.sub(r"\\\{\w+\\\}", "[^{}/]+", re.escape(template)))
                for template in self._methods
            }
        for template, pattern in self._patterns.items():
            if pattern.fullmatch(path):
                return sorted(self._methods[template])
        return []

    def closest(self, path: str) -> str | None:
        """The served route a mistyped path most resembles (`POST /v1/flags/evaluate` for
        `/v1/flag/evaluate`): one of as many segments, all alike but one, and that one close
        (a template's placeholders take any segment); None when none is."""
        import difflib  # on a 404 only: a start that never meets one does not import it

        asked = path.split("/")
        best, score = None, SUGGESTION_CUTOFF
        for template in self._methods:
            parts = template.split("/")
            if len(parts) != len(asked):
                continue
            differ = [
                (part, given)
                for part, given in zip(parts, asked, strict=True)
                if part != given and not part.startswith("{")
            ]
            if len(differ) == 1:
                ratio = difflib.SequenceMatcher(None, *differ[0]).ratio()
                if ratio > score:
                    best, score = template, ratio
        if best is None:
            return None
        return f"{' or '.join(sorted(self._methods[best]))} {best}"

    def claim(self, prefix: str, plane: Plane) -> None:
        """Unserved paths under `prefix` belong to `plane` too."""
        self._prefixes[prefix] = plane

    def plane(self, path: str) -> Plane:
        """The plane a path belongs to, by its first segments."""
        found = self._prefixes.get(_prefix(path)) or self._prefixes.get(_prefix(path, 2))
        return found or UNCLAIMED

    def error_body(self, path: str) -> ErrorBody:
        """The envelope of the plane a path belongs to."""
        return self.plane(path).error_body


SUGGESTION_CUTOFF = 0.75
"""How alike the one differing segment must be (difflib's ratio) for a 404 to suggest it."""


def _prefix(path: str, segments: int = 3) -> str:
    """`/v1/projects/p1/environments` -> `/v1/projects`: the part that names a plane's area."""
    return "/".join(path.split("/")[:segments])
