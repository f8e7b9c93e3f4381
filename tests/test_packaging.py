"""What a plain `pip install .` gets: the wheel carries the default fixtures inside `stub/`."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
    assert "stub/__main__.py" in names
    assert "svc_stub_pytest.py" in names
    assert not [name for name in names if name.startswith(("tests/", "bench/", "adapters/"))]
    assert "stub/openapi.json" in names
    assert "stub/default_fixtures.json" in names
    page = {name for name in names if name.startswith("stub/inspector/static/")}
    assert page == {f"stub/inspector/static/{p.name}" for p in STATIC.iterdir()}
