"""The Python package: an sdist and a wheel built from it (`python -m build`), checked as PyPI
would (`twine check --strict`, and the metadata a listing needs: licence file, project URLs,
classifiers), the wheel run in a fresh venv; published to a file index (PEP 503) that a new
project's `pip install` reads. Its venv holds the svc-stub every other project's test runs."""

from __future__ import annotations

import email.parser
import hashlib
import html
import shutil
import sys
import venv
import zipfile
from pathlib import Path

from steps import ROOT, Ecosystem, ReleaseError, Workspace, emptied, run

REQUIRED = {
    "Summary": "a one-line description",
    "License-Expression": "an SPDX licence",
    "License-File": "a licence file",
    "Requires-Python": "the Pythons it runs on",
    "Project-URL": "the project's URLs",
    "Classifier": "classifiers",
    "Description-Content-Type": "a README PyPI renders",
}
"""What a wheel's metadata must carry for a PyPI listing worth the name, in the words of a
refusal."""
PYPI = "https://pypi.org/simple"


def build(workspace: Workspace) -> list[Path]:
    out = emptied(workspace.dist("python"))
    run([sys.executable, "-m", "build", "--outdir", out, ROOT], ROOT)  # the wheel from the sdist
    artifacts = sorted(out.iterdir())
    run([sys.executable, "-m", "twine", "check", "--strict", *artifacts], out)
    (wheel,) = [a for a in artifacts if a.suffix == ".whl"]
    check_metadata(wheel, workspace.version)
    _runs_in_a_fresh_venv(wheel, workspace)
    return artifacts


def check_metadata(wheel: Path, version: str) -> None:
    """ReleaseError naming what the wheel's metadata lacks, or its licence file."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        fields = email.parser.Parser().parsestr(archive.read(metadata).decode())
    if fields["Version"] != version:
        raise ReleaseError(f"{wheel.name}: version {fields['Version']}, not the one {version}")
    for field, what in REQUIRED.items():
        if not fields.get_all(field):
            raise ReleaseError(f"{wheel.name}: its metadata has no {field} ({what})")
    for licence in fields.get_all("License-File") or []:
        if not any(n.endswith(f".dist-info/licenses/{licence}") for n in names):
            raise ReleaseError(f"{wheel.name}: License-File {licence} is not in the wheel")


def _runs_in_a_fresh_venv(wheel: Path, workspace: Workspace) -> None:
    where = emptied(workspace.scratch("python") / "fresh")
    venv.create(where, with_pip=True)
    run([where / "bin" / "python", "-m", "pip", "install", "-q", wheel], where)
    said = run([where / "bin" / "svc-stub", "--version"], where)
    if workspace.version not in said:
        raise ReleaseError(f"{wheel.name}: svc-stub --version said {said.strip()!r}")


def publish(workspace: Workspace, artifacts: list[Path]) -> None:
    """A PEP 503 simple index on disk: `simple/svc-stub/index.html` links each file."""
    registry = workspace.registry("python")
    files = registry / "files"
    files.mkdir(exist_ok=True)
    links = []
    for artifact in artifacts:
        shutil.copy2(artifact, files / artifact.name)
        digest = hashlib.sha256(artifact.read_bytes()).hexdigest()
        name = html.escape(artifact.name)
        links.append(f'<a href="../../files/{name}#sha256={digest}">{name}</a><br>')
    project = registry / "simple" / "svc-stub"
    project.mkdir(parents=True, exist_ok=True)
    (project / "index.html").write_text(_page("\n".join(links)))
    (registry / "simple" / "index.html").write_text(_page('<a href="svc-stub/">svc-stub</a>'))


def rehearse(workspace: Workspace) -> None:
    """`pip install "svc-stub[pytest]==VERSION"` from the file index (its dependencies from
    PyPI), and the project's one test through the pytest plugin."""
    project = workspace.new_project("python")
    venv.create(project / ".venv", with_pip=True)
    bin_ = project / ".venv" / "bin"
    index = (workspace.registry("python") / "simple").as_uri()
    run(
        [bin_ / "python", "-m", "pip", "install", "-q", "--index-url", index,
         "--extra-index-url", PYPI, f"svc-stub[pytest]=={workspace.version}"],
        project,
    )  # fmt: skip
    run([bin_ / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider"], project)
    workspace.stub_bin = bin_  # the svc-stub the other ecosystems' projects run


def refusal(workspace: Workspace) -> str:
    """A wheel built from a copy with no licence file: refused by `check_metadata`."""
    copy = emptied(workspace.scratch("python") / "unlicensed")
    for name in ("stub", "fixtures"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("README.md", "svc_stub_pytest.py"):
        shutil.copy2(ROOT / name, copy / name)
    manifest = (ROOT / "pyproject.toml").read_text()
    (copy / "pyproject.toml").write_text(manifest.replace('license-files = ["LICENSE"]\n', ""))
    out = copy / "dist"
    run([sys.executable, "-m", "build", "--wheel", "--outdir", out, copy], copy)
    (wheel,) = out.glob("*.whl")
    try:
        check_metadata(wheel, workspace.version)
    except ReleaseError as refused:
        return str(refused)
    raise ReleaseError(f"{wheel.name}, built with no licence file, was accepted")


def _page(body: str) -> str:
    return f"<!DOCTYPE html>\n<html><body>\n{body}\n</body></html>\n"


ECOSYSTEM = Ecosystem("python", build, publish, rehearse, refusal)
