"""What every ecosystem's release steps share: the workspace they build, publish and rehearse
in, the one version, and how a step runs a tool and says why it failed, in one line."""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
"""The checkout being released."""


class ReleaseError(Exception):
    """A step refused: one line, naming the artifact and what its checker said."""


def version() -> str:
    """The one version every package carries (pyproject.toml, `[tool.bumpversion]`)."""
    with (ROOT / "pyproject.toml").open("rb") as config:
        found: str = tomllib.load(config)["tool"]["bumpversion"]["current_version"]
    return found


@dataclass
class Workspace:
    """Where a rehearsal builds (`dist`), publishes (`registry`) and makes new projects
    (`project`), one folder an ecosystem under `out`; and the svc-stub its projects' tests run
    (`stub_bin`: the folder holding `svc-stub`, first on their PATH)."""

    out: Path
    stub_bin: Path | None = None
    version: str = field(default_factory=version)

    def dist(self, ecosystem: str) -> Path:
        return self._folder("dist", ecosystem)

    def registry(self, ecosystem: str) -> Path:
        return self._folder("registry", ecosystem)

    def project(self, ecosystem: str) -> Path:
        return self._folder("project", ecosystem)

    def scratch(self, ecosystem: str) -> Path:
        return self._folder("scratch", ecosystem)

    def new_project(self, ecosystem: str) -> Path:
        """A brand-new project: release/projects/<ecosystem>, copied into `project(ecosystem)`
        emptied first."""
        return copied(ROOT / "release" / "projects" / ecosystem, self.project(ecosystem))

    def env(self, **extra: str) -> dict[str, str]:
        """The environment a step's tools run in: `stub_bin` first on PATH."""
        path = os.environ.get("PATH", "")
        if self.stub_bin is not None:
            path = f"{self.stub_bin}{os.pathsep}{path}"
        return {**os.environ, "PATH": path, **extra}

    def _folder(self, kind: str, ecosystem: str) -> Path:
        folder = self.out / kind / ecosystem
        folder.mkdir(parents=True, exist_ok=True)
        return folder


def copied(source: Path, to: Path, *left_out: str) -> Path:
    """`source` copied to `to` (emptied first), without what matches `left_out` (glob patterns:
    builds and installs)."""
    shutil.rmtree(to, ignore_errors=True)
    shutil.copytree(source, to, ignore=shutil.ignore_patterns(*left_out))
    return to


def emptied(folder: Path) -> Path:
    """`folder`, made afresh: nothing an earlier run left in it."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def run(
    command: Sequence[str | Path],
    cwd: Path,
    env: Mapping[str, str] | None = None,
    *,
    refused: str | None = None,
) -> str:
    """Runs a tool to its end and returns what it printed (stdout and stderr together). A
    non-zero exit is a ReleaseError: `refused` (what failed, in the release's words), else the
    command, then the tool's last lines."""
    print(f"$ {' '.join(str(part) for part in command)}  (in {cwd})", flush=True)
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        tail = "\n".join(done.stdout.strip().splitlines()[-30:])
        what = refused or f"{' '.join(str(part) for part in command)} exited {done.returncode}"
        raise ReleaseError(f"{what}\n{tail}")
    return done.stdout


class Ecosystem(NamedTuple):
    """One registry's release steps, each raising ReleaseError when it refuses."""

    name: str
    build: Callable[[Workspace], list[Path]]
    """The artifacts, built under `dist(name)` and checked with the ecosystem's own tools."""
    publish: Callable[[Workspace, list[Path]], None]
    """The artifacts, published to the local stand-in of the registry under `registry(name)`."""
    rehearse: Callable[[Workspace], None]
    """A brand-new project under `project(name)` installs svc-stub from that stand-in by the
    ordinary command and runs one test against the stub."""
    refusal: Callable[[Workspace], str]
    """A deliberately broken artifact, under `scratch(name)`, put to the same checks: the
    checker's refusal, in one line (ReleaseError if it was accepted)."""
