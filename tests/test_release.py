"""One version in every package, one changelog, one rule of which stub a helper works with:
what `bump-my-version` (pyproject.toml, `[tool.bumpversion]`) sets at a release, held here."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from conftest import HANG_GUARD_S
from stub import __version__
from stub.process import PYTHON_M
from stub.testing.shared import SharedError, check_version, compatible

ROOT = Path(__file__).resolve().parent.parent
BUMP: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["bumpversion"]
VERSION: str = BUMP["current_version"]
CASES: list[dict[str, Any]] = json.loads((ROOT / "clients" / "compatibility.json").read_text())[
    "cases"
]


@pytest.mark.parametrize("place", BUMP["files"], ids=lambda place: place["filename"])
def test_every_package_carries_the_one_version(place: dict[str, str]) -> None:
    search = place["search"].replace("{current_version}", re.escape(VERSION))
    text = (ROOT / place["filename"]).read_text(encoding="utf-8")
    assert re.search(search, text, flags=re.MULTILINE), (
        f"{place['filename']} does not carry {VERSION} where `bump-my-version` sets it "
        f"({place['search']}); run `bump-my-version bump --new-version {VERSION}`"
    )


def test_the_stub_says_the_one_version() -> None:
    assert __version__ == VERSION
    said = subprocess.run(
        [*PYTHON_M, "stub", "--version"],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        check=True,
    )
    assert said.stdout.strip().endswith(VERSION)


def test_the_changelog_has_the_version_and_a_place_for_the_next() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## [Unreleased]" in changelog
    assert re.search(rf"^## \[{re.escape(VERSION)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, re.M)


@pytest.mark.parametrize(
    "case", CASES, ids=lambda case: f"stub {case['stub'] or '(empty)'}, helper {case['helper']}"
)
def test_the_stub_decides_what_a_helper_works_with(case: dict[str, Any]) -> None:
    """The cases every helper's suite runs against its own check, decided here once."""
    assert compatible(case["stub"], case["helper"]) is case["compatible"]


def test_require_refuses_a_newer_helper_and_a_non_version_in_one_line() -> None:
    major, minor, _ = (int(part) for part in VERSION.split("."))
    check_version(VERSION)
    newer = f"{major}.{minor + 1}.0"
    with pytest.raises(SharedError, match=re.escape(f"older than the {newer} the helper")):
        check_version(newer)
    with pytest.raises(SharedError, match=re.escape("--require 1.2: expected a version like")):
        check_version("1.2")
