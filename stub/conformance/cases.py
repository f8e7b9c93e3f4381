"""The kit's cases, as data: one YAML file per area in `cases/`, each case a client set-up (the
fixtures it serves, the fault it arms, the client's options), the calls made through the
adapter, what the library must return, and what the stub must have seen on the wire.

A case's `expect` holds the spec's rules: a mismatch fails it. Its `measured` holds what the
published clients do where the spec leaves the answer open (which error kind a 500 is, say): a
mismatch is reported as a warning unless the run is strict.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import yaml

Json = dict[str, Any]

CASES_DIR = Path(__file__).resolve().parent / "cases"
AREAS = ("reads", "faults", "registration", "exposures", "lifecycle", "configuration", "vendor")
PLANES = ("runtime", "vendor")
"""The routes an adapter's client calls: the service's `/v1` runtime plane, or the legacy
vendor routes (a file of cases says which it is for; by default the runtime plane)."""
ROUTES = ("evaluate", "capture", "register", "flags", "batch")
"""The client routes a case can count or time (`/_test/requests` route names)."""
CALLS = ("evaluate", "register", "recordExposure", "flushExposures", "signal", "shutdown")
_CASE_KEYS = {
    "name", "description", "needs", "fixtures", "fault", "offline", "client", "create",
    "steps", "wire", "timing",
}  # fmt: skip
_STEP_KEYS = {"call", "args", "expect", "measured"}
_WIRE_KEYS = {"requests", "exposures", "signals", "targets", "events"}


class CaseError(Exception):
    """A case file that does not say what it means."""


class Step(NamedTuple):
    call: str
    args: Json
    expect: Json
    """Fields the library's answer must have (the spec's rules)."""
    measured: Json
    """Fields the published clients give where the spec is silent: a warning if different."""


class Case(NamedTuple):
    area: str
    plane: str
    name: str
    description: str
    needs: frozenset[str]
    fixtures: Json | None
    """A fixture document served in the case's namespace; None: the start-up fixtures."""
    fault: Json | None
    """Armed in the case's namespace before the client is made (`POST /_test/fault`)."""
    offline: bool
    """The client is pointed at a port where nothing listens."""
    client: Json
    """`apiKey` (null: none given), `apiUrl` (instead of the stub's), `options`."""
    create: Json | None
    """What creating the client must fail with (`errorKind`); None: it must succeed."""
    steps: tuple[Step, ...]
    wire: Json
    """What the stub must have recorded: `requests` per route, `exposures`, `signals`,
    `targets`, and for the vendor plane `events` (`/batch` items)."""
    timing: str | None = None
    """A route whose requests' spacing the case reports; a request that came back before a
    `Retry-After` allowed is a warning (the spec is silent on timing)."""

    @property
    def id(self) -> str:
        return f"{self.area}/{self.name}"


def load_cases(
    names: Sequence[str] = (), areas: Sequence[str] = (), directory: Path = CASES_DIR
) -> list[Case]:
    """Every case, or those whose id matches one of `names` (globs) or is in one of `areas`
    (either will do)."""
    cases = [case for path in sorted(directory.glob("*.yaml")) for case in _load_file(path)]
    unknown = sorted(set(areas) - {case.area for case in cases})
    if unknown:
        raise CaseError(f"--area: no area {unknown[0]!r} (areas: {', '.join(AREAS)})")
    if not names and not areas:
        return cases
    return [
        case for case in cases if case.area in areas or any(_matches(case, name) for name in names)
    ]


def _matches(case: Case, pattern: str) -> bool:
    return fnmatch.fnmatchcase(case.id, pattern) or fnmatch.fnmatchcase(case.name, pattern)


def _load_file(path: Path) -> Iterable[Case]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    area = path.stem
    if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
        raise CaseError(f"{path}: expected a mapping with a 'cases' list")
    plane = document.get("plane", "runtime")
    if plane not in PLANES:
        raise CaseError(f"{path.name}: plane: {plane!r} is not one of {', '.join(PLANES)}")
    seen: set[str] = set()
    for index, raw in enumerate(document["cases"]):
        case = _case(area, plane, raw, f"{path.name}: cases[{index}]")
        if case.name in seen:
            raise CaseError(f"{path.name}: case {case.name!r} appears twice")
        seen.add(case.name)
        yield case


def _case(area: str, plane: str, raw: Any, where: str) -> Case:
    _check_keys(raw, _CASE_KEYS, where, required=("name", "description"))
    wire = raw.get("wire", {})
    _check_keys(wire, _WIRE_KEYS, f"{where}.wire")
    steps = tuple(_step(step, f"{where}.steps[{n}]") for n, step in enumerate(raw.get("steps", [])))
    return Case(
        area=area,
        plane=plane,
        name=str(raw["name"]),
        description=str(raw["description"]),
        needs=frozenset(raw.get("needs", [])),
        fixtures=raw.get("fixtures"),
        fault=raw.get("fault"),
        offline=bool(raw.get("offline", False)),
        client=dict(raw.get("client", {})),
        create=raw.get("create"),
        steps=steps,
        wire=wire,
        timing=_timing(raw.get("timing"), f"{where}.timing"),
    )


def _timing(raw: Any, where: str) -> str | None:
    if raw is None:
        return None
    if raw not in ROUTES:
        raise CaseError(f"{where}: {raw!r} is not one of {', '.join(ROUTES)}")
    return str(raw)


def _step(raw: Any, where: str) -> Step:
    _check_keys(raw, _STEP_KEYS, where, required=("call",))
    if raw["call"] not in CALLS:
        raise CaseError(f"{where}.call: {raw['call']!r} is not one of {', '.join(CALLS)}")
    return Step(raw["call"], raw.get("args", {}), raw.get("expect", {}), raw.get("measured", {}))


def _check_keys(raw: Any, allowed: set[str], where: str, required: Sequence[str] = ()) -> None:
    if not isinstance(raw, dict):
        raise CaseError(f"{where}: expected a mapping")
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise CaseError(f"{where}.{unknown[0]}: unknown key")
    for key in required:
        if key not in raw:
            raise CaseError(f"{where}.{key}: required")
