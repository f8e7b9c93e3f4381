"""The house as the architecture page draws it, read from the code's own imports: floors from
the shared one up to the commands, imports only down or along a floor, no circle, one name per
module. A new import that runs back up fails here with the arrow it adds."""

from __future__ import annotations

import ast
import itertools
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from conftest import AUTH, AiohttpClient
from stub import StubConfig, create_app
from stub.http.connection import door

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "stub"

FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "the shared floor",
        (
            "stub.validation", "stub.rate_limit", "stub.keys", "stub.config", "stub.wire",
            "stub.cors", "stub.recording", "stub.process", "stub.client", "stub.packaged",
            "stub.coverage",
        ),
    ),
    (
        "the planes' models",
        ("stub.runtime", "stub.management", "stub.posthog", "stub.faults"),
    ),
    ("the fixture sections", ("stub.fixtures",)),
    ("what fixtures derive", ("stub.posthog.documents",)),  # PostHog's shapes of the flags
    ("one namespace's state", ("stub.state",)),
    ("the namespaces", ("stub.namespaces", "stub.watch")),
    ("the way in", ("stub.http",)),
    (
        "the routes and tools above the way in",
        ("stub.routes", "stub.control", "stub.inspector", "stub.upstream", "stub.conformance"),
    ),
    ("composition", ("stub.app",)),
    (
        "the public API, the commands and the plugin",
        ("stub", "stub.testing", "stub.cli", "stub.entry", "stub.__main__"),
    ),
)  # fmt: skip
"""Bottom to top; a module is on the floor of the longest name that is it or holds it (`stub`
holds only itself: a new module must be given a floor). A plane's model sits below state.py
(which composes the models), its routes (routes/) above the way in (http/), which serves
them."""

ROLES = frozenset({"routes.py", "commands.py"})
"""File names that say a role each folder has (its routes, its subcommands), not a thing."""
ROUTES = "stub.routes."
"""A module of routes/ is named after the plane whose routes it holds."""


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, path: Path) -> Iterator[str]:
    """The stub modules a module imports, wherever the import stands (TYPE_CHECKING and
    function bodies too: a lazy import is still an arrow)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            if target in MODULES and target != name:
                yield target
                break


ARROWS = sorted(
    {(name, target) for name, path in MODULES.items() for target in imported(name, path)}
)


def floor_of(module: str) -> int:
    homes = [
        (len(home), number)
        for number, (_, homes_here) in enumerate(FLOORS)
        for home in homes_here
        if module == home or (home != "stub" and module.startswith(home + "."))
    ]
    assert homes, f"{module} is on no floor: add it to FLOORS and to the architecture page"
    return max(homes)[1]


def test_every_module_has_a_floor() -> None:
    for module in MODULES:
        floor_of(module)


def test_imports_run_down_or_along_a_floor() -> None:
    up = [
        f"{name} ({FLOORS[floor_of(name)][0]}) -> {target} ({FLOORS[floor_of(target)][0]})"
        for name, target in ARROWS
        if floor_of(target) > floor_of(name)
    ]
    assert up == []


def test_no_import_circle() -> None:
    reach: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, target in ARROWS:
        reach[name].add(target)
    for middle, start, end in itertools.product(MODULES, repeat=3):  # transitive closure
        if middle in reach[start] and end in reach[middle]:
            reach[start].add(end)
    circles = sorted(name for name in MODULES if name in reach[name])
    assert circles == []


def test_one_module_per_name() -> None:
    """A package counts by its folder's name: `client/` and an `upstream/client.py` are two
    things under one name."""
    names = Counter(
        name.rpartition(".")[2]
        for name, path in MODULES.items()
        if path.name not in ROLES and name != "stub" and not name.startswith(ROUTES)
    )
    assert sorted(name for name, count in names.items() if count > 1) == []


def test_no_test_helper_shadows_a_stub_module() -> None:
    """tests/ is on sys.path: a helper named like a module of the package reads as that module."""
    helpers = {path.stem for path in (ROOT / "tests").glob("*.py")}
    shadowed = helpers & {name.rpartition(".")[2] for name in MODULES}
    assert shadowed == set()


@pytest.mark.parametrize(
    ("name", "target"),
    [("stub.state", "stub.http.pipeline"), ("stub.wire", "stub.control.routes")],
)
def test_the_floors_catch_an_arrow_up(name: str, target: str) -> None:
    """The check is not vacuous: these two would be arrows up."""
    assert floor_of(target) > floor_of(name)


def calls_named(path: Path) -> set[str]:
    """The names a module calls, as `name(...)` or `anything.name(...)`."""
    called = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            function = node.func
            if isinstance(function, ast.Name):
                called.add(function.id)
            elif isinstance(function, ast.Attribute):
                called.add(function.attr)
    return called


def test_one_place_makes_a_journal_entry() -> None:
    """Both lanes, every fault and the preflight record through exchange.record."""
    makers = [name for name, path in MODULES.items() if "RequestRecord" in calls_named(path)]
    assert makers == ["stub.http.exchange"]


@pytest.mark.parametrize("name", [name for name in MODULES if name.startswith(ROUTES)])
def test_the_planes_routes_are_answers_that_neither_admit_nor_record(name: str) -> None:
    """The pipeline admits a request before its route answers, and records it after."""
    reached = {target for source, target in ARROWS if source == name}
    assert reached.isdisjoint({"stub.http.pipeline", "stub.http.exchange", "stub.http.lane"})
    called = calls_named(MODULES[name])
    assert called.isdisjoint({"admit", "admit_organisation", "charge", "record"})


WALKED = (
    "http/connection.py", "http/lane.py", "http/target.py", "namespaces.py",
    "http/pipeline.py", "faults/arming.py", "http/admission.py", "routes/runtime.py",
    "http/exchange.py",
)  # fmt: skip
"""The files a routed evaluate walks, in the order the architecture page lists them (and
`lane.py`, which the request is offered first): each first entered in this order (the
namespace name's rule, in namespaces.py, before the pipeline asks it for the namespace). The
body was asked before: its decisions come from runtime/evaluation.py's table without a call."""
BESIDE = frozenset({"state.py", "wire.py", "keys.py", "recording.py"})
"""What the page says the walk calls beside them: the namespace's state, the shared floor."""


async def test_a_routed_evaluate_walks_the_files_the_architecture_page_names(
    aiohttp_client: AiohttpClient,
) -> None:
    """One evaluate the direct lane declines (`Connection: close`), followed call by call:
    the files it enters, in order, and no route calling back into the way in."""
    client = await aiohttp_client(create_app(StubConfig()))
    body = {"targetingKey": "user-1", "flagKeys": ["checkout-v2"]}
    headers = {**AUTH, "Connection": "close"}
    await client.post("/ns/walk/v1/flags/evaluate", json=body, headers=headers)  # warmed up
    calls: list[tuple[str, str]] = []

    def followed(frame: FrameType, event: str, _: object) -> None:
        if event == "call" and frame.f_back is not None:
            calls.append((_in_package(frame.f_back), _in_package(frame)))

    sys.setprofile(followed)
    try:
        answer = await client.post("/ns/walk/v1/flags/evaluate", json=body, headers=headers)
        await answer.read()
    finally:
        sys.setprofile(None)
    assert answer.status == 200
    entered = list(dict.fromkeys(callee for _, callee in calls if callee))
    walked = [name for name in WALKED if door().lane or name != "http/lane.py"]
    assert [name for name in entered if name in WALKED] == walked, entered
    assert set(entered) - set(WALKED) <= BESIDE
    called_back = {(caller, callee) for caller, callee in calls if caller.startswith("routes/")}
    assert {callee for _, callee in called_back if callee.startswith("http/")} == set()


def _in_package(frame: FrameType) -> str:
    """A frame's file inside stub/ (`http/pipeline.py`), or "" outside it."""
    path = Path(frame.f_code.co_filename)
    return path.relative_to(PACKAGE).as_posix() if path.is_relative_to(PACKAGE) else ""
