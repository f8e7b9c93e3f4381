"""svc-stub's pytest entry point: its options and marker, then its fixtures.

The fixtures live in svc-stub's package, `stub` (stub/testing/pytest_plugin.py). A project may
have a module or package of that name too; when it comes first on sys.path (`python -m pytest`
and pytest-xdist's workers put the working directory there) svc-stub's package cannot be
imported, and loading the plugin would stop every session with an import traceback, even one
that never uses svc-stub. So this module, outside the package, looks first: it loads the
fixtures when `stub` is svc-stub's, and otherwise fixtures that fail in one line saying what
hides it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

MARKER = "svc_stub"
FIXTURES_INI = "svc_stub_fixtures"
NAMESPACES_INI = "svc_stub_namespaces"
JOURNAL_OPTION = "--svc-stub-journal"
SIGNATURE = ("default_fixtures.json", "openapi.json")
"""Data files only svc-stub's package holds (never compiled away, unlike its .py files): how it
is told from another `stub`, wherever either is (an editable install keeps this module and the
package in different places)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("svc-stub")
    group.addoption(
        "--svc-stub-fixtures",
        action="append",
        default=None,
        metavar="PATH",
        help="fixture file or directory for the session's svc-stub (repeatable)",
    )
    group.addoption(
        JOURNAL_OPTION,
        default=None,
        metavar="DIR",
        help="for each failed test that used svc-stub, write its namespace's inspector page "
        "(a self-contained HTML file) into DIR, and name it in the failure report",
    )
    parser.addini(
        FIXTURES_INI,
        type="paths",
        default=[],
        help="fixture files or directories for the session's svc-stub",
    )
    parser.addini(
        NAMESPACES_INI,
        type="bool",
        default=True,
        help="give each test its own svc-stub namespace (false: reset the whole stub instead)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(fixtures=..., keys=...): serve these fixtures (a path, a list of paths "
        "relative to the test file, or a fixture document) for this test only; route requests "
        "presenting these keys to this test's namespace",
    )


def pytest_report_header(config: pytest.Config) -> str | None:
    """Either way round, before tests fail puzzlingly: the project's `stub` hides svc-stub's
    (its fixtures will say so too), or svc-stub's loaded first and hides the project's from
    its tests (`import stub` gets svc-stub's)."""
    if _HIDDEN_BY is not None:
        return shadowed_message(_HIDDEN_BY)
    for own in (config.rootpath / "stub.py", config.rootpath / "stub" / "__init__.py"):
        if own.is_file() and not is_svc_stub(own.parent):
            return (
                f"svc-stub: its package 'stub' is loaded, so 'import stub' in these tests "
                f"gets it, not {own}; rename yours to use both"
            )
    return None


def imported_as_stub() -> Path | None:
    """What `import stub` finds, when that is not svc-stub's package (None: it is)."""
    try:
        spec = importlib.util.find_spec("stub")
    except (ImportError, ValueError):  # a `stub` in sys.modules without a spec: not ours
        module = sys.modules.get("stub")
        return Path(getattr(module, "__file__", None) or "stub")
    if spec is None:
        return None  # nothing at all: a broken install, and the import will say so
    where = spec.origin or next(iter(spec.submodule_search_locations or ()), None)
    if where is None or where == "namespace":
        return Path(next(iter(spec.submodule_search_locations or ()), "stub"))
    found = Path(where)
    return None if found.name == "__init__.py" and is_svc_stub(found.parent) else found


def is_svc_stub(folder: Path) -> bool:
    return all((folder / name).is_file() for name in SIGNATURE)


def shadowed_message(found: Path) -> str:
    return (
        f"svc-stub: 'import stub' finds {found}, not svc-stub's package of that name, so its "
        "fixtures cannot load; rename that module or package (it wins wherever its folder "
        "leads sys.path: under `python -m pytest`, and in pytest-xdist's workers)"
    )


_HIDDEN_BY = imported_as_stub()

if _HIDDEN_BY is None:
    pytest_plugins = ["stub.testing.pytest_plugin"]
else:
    _SHADOWED = shadowed_message(_HIDDEN_BY)

    @pytest.fixture(name="svc_stub_url", scope="session")
    def _svc_stub_url_unavailable() -> None:
        pytest.fail(_SHADOWED, pytrace=False)

    @pytest.fixture(name="svc_stub")
    def _svc_stub_unavailable() -> None:
        pytest.fail(_SHADOWED, pytrace=False)

    @pytest.fixture(name="svc_stub_in_process")
    def _svc_stub_in_process_unavailable() -> None:
        pytest.fail(_SHADOWED, pytrace=False)
