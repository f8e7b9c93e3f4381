"""The conformance kit against the analytics vendor's Node SDK: `posthog-node`, as
adapters/package.json pins it, installed with npm into a temporary directory and driven through
its reference adapter (adapters/posthog_node.mjs), passes every vendor case."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import adapter_process, free_port, run_kit
from stub.conformance.cases import load_cases

ROOT = Path(__file__).resolve().parent.parent
ADAPTERS = ROOT / "adapters"
NODE = shutil.which("node")
NPM = shutil.which("npm")

if NODE is None or NPM is None:
    pytest.skip(
        "node 20+ and npm are needed for the posthog-node adapter (Debian: apt-get install -y "
        "nodejs npm)",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def node_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """posthog-node installed next to a copy of the adapter (ES modules ignore NODE_PATH)."""
    assert NPM is not None
    directory = tmp_path_factory.mktemp("posthog-node")
    for name in ("package.json", "posthog_node.mjs"):
        shutil.copy(ADAPTERS / name, directory / name)
    done = subprocess.run(
        [NPM, "install", "--no-audit", "--no-fund", "--silent"],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"npm install failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return directory


@pytest.fixture(scope="module")
def node_adapter(node_install: Path) -> Iterator[str]:
    assert NODE is not None
    with adapter_process([NODE, str(node_install / "posthog_node.mjs"), "--port", "0"]) as url:
        yield url


def installed_version(node_install: Path) -> str:
    document: dict[str, Any] = json.loads(
        (node_install / "node_modules" / "posthog-node" / "package.json").read_text()
    )
    return str(document["version"])


class TestThePosthogNodeAdapter:
    def test_posthog_node_passes_every_vendor_case(self, node_adapter: str) -> None:
        done = run_kit("--adapter", node_adapter)
        assert done.returncode == 0, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        vendor = {case.id for case in load_cases(areas=["vendor"])}
        assert {line.split()[1] for line in lines[1:-1]} == vendor
        assert lines[-1] == f"{len(vendor)} passed, 0 failed"

    def test_it_declares_the_node_sdk_on_the_vendor_plane(
        self, node_adapter: str, node_install: Path
    ) -> None:
        with urllib.request.urlopen(node_adapter + "/", timeout=10) as answer:
            info: dict[str, Any] = json.load(answer)
        assert (info["protocol"], info["language"], info["plane"]) == (1, "node", "vendor")
        assert info["name"] == f"posthog-node {installed_version(node_install)} (Node)"
        assert info["expectedFailures"] == {}


class TestTheGuideExample:
    def test_the_node_block_runs_as_written_and_passes(self, tmp_path: Path) -> None:
        """In a directory holding a copy of adapters/, on a free port, with this interpreter
        for `svc-stub`, and the adapter stopped by its PID afterwards."""
        readme = "\n" + (ROOT / "docs" / "guides" / "client-libraries.md").read_text(
            encoding="utf-8"
        )
        section = readme[readme.index("\n# Checking a client library\n") :]
        (block,) = [b for b in re.findall(r"```sh\n(.*?)```", section, re.S) if "node " in b]
        install, start, check = [line.split("  #")[0] for line in block.strip().splitlines()]
        (tmp_path / "adapters").mkdir()
        for name in ("package.json", "posthog_node.mjs"):
            shutil.copy(ADAPTERS / name, tmp_path / "adapters" / name)
        port = str(free_port())
        script = (
            f"{install} --silent --no-audit --no-fund\n{start.replace('3904', port)}\n"
            "adapter=$!; trap 'kill $adapter' EXIT; sleep 1\n"
            f"{check.replace('svc-stub', f'{sys.executable} -m stub', 1).replace('3904', port)}\n"
        )
        done = subprocess.run(
            ["bash", "-c", script], capture_output=True, text=True, timeout=300, check=False,
            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        vendor = load_cases(areas=["vendor"])
        assert done.stdout.splitlines()[-1] == f"{len(vendor)} passed, 0 failed"
