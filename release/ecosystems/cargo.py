"""The Rust crate's release: the .crate `cargo package` makes, checked as crates.io would take
it, published with `cargo publish` to a sparse registry on loopback, and a new project that
`cargo add`s it from there."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from steps import ROOT, Ecosystem, ReleaseError, Workspace, copied, run

NAME = "cargo"
CRATE = "svc-stub"
HELPER = ROOT / "clients" / "rust"
REGISTRY = ROOT / "release" / "cargo" / "registry.py"
"""The stand-in for crates.io: a sparse index, the .crate files and the publish API."""
ALIAS = "rehearsal"
"""The stand-in's name in a project's `.cargo/config.toml` (`[registries.rehearsal]`)."""
TOKEN = "rehearsal-token"
"""The token the stand-in wants for a publish (`CARGO_REGISTRIES_REHEARSAL_TOKEN`)."""

REQUIRED = ("description", "license", "repository", "readme", "keywords", "categories")
"""What crates.io shows of a crate, and refuses without (description, license): each must be
there. `license-file` stands for `license`; `documentation` for `readme`."""
DRY_RUN = "warning: aborting upload due to dry run"
"""The one warning `cargo publish --dry-run` always prints."""


def metadata(package: Path, workspace: Workspace) -> dict[str, object]:
    """The package's manifest as cargo reads it (`cargo metadata`)."""
    said = run(
        ["cargo", "metadata", "--no-deps", "--format-version", "1", "--offline"],
        package,
        workspace.env(),
        refused=f"{package / 'Cargo.toml'}: cargo cannot read it",
    )
    found: dict[str, object] = json.loads(said.splitlines()[-1])["packages"][0]
    return found


def missing(manifest: dict[str, object]) -> list[str]:
    """The fields crates.io wants that the manifest lacks (empty when none)."""
    stand_ins = {"license": "license_file", "readme": "documentation"}
    return [
        field
        for field in REQUIRED
        if not manifest.get(field) and not manifest.get(stand_ins.get(field, field))
    ]


def _clean(said: str, what: str) -> None:
    warnings = [
        line for line in said.splitlines() if line.startswith("warning:") and line != DRY_RUN
    ]
    if warnings:
        raise ReleaseError(
            f"{what}: {warnings[0]}" + (f" (+{len(warnings) - 1} more)" if warnings[1:] else "")
        )


def check(workspace: Workspace, package: Path, target: Path) -> Path:
    """The package's .crate, made by `cargo package` into `target`, after its manifest has what
    crates.io wants and `cargo package`, `cargo publish --dry-run` and `cargo doc` (rustdoc's
    warnings as errors) ran without a warning; or ReleaseError."""
    manifest = metadata(package, workspace)
    name = f"{manifest['name']}-{manifest['version']}.crate"
    if lacking := missing(manifest):
        raise ReleaseError(f"{name}: Cargo.toml lacks what crates.io wants: {', '.join(lacking)}")
    env = workspace.env(CARGO_TARGET_DIR=str(target))
    dirty = ["--allow-dirty", "--locked"]
    _clean(run(["cargo", "package", *dirty], package, env, refused=f"{name}: cargo package"), name)
    said = run(
        ["cargo", "publish", "--dry-run", *dirty], package, env, refused=f"{name}: cargo publish"
    )
    _clean(said, f"{name}: cargo publish --dry-run")
    docs = {**env, "RUSTDOCFLAGS": "-D warnings"}
    _clean(
        run(["cargo", "doc", "--no-deps", "--locked"], package, docs, refused=f"{name}: cargo doc"),
        name,
    )
    return target / "package" / name


def build(workspace: Workspace) -> list[Path]:
    dist = workspace.dist(NAME)
    made = check(workspace, HELPER, dist / "target")
    artifact = dist / made.name
    shutil.copyfile(made, artifact)
    return [artifact]


@contextmanager
def serving(root: Path) -> Iterator[str]:
    """The registry in `root`, served on loopback for the block: its URL. Its log goes beside
    `root` (`cargo-server.log`)."""
    with (root.parent / f"{NAME}-server.log").open("a") as log:
        server = subprocess.Popen(
            [sys.executable, str(REGISTRY), str(root), "--token", TOKEN],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        try:
            line = server.stdout.readline() if server.stdout else ""
            if not line.startswith("registry listening on "):
                raise ReleaseError(f"release/cargo/registry.py did not start: {line.strip()!r}")
            yield line.removeprefix("registry listening on ").strip()
        finally:
            server.terminate()
            server.wait(timeout=10)
            if server.stdout:
                server.stdout.close()


def _registry_env(workspace: Workspace, url: str, **extra: str) -> dict[str, str]:
    return workspace.env(CARGO_REGISTRIES_REHEARSAL_INDEX=f"sparse+{url}/index/", **extra)


def publish(workspace: Workspace, artifacts: list[Path]) -> None:
    """`cargo publish --registry rehearsal` to the stand-in, which must then hold the very
    .crate built and checked."""
    (artifact,) = artifacts
    root = workspace.registry(NAME)
    for published in ("index", "crates"):  # a rehearsal run again in the same --out
        shutil.rmtree(root / published, ignore_errors=True)
    with serving(root) as url:
        env = _registry_env(
            workspace,
            url,
            CARGO_REGISTRIES_REHEARSAL_TOKEN=TOKEN,
            CARGO_TARGET_DIR=str(workspace.dist(NAME) / "target"),
        )
        command = ["cargo", "publish", "--registry", ALIAS, "--allow-dirty", "--locked"]
        run(command, HELPER, env, refused=f"{artifact.name}: cargo publish to {url}")
    stored = root / "crates" / CRATE / artifact.name
    if not stored.is_file() or _sha256(stored) != _sha256(artifact):
        raise ReleaseError(
            f"{artifact.name}: the registry does not hold the .crate built and checked"
        )


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rehearse(workspace: Workspace) -> None:
    """A new project, its registries in `.cargo/config.toml`, `cargo add --dev svc-stub
    --registry rehearsal` and `cargo test`."""
    project = workspace.new_project(NAME)
    with serving(workspace.registry(NAME)) as url:
        config = project / ".cargo" / "config.toml"
        config.parent.mkdir()
        config.write_text(f'[registries.{ALIAS}]\nindex = "sparse+{url}/index/"\n')
        env = workspace.env()
        add = ["cargo", "add", "--dev", CRATE, "--registry", ALIAS]
        run(add, project, env, refused=f"new project: {' '.join(add)}")
        run(["cargo", "test"], project, env, refused="new project: cargo test")


def refusal(workspace: Workspace) -> str:
    """A copy of the crate whose manifest has no `license`, put to `build`'s checks."""
    scratch = workspace.scratch(NAME)
    copy = copied(HELPER, scratch / "unlicensed", "target")
    manifest = copy / "Cargo.toml"
    lines = manifest.read_text().splitlines(keepends=True)
    manifest.write_text("".join(line for line in lines if not line.startswith("license ")))
    try:
        check(workspace, copy, scratch / "target")
    except ReleaseError as refused:
        return str(refused).splitlines()[0]
    raise ReleaseError(f"{CRATE}: a manifest without a license was accepted")


ECOSYSTEM = Ecosystem(NAME, build, publish, rehearse, refusal)
