"""What a plain `pip install .` gets: the wheel carries the default fixtures inside `stub/`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ElementTree
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


REPOSITORY = "https://github.com/svc-stub/svc-stub"
"""The project's one address: the site's header, every package's metadata, the Go module path."""

STATIC = ROOT / "stub" / "inspector" / "static"
"""The inspector page's files, served from the package: the wheel must carry every one."""


def test_the_wheel_ships_the_default_fixtures_and_the_entry_point(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "--wheel-dir",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("svc_stub-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(n for n in names if n.endswith("entry_points.txt"))
        declared = archive.read(entry_points).decode()
        assert "svc-stub = stub.entry:main" in declared
        assert "svc_stub = svc_stub_pytest" in declared  # the pytest plugin, beside the package
    shipped = {
        name.removeprefix("stub/fixtures/") for name in names if name.startswith("stub/fixtures/")
    }
    assert shipped == {p.name for p in (ROOT / "fixtures").iterdir()}
    metadata = archive_metadata(wheel)
    assert f"Project-URL: Repository, {REPOSITORY}" in metadata
    assert "stub/__main__.py" in names
    assert "svc_stub_pytest.py" in names
    assert not [name for name in names if name.startswith(("tests/", "bench/", "adapters/"))]
    assert "stub/openapi.json" in names
    assert "stub/default_fixtures.json" in names
    page = {name for name in names if name.startswith("stub/inspector/static/")}
    assert page == {f"stub/inspector/static/{p.name}" for p in STATIC.iterdir()}


def archive_metadata(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return archive.read(name).decode()


def test_every_package_names_the_one_repository() -> None:
    """A user who finds any of the packages (PyPI, npm, crates.io, Maven, the Go proxy) or the
    docs site is led to the same repository."""
    site = re.search(r"^repo_url: (\S+)$", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert site is not None
    assert site[1] == REPOSITORY
    python = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert python["Repository"] == REPOSITORY
    clients = ROOT / "clients"
    npm = json.loads((clients / "javascript" / "package.json").read_text())["repository"]
    assert npm["url"] == f"git+{REPOSITORY}.git"
    assert npm["directory"] == "clients/javascript"
    cargo = tomllib.loads((clients / "rust" / "Cargo.toml").read_text())["package"]
    assert cargo["repository"] == REPOSITORY
    pom = ElementTree.parse(clients / "java" / "pom.xml").getroot()
    maven = "{http://maven.apache.org/POM/4.0.0}"
    assert pom.findtext(f"{maven}url") == REPOSITORY
    assert pom.findtext(f"{maven}scm/{maven}url") == REPOSITORY
    module = (clients / "go" / "go.mod").read_text().splitlines()[0]
    assert module == f"module {REPOSITORY.removeprefix('https://')}/clients/go"
