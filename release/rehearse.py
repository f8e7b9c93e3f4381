"""A release rehearsed end to end, on this machine: each package built and checked with its
ecosystem's own tools, published to a local stand-in of its registry, and installed from
there by a brand-new project with the ordinary command, whose one test runs against the stub.

    python release/rehearse.py                  # all five, in a temporary folder
    python release/rehearse.py --only npm       # one (repeatable); svc-stub from PATH
    python release/rehearse.py --out DIR --keep # keep what it built, published and made
    python release/rehearse.py --refusals       # each checker refusing a broken artifact

The Python package goes first: its new project's virtual environment holds the svc-stub the
other projects' tests run. Publishing to the real registries is the release workflow's
(.github/workflows/release.yml, docs/about/releasing.md); every step before it is here.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from steps import Ecosystem, ReleaseError, Workspace, version

ORDER = ("python", "npm", "maven", "cargo", "go")
"""Python first: the svc-stub every other project's test runs is the one it installed."""


def ecosystem(name: str) -> Ecosystem:
    module = importlib.import_module(f"ecosystems.{name}")
    found: Ecosystem = module.ECOSYSTEM
    return found


def main(argv: list[str]) -> int:
    parsing = argparse.ArgumentParser(
        prog="release/rehearse.py", description=__doc__.split("\n\n")[0]
    )
    parsing.add_argument(
        "--only", action="append", choices=ORDER, help="one ecosystem (repeatable)"
    )
    parsing.add_argument("--out", type=Path, help="where to build, publish and make projects")
    parsing.add_argument("--keep", action="store_true", help="keep --out (a temporary one goes)")
    parsing.add_argument(
        "--refusals", action="store_true", help="each checker refuses a broken artifact"
    )
    asked = parsing.parse_args(argv)
    names = [name for name in ORDER if not asked.only or name in asked.only]
    out = asked.out or Path(tempfile.mkdtemp(prefix="svc-stub-release-"))
    try:
        return _rehearsed(names, out, asked.refusals)
    finally:
        if not asked.keep and asked.out is None:
            shutil.rmtree(out, ignore_errors=True)


def _rehearsed(names: list[str], out: Path, refusals: bool) -> int:
    on_path = shutil.which("svc-stub")
    workspace = Workspace(out, stub_bin=Path(on_path).parent if on_path else None)
    print(f"svc-stub {version()}: rehearsing {', '.join(names)} in {out}", flush=True)
    for name in names:
        steps = ecosystem(name)
        try:
            if refusals:
                print(f"== {name}: refused as it should be: {steps.refusal(workspace)}", flush=True)
                continue
            artifacts = steps.build(workspace)
            print(
                f"== {name}: built and checked: {', '.join(a.name for a in artifacts)}", flush=True
            )
            steps.publish(workspace, artifacts)
            print(f"== {name}: published to {workspace.registry(name)}", flush=True)
            steps.rehearse(workspace)
            print(f"== {name}: a new project installed it and its test passed", flush=True)
        except ReleaseError as refused:
            print(f"release rehearsal: {name}: {refused}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
