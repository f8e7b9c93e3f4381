"""npm: the helper in clients/javascript packed by `npm pack` (its prepack runs tsc), the tarball
checked by publint, by @arethetypeswrong/cli under node16 (ESM) and bundler resolution, and
against the files a user's install may hold; published to a local verdaccio on 127.0.0.1
(release/npm/config.yaml: svc-stub alone, anonymous, nothing proxied) and installed from it by a
new project (`npm i -D svc-stub`, its .npmrc pointing `registry=` there), whose one
`node --test` test runs against the stub.

The checkers and the registry are release/npm/'s own pinned devDependencies (its committed
package-lock.json), never the helper's, so a user's install stays light."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import tarfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from steps import ROOT, Ecosystem, ReleaseError, Workspace, copied, run

NAME = "npm"
PACKAGE = ROOT / "clients" / "javascript"
TOOLS = ROOT / "release" / "npm"

NOT_COPIED = ("node_modules", "dist", "test-results", "playwright-report", "*.tgz")
"""What the package folder holds that `npm pack` never reads: installs, builds, runners' output."""

ALLOWED = re.compile(
    r"package/(package\.json|README\.md|LICENSE"
    r"|dist/[\w-]+\.(js|js\.map|d\.ts)"
    r"|src/[\w-]+\.ts)"
)
"""Every file a user's install may hold: the manifest, the readme and licence, the compiled
modules with their types and source maps, and the sources those maps point to. Anything else
(test/, scripts/, examples/, tsconfig.json, lockfiles) is dev-only."""


def _tools(env: dict[str, str], *, fresh: bool) -> Path:
    """release/npm/'s pinned tools, from its lockfile (`npm ci`), and their bin folder."""
    bin_folder = TOOLS / "node_modules" / ".bin"
    if fresh or not (bin_folder / "verdaccio").exists():
        run(["npm", "ci", "--no-audit", "--no-fund"], TOOLS, env)
    return bin_folder


def _copied(workspace: Workspace, name: str) -> Path:
    """The helper's package folder, copied under scratch with its installed dev dependencies
    linked in (tsc for prepack) and the repository's licence beside its readme: the tracked
    files stay as they are."""
    env = workspace.env()
    if not (PACKAGE / "node_modules" / ".bin" / "tsc").exists():
        run(["npm", "ci", "--no-audit", "--no-fund"], PACKAGE, env)
    copy = copied(PACKAGE, workspace.scratch(NAME) / name, *NOT_COPIED)
    (copy / "node_modules").symlink_to(PACKAGE / "node_modules", target_is_directory=True)
    shutil.copy2(ROOT / "LICENSE", copy / "LICENSE")
    return copy


def _packed(package: Path, into: Path, env: dict[str, str]) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    for old in into.glob("*.tgz"):
        old.unlink()
    printed = run(
        ["npm", "pack", "--json", "--pack-destination", into],
        package,
        env,
        refused="npm pack failed",
    )
    report = json.loads(printed[printed.index("[") :])
    return into / str(report[0]["filename"])


def check(tarball: Path, env: dict[str, str]) -> None:
    """The tarball as the registry and a user's tools would see it: only files a user needs,
    publint clean (warnings count), and every export's types resolving under node16 (ESM) and
    bundler resolution (attw's esm-only profile: the package is ESM only, as `type` says)."""
    with tarfile.open(tarball) as packed:
        names = sorted(member.name for member in packed.getmembers() if member.isfile())
    extra = [name for name in names if not ALLOWED.fullmatch(name)]
    if "package/LICENSE" not in names:
        raise ReleaseError(f"{tarball.name}: no LICENSE inside (the registry shows its licence)")
    if extra:
        raise ReleaseError(f"{tarball.name}: dev-only files inside the tarball: {', '.join(extra)}")
    bin_folder = TOOLS / "node_modules" / ".bin"
    checkers: list[tuple[list[str | Path], str]] = [
        ([bin_folder / "publint", "run", "--strict", tarball], "publint"),
        (
            [bin_folder / "attw", tarball, "--profile", "esm-only", "--format", "ascii"],
            "attw (node16, bundler)",
        ),
    ]
    for command, what in checkers:
        try:
            run(command, tarball.parent, env)
        except ReleaseError as refused:
            raise ReleaseError(
                f"{tarball.name}: {what} refused it: {_gist(str(refused))}"
            ) from None


def _gist(said: str) -> str:
    """The checker's own words, in one line: its error lines, else its last line."""
    lines = [
        line.strip()
        for line in said.splitlines()[1:]
        if line.strip() and not line.strip().endswith(":")
    ]
    errors = [
        line
        for line in lines
        if re.search(r"error|❌|💀|No types|does not exist|not found", line, re.I)
    ]
    picked = errors[:3] or lines[-1:]
    return " | ".join(re.sub(r"\x1b\[[0-9;]*m", "", line) for line in picked)


def build(workspace: Workspace) -> list[Path]:
    env = workspace.env()
    _tools(env, fresh=True)
    package = _copied(workspace, "package")
    tarball = _packed(package, workspace.dist(NAME), env)
    check(tarball, env)
    return [tarball]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def _registry(workspace: Workspace) -> Iterator[str]:
    """verdaccio on 127.0.0.1, its storage under `registry(npm)`, stopped by its PID on leaving."""
    env = workspace.env()
    bin_folder = _tools(env, fresh=False)
    home = workspace.registry(NAME)
    shutil.copy2(TOOLS / "config.yaml", home / "config.yaml")
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    log = (home / "verdaccio.log").open("w")
    server = subprocess.Popen(
        [
            bin_folder / "verdaccio",
            "--config",
            home / "config.yaml",
            "--listen",
            f"127.0.0.1:{port}",
        ],
        cwd=home,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        _listening(server, home / "verdaccio.log", url)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _listening(server: subprocess.Popen[bytes], log: Path, url: str) -> None:
    """Waits for verdaccio's own line that it listens (`http address - URL`), or its exit."""
    while f"http address - {url}" not in log.read_text(errors="replace"):
        if server.poll() is not None:
            tail = log.read_text(errors="replace").strip().splitlines()[-5:]
            raise ReleaseError(f"verdaccio did not start on {url}: {' | '.join(tail)}")
        time.sleep(0.05)


def _npmrc(folder: Path, url: str) -> Path:
    """What points npm at the local registry: `registry=`, and the anonymous publish's token (npm
    asks for one; this verdaccio lets anyone publish svc-stub and nothing else)."""
    host = url.removeprefix("http:")
    npmrc = folder / ".npmrc"
    npmrc.write_text(f"registry={url}\n{host}:_authToken=anonymous-rehearsal\n")
    return npmrc


def publish(workspace: Workspace, artifacts: list[Path]) -> None:
    env = workspace.env(npm_config_cache=str(workspace.scratch(NAME) / "npm-cache"))
    storage = workspace.registry(NAME) / "storage"
    shutil.rmtree(storage, ignore_errors=True)  # a rehearsal publishes into an empty registry
    with _registry(workspace) as url:
        folder = workspace.scratch(NAME) / "publish"
        folder.mkdir(parents=True, exist_ok=True)
        _npmrc(folder, url)
        for tarball in artifacts:
            run(
                ["npm", "publish", tarball, "--registry", url],
                folder,
                env,
                refused=f"npm publish {tarball.name}",
            )
        shown = run(["npm", "view", "svc-stub", "version", "--registry", url], folder, env).strip()
        if shown != workspace.version:
            raise ReleaseError(
                f"{url}: svc-stub's version is {shown!r} after publishing, not {workspace.version}"
            )


def rehearse(workspace: Workspace) -> None:
    env = workspace.env(npm_config_cache=str(workspace.scratch(NAME) / "npm-cache"))
    project = workspace.new_project(NAME)
    with _registry(workspace) as url:
        _npmrc(project, url)
        run(
            ["npm", "i", "-D", "svc-stub", "--no-audit", "--no-fund"],
            project,
            env,
            refused="npm i -D svc-stub",
        )
    installed = json.loads((project / "node_modules" / "svc-stub" / "package.json").read_text())
    if installed["version"] != workspace.version:
        raise ReleaseError(
            f"the new project installed svc-stub {installed['version']}, not {workspace.version}"
        )
    said = run(["node", "--test"], project, env, refused="the new project's `node --test`")
    counted = [line for line in said.splitlines() if re.match(r"# (tests|pass|fail) ", line)]
    print(", ".join(line.removeprefix("# ") for line in counted), flush=True)


def refusal(workspace: Workspace) -> str:
    """The package with one export's types file gone (`./node-test`'s `types` points at a file
    the build no longer makes): the same check as `build`'s must refuse it."""
    env = workspace.env()
    _tools(env, fresh=False)
    package = _copied(workspace, "broken")
    manifest = json.loads((package / "package.json").read_text())
    manifest["exports"]["./node-test"]["types"] = "./dist/node-test-types.d.ts"
    (package / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    tarball = _packed(package, workspace.scratch(NAME) / "broken-dist", env)
    try:
        check(tarball, env)
    except ReleaseError as refused:
        return str(refused).splitlines()[0]
    raise ReleaseError(f"{tarball}: an export whose types file is missing was accepted")


ECOSYSTEM = Ecosystem(NAME, build, publish, rehearse, refusal)
