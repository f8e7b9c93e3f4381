"""The Go module's release: its zip, .mod and .info as the Go module proxy serves them, a
directory laid out as that proxy, and a new project that `go get`s it from there."""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from steps import ROOT, Ecosystem, ReleaseError, Workspace, copied, run

NAME = "go"
REPOSITORY = "github.com/svc-stub/svc-stub"
"""The repository's module path: where `go get` finds it."""
SUBDIR = "clients/go"
"""The module's folder in the repository: its path's tail and its tags' prefix."""
MODULE = f"{REPOSITORY}/{SUBDIR}"
HELPER = ROOT / SUBDIR
TOOL = ROOT / "release" / "go"
"""gomodule: golang.org/x/mod's checks and zip, pinned by its go.mod and go.sum."""


def tag(version: str) -> str:
    """The tag a release pushes for this version: a module in a subfolder is tagged with it."""
    return f"{SUBDIR}/v{version}"


def _gomodule(
    workspace: Workspace, mode: str, module: Path, *options: str | Path, refused: str
) -> str:
    """release/go's program (`check` or `build`) on the module in `module`: this repository's
    path and the module's folder in it, then `options`."""
    binary = workspace.scratch(NAME) / "gomodule"
    env = workspace.env()
    run(["go", "build", "-o", binary, "."], TOOL, env, refused="release/go: not built")
    command = [binary, mode, "-dir", module, "-repo", REPOSITORY, "-subdir", SUBDIR, *options]
    return run(command, module, env, refused=refused)


def check(workspace: Workspace, module: Path) -> str:
    """The module in `module` is where its repository says (go.mod's path is the repository's
    and its folder's) and the module zip takes every file of it, or ReleaseError."""
    return _gomodule(workspace, "check", module, refused=f"{MODULE}: refused").strip()


def _version_time() -> str:
    """The .info's time: the commit being released (read only), else now."""
    done = subprocess.run(
        ["git", "log", "-1", "--format=%cI", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode == 0 and done.stdout.strip():
        return done.stdout.strip()
    return datetime.now(UTC).isoformat(timespec="seconds")


def build(workspace: Workspace) -> list[Path]:
    check(workspace, HELPER)
    run(["go", "vet", "./..."], HELPER, workspace.env(), refused=f"{MODULE}: go vet")
    version, dist = f"v{workspace.version}", workspace.dist(NAME)
    for stale in dist.glob("v*"):
        stale.unlink()
    _gomodule(
        workspace, "build", HELPER, "-version", version, "-time", _version_time(), "-out", dist,
        refused=f"{MODULE}@{version}: not built",
    )  # fmt: skip
    print(f"the release tags it: git tag {tag(workspace.version)}", flush=True)
    return [dist / f"{version}{kind}" for kind in (".info", ".mod", ".zip")]


def escaped(module_path: str) -> str:
    """A module path as the proxy spells it on a case-insensitive disk: A as !a."""
    return "".join(f"!{c.lower()}" if c.isupper() else c for c in module_path)


def publish(workspace: Workspace, artifacts: list[Path]) -> None:
    versions = workspace.registry(NAME) / escaped(MODULE) / "@v"
    versions.mkdir(parents=True, exist_ok=True)
    for artifact in artifacts:
        shutil.copy2(artifact, versions / artifact.name)
    listed = versions / "list"
    known = listed.read_text().split() if listed.exists() else []
    version = f"v{workspace.version}"
    listed.write_text("".join(f"{v}\n" for v in sorted({*known, version})))


def rehearse(workspace: Workspace) -> None:
    project = workspace.new_project(NAME)
    cache = workspace.scratch(NAME) / "modcache"
    env = workspace.env(
        GOPROXY=f"{workspace.registry(NAME).as_uri()},https://proxy.golang.org",
        GONOSUMDB=REPOSITORY,  # not published yet: the checksum database has never seen it
        GOMODCACHE=str(cache),  # what `go get` brings comes from the registry, not a cache
        GOFLAGS=f"-modcacherw {os.environ.get('GOFLAGS', '')}".strip(),  # a folder rm -r removes
    )
    if cache.exists():
        run(["go", "clean", "-modcache"], project, env)
    run(["go", "get", f"{MODULE}@v{workspace.version}"], project, env, refused=f"{MODULE}: go get")
    run(["go", "test", "-count=1", "./..."], project, env, refused="the new project's go test")


def refusal(workspace: Workspace) -> str:
    """A copy whose go.mod names a module path its repository does not resolve."""
    broken = copied(HELPER, workspace.scratch(NAME) / "broken-module")
    (broken / "go.mod").write_text("module github.com/svc-stub/svc-stub-go\n\ngo 1.21\n")
    try:
        accepted = check(workspace, broken)
    except ReleaseError as refused:
        return str(refused).strip().splitlines()[-1]
    raise ReleaseError(f"{MODULE}: a go.mod naming another module path was accepted: {accepted}")


ECOSYSTEM = Ecosystem(NAME, build, publish, rehearse, refusal)
