"""The documentation's examples run as written (the README and every page of docs/): a shell
block is run step by step against a spawned stub, and each step's output must match the JSON
shown under it (`"..."` stands for any value, `"proj_..."` for any string with that start);
and the site builds with `mkdocs build --strict`."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tomllib
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from conftest import (
    HANG_GUARD_S,
    INNER_PYTEST,
    SERVICE_RUNTIME_KEY,
    SpawnedStub,
    closed_within,
    free_port,
    real_service,
    spawn_stub,
)
from stub.process import StubProcess, url_of

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").rglob("*.md"))
PAGE_BREAK = "\n## (the next page)\n"
"""Between pages: a section never runs on into the next page."""


def docs_text() -> str:
    """The README and every page, as one text in which each `## ` section is found by name."""
    return PAGE_BREAK.join(path.read_text(encoding="utf-8") for path in [README, *PAGES])


SEPARATOR = "@@svc-stub-step@@"


@dataclass
class Step:
    script: str
    expected: Any | None
    """The JSON shown under the step, or None when it shows none."""


def shell_blocks(heading: str) -> list[str]:
    """The ```sh blocks of one section (from `heading` to the next `## ` heading)."""
    text = docs_text()
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + len(heading) + 2)
    section = text[start : end if end != -1 else len(text)]
    return re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)


def steps(block: str) -> list[Step]:
    """Commands, each with the `# {...}` JSON lines under it as what it should print; a step
    ends at its shown output or at a blank line."""
    found: list[Step] = []
    command: list[str] = []
    shown: list[str] = []
    for line in block.splitlines():
        if line.startswith("# ") and command and (shown or line[2:].lstrip().startswith("{")):
            shown.append(line[2:])
            continue
        if shown or (not line.strip() and command):  # a blank line ends a step too
            found.append(Step("\n".join(command), json.loads(" ".join(shown)) if shown else None))
            command, shown = [], []
        if line.strip():
            command.append(line)
    if command:
        found.append(Step("\n".join(command), json.loads(" ".join(shown)) if shown else None))
    return found


def run(block: str, url: str) -> list[tuple[Step, Any]]:
    """Runs the block in one shell, `S` pointing at the stub; each step's output, parsed."""
    parts = steps(block)
    script = "set -eu\n" + "".join(
        f"{_without_address(step.script)}\necho; echo {SEPARATOR}\n" for step in parts
    )
    done = subprocess.run(
        ["bash", "-c", script],
        env={"S": url, "PATH": "/usr/bin:/bin:/usr/local/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"the README block failed:\n{done.stderr}"
    outputs = done.stdout.split(SEPARATOR + "\n")
    return [(step, _parsed(out)) for step, out in zip(parts, outputs, strict=False)]


def printed_by(block: str, url: str) -> list[str]:
    """The lines a block prints, run whole in one shell with `S` pointing at the stub (an
    HTTP header's line without its carriage return)."""
    done = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + _without_address(block)],
        env={"S": url, "PATH": "/usr/bin:/bin:/usr/local/bin"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [line.rstrip("\r") for line in done.stdout.strip().splitlines()]


def _without_address(script: str) -> str:
    """The README's own `S=` line points at port 3901; the test's stub is elsewhere."""
    return "\n".join(line for line in script.splitlines() if not line.startswith("S="))


def _parsed(output: str) -> Any:
    """JSON when the step printed JSON (what the README shows under it), else the text."""
    text = output.strip()
    try:
        return json.loads(text) if text else None
    except ValueError:
        return text


def matches(actual: Any, shown: Any) -> bool:
    if shown == "...":  # any value, an object's included (the headers a client sent)
        return True
    if isinstance(shown, str) and shown.endswith("..."):
        return isinstance(actual, str | int | float) and str(actual).startswith(shown[:-3])
    if isinstance(shown, dict):
        return (
            isinstance(actual, dict)
            and actual.keys() == shown.keys()
            and all(matches(actual[k], v) for k, v in shown.items())
        )
    if isinstance(shown, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(shown)
            and all(map(matches, actual, shown))
        )
    return bool(actual == shown and type(actual) is type(shown))


@pytest.fixture(scope="module")
def fresh_stub() -> Iterator[SpawnedStub]:
    """A stub of its own, as a new user starts it: default fixtures, nothing else."""
    with spawn_stub(read_log=False) as stub:
        yield stub


class TestManagementPlaneSection:
    def test_the_curl_tour_prints_what_the_readme_shows(self, fresh_stub: SpawnedStub) -> None:
        tour, *_ = shell_blocks("# The management plane, for infrastructure tools")
        results = run(tour, fresh_stub.url)
        checked = [(step, out) for step, out in results if step.expected is not None]
        assert len(checked) >= 10, "the tour shows what most steps print"
        for step, output in checked:
            assert matches(output, step.expected), f"{step.script}\nprinted {output}"

    def test_the_fault_recipe_arms_what_it_says(self, fresh_stub: SpawnedStub) -> None:
        *_, recipe = shell_blocks("# The management plane, for infrastructure tools")
        fresh_stub.post("/_test/reset")
        run(recipe, fresh_stub.url)
        (armed,) = fresh_stub.get("/_test/fault")["armed"]
        assert (armed["mode"], armed["status"], armed["applyTo"]) == ("status", 503, ["projects"])
        fresh_stub.post("/_test/reset")

    def test_the_seeding_example_is_a_valid_fixture_file(self) -> None:
        from stub.fixtures import parse_fixture_document, parse_yaml

        text = docs_text()
        section = text[text.index("\n### Seeding\n") :]
        (example,) = re.findall(r"```yaml\n(.*?)```", section[: section.index("\n### ", 5)], re.S)
        fixtures = parse_fixture_document(parse_yaml(example, "README"), "README")
        assert fixtures.management is not None
        acme = fixtures.management.orgs["org_acme"]
        assert [p.slug for p in acme.projects] == ["checkout"]

    def test_the_marker_example_passes_against_the_seeding_example(self, tmp_path: Path) -> None:
        """The guide's marker test, as written, run with pytest in a new project whose
        fixtures/acme.yaml is the guide's seeding example; `archive_project`, the tool it
        tests, is the one in tests/examples/test_howto_management_tool.py, which the guide
        says runs the example (and which holds it word for word)."""
        text = docs_text()
        seeding = text[text.index("\n### Seeding\n") :]
        seeding = seeding[: seeding.index("\n### ", 5)]
        (seed,) = re.findall(r"```yaml\n(.*?)```", seeding, re.S)
        (example,) = re.findall(r"```python\n(.*?)```", seeding, re.S)
        assert example.startswith('@pytest.mark.svc_stub(fixtures="fixtures/acme.yaml")\n')
        howto = "tests/examples/test_howto_management_tool.py"
        assert f"`{howto}` runs this" in " ".join(seeding.split())
        source = (ROOT / howto).read_text(encoding="utf-8")
        assert example in source
        # The how-to's imports and its tool, without its own tests; then the guide's example.
        tool = [
            ast.get_source_segment(source, node) or ""
            for node in ast.parse(source).body
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test_"))
        ]
        (tmp_path / "fixtures").mkdir()
        (tmp_path / "fixtures" / "acme.yaml").write_text(seed, encoding="utf-8")
        file = "\n\n".join(tool) + "\n\n\n" + example
        done = pytest_in_a_new_project(tmp_path, "test_the_tool.py", file)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "1 passed" in done.stdout


class TestNamespacesSection:
    def test_the_curl_example_prints_what_the_readme_shows(self, fresh_stub: SpawnedStub) -> None:
        (block,) = shell_blocks("## Namespaces: one stub, many tests")
        results = run(block, fresh_stub.url)
        checked = [(step, out) for step, out in results if step.expected is not None]
        assert len(checked) >= 6, "the example shows what most steps print"
        for step, output in checked:
            assert matches(output, step.expected), f"{step.script}\nprinted {output}"
        assert fresh_stub.get("/_test/namespaces")["count"] == 0


SCREEN_LINES = 50
"""What a terminal or a repository page shows without scrolling, near enough."""


class TestTheTwoCommands:
    def test_the_two_commands_and_thirty_seconds_fit_on_one_screen(self) -> None:
        """A newcomer sees how to run it, test it and try it before scrolling; the site holds
        the rest."""
        text = README.read_text(encoding="utf-8")
        opening = text.split("## Thirty seconds", 1)[0] + "## Thirty seconds"
        thirty_seconds = text.split("## Thirty seconds", 1)[1].split("\n## ", 1)[0]
        assert len((opening + thirty_seconds).splitlines()) <= SCREEN_LINES

    def test_run_and_test_use_environments_of_their_own_and_ci_runs_the_test_one(self) -> None:
        text = README.read_text(encoding="utf-8")  # the README itself opens with them
        run_command, test_command, *_ = re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL)
        run_venv = run_command.split()[3]
        test_venv = test_command.split()[3]
        assert (run_venv, test_venv) == (".venv", ".venv-test")
        ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
        assert test_command.strip() in ci.splitlines()

    def test_the_run_command_installs_a_stub_that_serves_from_anywhere(
        self, tmp_path: Path
    ) -> None:
        """In a copy of the repository's files: the command as written, up to running the stub,
        which then starts on a free port (3901 may be taken), from another directory."""
        text = README.read_text(encoding="utf-8")
        run_command = re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL)[0].strip()
        install, _, start = run_command.rpartition(" && ")
        assert start == ".venv/bin/svc-stub"
        clone = tmp_path / "clone"
        tracked = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
        for name in tracked:
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, clone / name)
        installed = subprocess.run(
            ["bash", "-c", install.replace("python3", sys.executable, 1)],
            cwd=clone, capture_output=True, text=True, timeout=240, check=False,
        )  # fmt: skip
        assert installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-2000:]
        process = subprocess.Popen(
            [str(clone / start), "--port", "0"], cwd=tmp_path, stdout=subprocess.PIPE, text=True
        )
        try:
            assert process.stdout is not None
            url = url_of(process.stdout.readline())
            assert url is not None
            with urllib.request.urlopen(url + "/_test/fixtures", timeout=10) as answer:
                assert "checkout-v2" in json.load(answer)["flags"]  # the shipped default set
        finally:
            process.terminate()
            process.wait(10)
            process.stdout and process.stdout.close()

    def test_every_later_example_runs_in_the_activated_environment(self) -> None:
        """Stated once after the two commands; no example reaches into .venv/bin itself, but
        the language guides', whose install blocks set up the user's own project (a stub in its
        `.venv`, named by SVC_STUB_BIN), as the README says."""
        readme = README.read_text(encoding="utf-8")
        assert "`. .venv/bin/activate` (the Go, JVM, JavaScript and Rust guides install" in readme
        own_projects = {ROOT / "docs" / "guides" / f"{name}.md" for name in LANGUAGE_GUIDES}
        text = PAGE_BREAK.join(
            path.read_text(encoding="utf-8")
            for path in [README, *PAGES]
            if path not in own_projects
        )
        later = re.findall(r"```(?:sh|bash)\n(.*?)```", text, flags=re.DOTALL)[2:]
        assert not [block for block in later if ".venv/bin/" in block]


class TestTheTour:
    def test_run_as_a_script_it_prints_what_the_readme_shows_and_stops_its_stub(self) -> None:
        """The whole block as one script, as a user pastes it: only the port differs (3902 may
        be taken), and `svc-stub` is this interpreter's. It starts its stub, waits for it, runs
        every step and stops it: no readiness loop of the test's own."""
        (block,) = shell_blocks("## A tour with curl")
        port = str(free_port())
        checked, _ = run_as_a_script(block.replace("3902", port))
        assert len(checked) >= 5
        for step, output in checked:
            assert matches(output, step.expected), f"{step.script}\nprinted {output}"
        assert closed_within(int(port), seconds=5)  # stopped by its trap: nothing listens

    def test_a_failing_step_still_stops_the_stub(self) -> None:
        (block,) = shell_blocks("## A tour with curl")
        port = str(free_port())
        first_steps = block.replace("3902", port).split("# Evaluate one flag")[0]
        script = "set -e\n" + first_steps + "false\n"  # a step that fails, under set -e
        done = bash(script)
        assert done.returncode == 1
        assert '{"ok":true}' in done.stdout  # it waited for the stub before going on
        assert closed_within(int(port), seconds=5)  # stopped by its trap: nothing listens

    def test_under_a_taken_port_the_tour_stops_with_why_and_asks_the_other_stub_nothing(
        self,
    ) -> None:
        """Another svc-stub holds the port: the tour's own stub stops, and the tour stops with
        it, saying why, rather than sending its steps to the other one."""
        (block,) = shell_blocks("## A tour with curl")
        port = str(free_port())
        with StubProcess.start(["--port", port]) as other:
            done = bash(block.replace("3902", port), timeout=30)
            asked = urllib.request.urlopen(f"{other.url}/_test/requests", timeout=60)
            requests = json.load(asked)["requests"]
        assert done.returncode == 1
        assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in done.stdout
        assert '{"ok":true}' not in done.stdout
        assert requests == []  # not one step reached the other stub


def bash(script: str, cwd: Path = ROOT, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """A script as a user runs it, with this interpreter's `svc-stub`, `pip` and `python`."""
    return subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_as_a_script(block: str, cwd: Path = ROOT) -> tuple[list[tuple[Step, Any]], str]:
    """The whole block as one bash script, as a user pastes it (in `cwd`, where it may write
    its files); each step that shows JSON with what it printed, and all it printed."""
    done = bash(_with_separators(block), cwd=cwd)
    assert done.returncode == 0, done.stderr
    said = "\n".join(  # a background stub's ready line lands wherever it lands
        line for line in done.stdout.splitlines() if url_of(line) is None
    )
    outputs = [_parsed(out) for out in said.split(SEPARATOR)]
    shown = zip(steps(block), outputs, strict=False)
    return [(step, out) for step, out in shown if step.expected is not None], said


def _with_separators(block: str) -> str:
    return "".join(f"{step.script}\necho; echo {SEPARATOR}\n" for step in steps(block))


class TestWithThePythonClientSection:
    def test_the_example_reads_what_it_shows(self) -> None:
        """Run against a stub of its own: only the address differs from the README."""
        section = docs_text()
        section = section[section.index("\n## With the Python client\n") :]
        (example,) = re.findall(r"```python\n(.*?)```", section[: section.index("\n## ", 5)], re.S)
        shown = [line[2:] for line in example.splitlines() if line.startswith("# ")]
        with spawn_stub(read_log=False) as stub:
            module = ast.parse(example.replace("http://127.0.0.1:3901", stub.url))
            *body, last = module.body
            assert isinstance(last, ast.Expr)
            namespace: dict[str, Any] = {}
            exec(compile(ast.Module(body, []), "README", "exec"), namespace)
            value = eval(compile(ast.Expression(last.value), "README", "eval"), namespace)
            namespace["client"].shutdown()
        assert shown == [repr(value)]


def pytest_in_a_new_project(
    directory: Path, name: str, example: str, *options: str
) -> subprocess.CompletedProcess[str]:
    """The example saved as `name` in a directory of its own and run with pytest: the plugin
    comes from the installed package, nothing else is needed."""
    (directory / name).write_text(example, encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("SVC_STUB", "PYTEST_"))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *INNER_PYTEST, *options, name],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=directory,
        env=environment,
    )


class TestInPytestSection:
    def test_the_install_line_brings_pytest_with_the_plugin(self) -> None:
        import tomllib

        section = docs_text()
        section = section[section.index("\n## In pytest: one fixture\n") :]
        assert 'pip install "/path/to/svc-stub[pytest]" fireweave==0.1.0' in section
        project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
        extra = project["project"]["optional-dependencies"]["pytest"]
        assert [requirement.split(">")[0] for requirement in extra] == ["pytest"]

    def test_the_example_is_a_complete_file_that_passes_in_a_new_project(
        self, tmp_path: Path
    ) -> None:
        """Pasted as the README says, into a directory of its own, and run with pytest: the
        plugin comes from the installed package, nothing else is needed."""
        section = docs_text()
        section = section[section.index("\n## In pytest: one fixture\n") :]
        (example,) = re.findall(r"```python\n(.*?)```", section[: section.index("\n## ", 5)], re.S)
        done = pytest_in_a_new_project(tmp_path, "test_checkout.py", example)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "2 passed" in done.stdout


class TestTheInspectorGuide:
    def test_the_journal_in_full_prints_what_the_guide_shows(self, fresh_stub: SpawnedStub) -> None:
        (block,) = shell_blocks("## The same, without a browser")
        results = run(block, fresh_stub.url)
        checked = [(step, out) for step, out in results if step.expected is not None]
        assert len(checked) == 3
        for step, output in checked:
            assert matches(output, step.expected), f"{step.script}\nprinted {output}"

    def test_a_failed_test_leaves_the_page_its_report_names(self, tmp_path: Path) -> None:
        text = docs_text()
        section = text[text.index("\n## A failed test's journal\n") :]
        command, report = re.findall(r"```(?:sh|text)\n(.*?)```", section, re.S)[:2]
        assert command.strip() == "pytest --svc-stub-journal journals"
        failing = (
            "def test_checkout_reads_the_flag(svc_stub):\n"
            "    svc_stub.arm('500', apply_to='evaluate')\n"
            "    assert False, 'the checkout flag read its default'\n"
        )
        done = pytest_in_a_new_project(tmp_path, "test_checkout.py", failing, *command.split()[1:])

        assert "1 failed" in done.stdout, done.stdout + done.stderr
        shown = [line for line in report.splitlines() if line.startswith(("--", "the stub"))]
        header, named = shown
        printed = done.stdout.splitlines()
        title = header.strip("- ")  # the rule's width is the terminal's
        assert any(line.startswith("-") and line.strip("- ") == title for line in printed)
        (page,) = (tmp_path / "journals").glob("*.html")
        shown_name = re.sub(r"-[0-9a-f]{8}\.html", page.name[-14:], named)
        assert shown_name.replace("/home/me/shop", str(tmp_path)) in printed, done.stdout
        assert '"mode":"500"' in page.read_text(encoding="utf-8")


class TestTheJournalExample:
    def test_the_retry_example_is_a_complete_file_that_passes_in_a_new_project(
        self, tmp_path: Path
    ) -> None:
        text = docs_text()
        section = text[text.index("**The journal: when and how each request came.**") :]
        example = re.findall(r"```python\n(.*?)```", section, re.S)[0]
        assert "def test_fireweave_0_1_0_retries_register_at_once" in example
        done = pytest_in_a_new_project(tmp_path, "test_retries.py", example)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "1 passed" in done.stdout


class TestTheOfflineExample:
    def test_nothing_listens_at_the_address_it_prints(self, live_stub: SpawnedStub) -> None:
        (block,) = [b.text for b in blocks() if b.page == "docs/reference/control-plane.md"
                    and b.first_line == "S=http://127.0.0.1:3901"]  # fmt: skip
        (printed,) = printed_by(block, live_stub.url)
        assert re.fullmatch(r'\{"url":"http://127\.0\.0\.1:\d+"\}', printed)
        with pytest.raises(urllib.error.URLError) as refused:
            urllib.request.urlopen(json.loads(printed)["url"], timeout=HANG_GUARD_S)
        assert isinstance(refused.value.reason, ConnectionRefusedError)


class TestTheCoverageGuide:
    PAGE = "docs/guides/coverage.md"

    def test_the_gap_is_found_then_closed_as_shown(self, tmp_path: Path) -> None:
        """Run as written against a stub of its own (coverage outlives a reset); after the
        first, the summary a helper prints is the one shown."""
        found, closed, flags = [
            b.text for b in blocks() if b.page == self.PAGE and b.language == "sh"
        ]
        (summary,) = [b.text for b in blocks() if b.page == self.PAGE and b.language == "text"]
        with spawn_stub(read_log=False) as stub:
            for block in (found, closed, flags):
                script = block.replace("S=http://127.0.0.1:3901", f"S={stub.url}")
                done = bash(script, cwd=tmp_path)
                assert done.returncode == 0, done.stderr
                shown = [line[2:] for line in block.splitlines() if line.startswith("# ")]
                assert done.stdout.splitlines() == shown
                if block is found:
                    report = stub.get("/_test/coverage?scope=run")
                    assert report["summary"] == summary.splitlines()

    def test_a_teams_own_profile_reads_as_shown(self, tmp_path: Path) -> None:
        (own,) = [b.text for b in blocks() if b.page == self.PAGE and b.language == "yaml"]
        (tmp_path / "profiles.yaml").write_text(own)
        report = {"scope": "run", "cells": [{"route": "evaluate", "outcome": "ok", "count": 1}]}
        (tmp_path / "coverage.json").write_text(json.dumps({**report, "profiles": {}}))
        done = bash(
            "svc-stub coverage --report coverage.json --profiles profiles.yaml", cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        assert "checkout: 1 of 2 cells met\n  - checkout never saw a 429" in done.stdout


class TestTheReleasePage:
    PAGE = "docs/about/releasing.md"

    def test_its_rehearsal_is_the_one_ci_and_the_release_workflow_run(self) -> None:
        """The page's commands are `.ci/run`'s (which runs them whole); the workflow that
        publishes runs the same rehearsal and refusals before it publishes anything."""
        import yaml

        (block,) = [b.text for b in blocks() if b.page == self.PAGE and b.language == "sh"]
        ci = (ROOT / ".ci" / "run").read_text()
        install, rehearse = block.splitlines()
        assert install in ci
        assert rehearse.split(" --only")[0] in ci
        workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
        steps = workflow["jobs"]["rehearse"]["steps"]
        ran = "\n".join(step.get("run", "") for step in steps)
        assert "release/rehearse.py --out" in ran
        assert "release/rehearse.py --refusals" in ran
        assert workflow["jobs"]["publish"]["needs"] == "rehearse"


class TestTheSharedCommandExample:
    def test_the_run_gets_one_stub_until_it_stops(self, tmp_path: Path) -> None:
        (block,) = [b.text for b in blocks() if b.first_line.startswith("svc-stub shared ")]
        shutil.copy(ROOT / "fixtures" / "default.yaml", tmp_path / "flags.yaml")
        done = bash("set -e\n" + block, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        first, again = done.stdout.splitlines()
        assert first == again
        url = url_of(first)
        assert url is not None
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url)
        with pytest.raises(urllib.error.URLError) as gone:  # stopped by the block's last line
            urllib.request.urlopen(url + "/health", timeout=HANG_GUARD_S)
        assert isinstance(gone.value.reason, ConnectionRefusedError)


class TestCheckingAClientLibrarySection:
    def test_the_example_runs_the_kit_and_ends_as_shown(self, tmp_path: Path) -> None:
        """Run as written, but on a free port, with this interpreter, and the adapter stopped
        by its PID afterwards."""
        block = shell_blocks("# Checking a client library")[0]  # the Node one: its own test
        commands = [line for line in block.splitlines() if line and not line.startswith("#")]
        install, start, check = commands
        assert install.startswith("pip install fireweave==0.1.0")  # the suite has it already
        port = str(free_port())
        script = (
            f"{start.replace('python', sys.executable, 1).replace('3902', port)}\n"
            "adapter=$!; trap 'kill $adapter' EXIT; sleep 1\n"
            f"{check.replace('svc-stub', f'{sys.executable} -m stub', 1).replace('3902', port)}\n"
        )
        done = subprocess.run(
            ["bash", "-c", script],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=ROOT,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        shown = [line[2:] for line in block.splitlines() if line.startswith("# ")]
        printed = [line for line in done.stdout.splitlines() if "adapter listening" not in line]
        assert printed[0] == shown[0]
        assert printed[-1] == shown[-1]

    def test_the_minimal_adapter_runs_and_passes_the_read_cases(self) -> None:
        """Saved where the README says and run as it says (on a free port), then checked."""
        section = docs_text()
        section = section[section.index("\n# Checking a client library\n") :]
        (example,) = re.findall(r"```python\n(.*?)```", section[: section.index("\n## ", 5)], re.S)
        adapter = ROOT / "adapters" / "reads_only.py"
        adapter.write_text(example, encoding="utf-8")
        process = subprocess.Popen(
            [sys.executable, str(adapter), "--port", "0"], stdout=subprocess.PIPE, text=True
        )
        try:
            assert process.stdout is not None
            url = process.stdout.readline().removeprefix("adapter listening on ").strip()
            done = subprocess.run(
                [sys.executable, "-m", "stub", "conformance", "--adapter", url,
                 "--case", "reads/*-reads*", "--case", "faults/*"],
                capture_output=True, text=True, timeout=120, check=False,
            )  # fmt: skip
        finally:
            process.terminate()
            process.wait(5)
            process.stdout and process.stdout.close()
            adapter.unlink()
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.splitlines()[-1] == "17 passed, 0 failed"

    def test_against_every_case_it_ends_as_the_readme_says(self) -> None:
        """The README's run of the minimal adapter, as written but on free ports."""
        section = docs_text()
        section = section[section.index("\n# Checking a client library\n") :]
        section = section[: section.index("\n## ", 5)]
        (example,) = re.findall(r"```python\n(.*?)```", section, re.S)
        block = next(b for b in re.findall(r"```sh\n(.*?)```", section, re.S) if "3903" in b)
        shown = [line[2:] for line in block.splitlines() if line.startswith("# ")]
        adapter = ROOT / "adapters" / "reads_only.py"
        adapter.write_text(example, encoding="utf-8")
        port = str(free_port())
        script = "\n".join(
            line.replace("3903", port) + ("\nsleep 1" if line.endswith("&") else "")
            for line in block.splitlines()
            if not line.startswith("#")
        )
        try:
            done = bash(script, cwd=ROOT, timeout=120)
        finally:
            adapter.unlink()
        printed = [line for line in done.stdout.splitlines() if not line.startswith("adapter ")]
        assert printed[0] == shown[0]
        assert printed[-1] == shown[-1] == "22 passed, 2 failed, 25 skipped"
        failed = [line.split()[1] for line in printed if line.startswith("FAIL")]
        assert failed == [line.split()[1] for line in shown if line.startswith("FAIL")]


class TestKeysAndPlanesSection:
    def test_the_warning_example_prints_the_header_shown(self, fresh_stub: SpawnedStub) -> None:
        (block,) = shell_blocks("# Keys and rate limits")
        shown = [line[2:] for line in block.splitlines() if line.startswith("# X-Svc")]
        assert printed_by(block, fresh_stub.url) == shown


class TestStepParsing:
    def test_matches_treats_dots_as_any_value_with_that_start(self) -> None:
        assert matches({"id": "proj_01ABC", "n": 3}, {"id": "proj_...", "n": "..."})
        assert not matches({"id": "env_01ABC"}, {"id": "proj_..."})
        assert not matches({"a": 1, "b": 2}, {"a": 1})
        assert not matches(True, 1)


REFERENCE = "# The real service as the reference"
REFERENCE_PAGE = "docs/guides/real-service.md"


def page_shell_blocks(page: str) -> list[str]:
    """A page's ```sh blocks, in order, whatever its headings."""
    return [block.text for block in blocks() if block.page == page and block.language == "sh"]


MANAGEMENT_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "management.yaml"


class TestTheRealServiceSection:
    def test_record_then_verify_run_as_written_against_a_stand_in(self, tmp_path: Path) -> None:
        commands, *_ = page_shell_blocks(REFERENCE_PAGE)
        assert f"SVC_STUB_RUNTIME_KEY={SERVICE_RUNTIME_KEY} " in commands  # the stand-in's key
        with real_service("--strict-keys", "--fixtures", str(MANAGEMENT_FIXTURES)) as staging:
            script = "set -eu\n" + "\n".join(
                f"U={staging.url}" if line.startswith("U=") else line
                for line in commands.splitlines()
            )
            done = bash(script, cwd=tmp_path, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        assert (tmp_path / "staging.yaml").is_file()
        assert re.search(r"^\d+ probes: \d+ same, 0 differ, 0 accepted", done.stdout, re.M)
        assert "svc_org_acme_admin" not in done.stdout + (tmp_path / "staging.yaml").read_text()

    def test_the_verify_output_shown_is_in_verifys_format(self) -> None:
        text = docs_text()
        section = text[text.index(REFERENCE) :]
        shown = re.search(r"```\n(SAME .*?)```", section, flags=re.DOTALL)
        assert shown is not None
        *probes, total = shown.group(1).strip().splitlines()
        for line in probes:
            assert re.fullmatch(r"(SAME|DIFFERS|SKIPPED|ACCEPTED) +[a-z-]+/[a-z-]+(: .+)?", line)
        assert re.fullmatch(r"\d+ probes: \d+ same, \d+ differ, \d+ accepted, \d+ skipped", total)

    def test_the_nightly_job_uses_options_and_variables_verify_reads(self) -> None:
        import yaml

        text = docs_text()
        section = text[text.index(REFERENCE) :]
        block = re.search(r"```yaml\n(.*?)```", section, flags=re.DOTALL)
        assert block is not None
        job = yaml.safe_load(block.group(1))
        step = job["jobs"]["drift"]["steps"][-1]
        helped = subprocess.run(
            [sys.executable, "-m", "stub", "verify", "--help"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
        for option in re.findall(r"(--[a-z-]+)", step["run"]):
            assert option in helped, option
        for variable in step["env"]:
            assert variable == "STAGING_URL" or variable in helped, variable


class TestOnYourMachineFirst:
    def test_the_walkthrough_prints_what_it_shows(self, tmp_path: Path) -> None:
        """Record and verify against a second svc-stub, as written (on a free port): each
        output shown (its lines joined, `...` standing for anything) is printed, in order, and
        the stand-in is gone after."""
        (block,) = [
            text
            for text in page_shell_blocks(REFERENCE_PAGE)
            if text.startswith("# A stand-in for your staging service")
        ]
        service = str(free_port())
        script = block.replace("3903", service)
        done = bash(script, cwd=tmp_path, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        printed = done.stdout.splitlines()
        assert len(_shown_outputs(script)) == 2
        for shown in _shown_outputs(script):
            pattern = ".*".join(re.escape(part) for part in shown.split("..."))
            assert any(re.fullmatch(pattern, line) for line in printed), (shown, printed)
        assert closed_within(int(service), seconds=5), f"a stub still listens on {service}"

    def test_a_stand_in_that_cannot_start_stops_it_with_its_own_error(self, tmp_path: Path) -> None:
        """The port is taken: the script says why in the stand-in's words and goes no
        further (no record, no verify against whatever holds the port)."""
        (block,) = [
            text
            for text in page_shell_blocks(REFERENCE_PAGE)
            if text.startswith("# A stand-in for your staging service")
        ]
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = str(taken.getsockname()[1])
            done = bash(block.replace("3903", port), cwd=tmp_path, timeout=60)
        assert done.returncode != 0
        assert "cannot listen" in done.stdout
        assert "recorded" not in done.stdout
        assert not (tmp_path / "staging.yaml").exists()


def _shown_outputs(block: str) -> list[str]:
    """What a block shows under its commands: each run of `# ` lines after a command line,
    joined (a continued line starts `#   `)."""
    shown: list[str] = []
    after_command = False
    for line in block.splitlines():
        if line.startswith("# ") and after_command:
            text = line[2:]
            if text.startswith("  ") and shown:
                shown[-1] += text.strip()
            else:
                shown.append(text)
        else:
            after_command = bool(line) and not line.startswith("#")
            if line.startswith("# ") and not after_command:
                continue
    return shown


class TestProxySection:
    def test_the_tour_prints_what_it_shows_in_front_of_a_stand_in(self, tmp_path: Path) -> None:
        """Run as a script (on free ports): its three answers are the ones shown, the
        journal's saying the 503 was never forwarded, and both stubs are gone after."""
        *_, tour = page_shell_blocks(REFERENCE_PAGE)
        service, proxy = str(free_port()), str(free_port())
        script = tour.replace("3903", service).replace("3902", proxy)
        done = bash(script, cwd=tmp_path, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        printed = [json.loads(line) for line in done.stdout.splitlines()]
        shown = [json.loads(text) for text in _shown_outputs(script)]
        assert len(shown) == 3
        assert len(printed) == len(shown)
        for actual, expected in zip(printed, shown, strict=True):
            assert matches(actual, expected), f"printed {actual}"
        forwarded = [entry["upstream"] for entry in printed[-1]["requests"]]
        assert forwarded[0]["status"] == 200
        assert forwarded[1] is None
        for port in (service, proxy):  # stopped by the block's trap
            assert closed_within(int(port), seconds=5), f"a stub still listens on {port}"


class TestTheBrowserGuide:
    GUIDE = ROOT / "docs" / "guides" / "browser.md"

    def blocks(self, language: str) -> list[str]:
        text = self.GUIDE.read_text(encoding="utf-8")
        return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.M | re.S)

    def test_what_a_page_sees_prints_what_it_shows(self, fresh_stub: SpawnedStub) -> None:
        (block,) = [b for b in self.blocks("sh") if b.startswith("S=")]
        shown = [line[2:] for line in block.splitlines() if line.startswith("# ")]
        assert printed_by(block, fresh_stub.url) == shown

    def test_the_install_line_brings_what_the_example_imports(self) -> None:
        import tomllib

        (install,) = [b for b in self.blocks("sh") if b.startswith("pip install")]
        assert install.strip() == 'pip install "/path/to/svc-stub[pytest]" playwright'
        project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
        tested_with = project["project"]["optional-dependencies"]["test"]
        assert any(requirement.startswith("playwright") for requirement in tested_with)

    def test_the_playwright_example_passes_in_a_new_project(self, tmp_path: Path) -> None:
        if shutil.which("chromium") is None:
            pytest.skip("no Chromium for the browser guide's example: apt-get install -y chromium")
        (page,) = self.blocks("html")
        (example,) = self.blocks("python")
        (tmp_path / "app").mkdir()
        (tmp_path / "app" / "index.html").write_text(page, encoding="utf-8")
        done = pytest_in_a_new_project(tmp_path, "test_checkout_page.py", example)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "2 passed" in done.stdout

    def test_the_compose_setup_reaches_the_control_plane_by_its_service_name(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        import yaml

        (compose,) = self.blocks("yaml")
        services = yaml.safe_load(compose)["services"]
        stub, tests = services["svc-stub"], services["tests"]
        command = stub["command"].split()
        assert command[:3] == ["svc-stub", "--host", "0.0.0.0"]
        assert tests["environment"]["SVC_STUB_URL"] == "http://svc-stub:3901"
        token = tests["environment"]["SVC_STUB_CONTROL_TOKEN"]
        # As the compose file starts it, but on loopback and a free port: only the Host differs.
        arguments = ["--host", "127.0.0.1", *command[3:]]
        for variable, value in stub["environment"].items():
            monkeypatch.setenv(variable, value)
        with spawn_stub(*arguments, read_log=False) as started:
            port = started.url.rsplit(":", 1)[1]
            bearer = {"Authorization": f"Bearer {token}"}
            named = started.status("/_test/requests", {"Host": f"svc-stub:{port}", **bearer})
            other = started.status("/_test/requests", {"Host": f"tests:{port}", **bearer})
            tokenless = started.status("/_test/requests", {"Host": f"svc-stub:{port}"})
        assert (named, other, tokenless) == (200, 403, 401)


# ------------------------------------------------------------------------------------------
# Every code block of the documentation: run by the test named for it, or checked as far as it
# goes. A new block without an entry here fails the suite.
# ------------------------------------------------------------------------------------------


class Block(NamedTuple):
    page: str
    language: str
    first_line: str
    text: str


def blocks() -> list[Block]:
    found = []
    for path in [README, *PAGES]:
        page = str(path.relative_to(ROOT))
        for language, text in re.findall(
            r"^```([a-z]*)\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.M | re.S
        ):
            found.append(Block(page, language or "text", _first_words(text), text))
    return found


def _first_words(text: str) -> str:
    """A block's first line up to its comment or its first run of spaces: what names it."""
    first = text.splitlines()[0].strip()
    return re.split(r"\s{2,}", first)[0]


JAVA_TESTS = "clients/java/src/test/java/dev/svcstub/junit/"
"""Where the JUnit extension's tests are, for the entries of its guide's blocks."""

LANGUAGE_GUIDES = ("go", "java", "javascript", "rust")
COVERAGE_LINE = (
    "svc-stub coverage: runtime 2 of 15 cells met; gaps: evaluate never met a 401; evaluate "
    "never met a 429 with Retry-After; evaluate never met a timeout (a delay or a hang); "
    "evaluate never met a malformed answer (invalid_json); evaluate never met a truncated "
    "answer; and 8 more"
)
"""The end-of-run summary the coverage, JS and JVM guides show: a run that armed only a 500."""
INSTALL_FROM_A_CLONE = "python3 -m venv .venv && .venv/bin/pip install /path/to/svc-stub"
"""The first line of each language guide's install block."""
NO_COMMAND = (
    "svc-stub: no svc-stub command (SVC_STUB_BIN is not set and none is on PATH); install it from "
    "its clone (python3 -m venv .venv && .venv/bin/pip install /path/to/svc-stub) and set "
    "SVC_STUB_BIN=$PWD/.venv/bin/svc-stub, or SVC_STUB_URL to a running stub"
)
"""What every language's helper says when it finds no svc-stub to run (a guide shows it)."""

RUN_BY: dict[tuple[str, str], str] = {
    ("README.md", "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/svc-stub"):
        "TestTheTwoCommands.test_the_run_command_installs_a_stub_that_serves_from_anywhere",
    ("README.md", 'python3 -m venv .venv-test && .venv-test/bin/pip install -e ".[test]" && '
     ".venv-test/bin/pytest"): "TestTheTwoCommands (.ci/run runs it)",
    ("README.md", "S=http://127.0.0.1:3901"): "TestTheReadmesThirtySeconds",
    ("docs/about/architecture.md", "pyproject.toml"): "TestPartialBlocks.test_the_tree",
    ("docs/about/development.md", ".venv-test/bin/pytest"): "TestPartialBlocks (.ci/run)",
    ("docs/about/development.md", "python3 -m venv .venv-lowest && .venv-lowest/bin/pip install "
     '-e ".[test]" "aiohttp==3.14.0"'): "TestPartialBlocks.test_the_lowest_aiohttp_block",
    ("docs/getting-started.md", "L=$(mktemp)"): "TestTheTour",
    ("docs/getting-started.md", "from fireweave import EvaluationContext, FireweaveClient, "
     "FireweaveRemoteAdapter, FireweaveRuntime"): "TestWithThePythonClientSection",
    ("docs/guides/browser.md", "S=http://127.0.0.1:3901"):
        "TestTheBrowserGuide.test_what_a_page_sees_prints_what_it_shows",
    ("docs/guides/browser.md", 'pip install "/path/to/svc-stub[pytest]" playwright'):
        "TestTheBrowserGuide.test_the_install_line_brings_what_the_example_imports",
    ("docs/guides/browser.md", "<!doctype html>"):
        "TestTheBrowserGuide.test_the_playwright_example_passes_in_a_new_project",
    ("docs/guides/browser.md", '"""The checkout page against svc-stub, in a real browser: its flag '
     'read, a 503 backed off."""'):
        "TestTheBrowserGuide.test_the_playwright_example_passes_in_a_new_project",
    ("docs/guides/browser.md", "svc-stub --allow-origin http://localhost:63315"):
        "tests/test_cors_browser.py",
    ("docs/guides/browser.md", 'const STUB = "http://127.0.0.1:3901";'):
        "tests/test_cors_browser.py",
    ("docs/guides/browser.md", "# compose.yaml (the parts that matter)"):
        "TestTheBrowserGuide.test_the_compose_setup_reaches_the_control_plane_by_its_service_name",
    ("docs/guides/ci.md", "svc-stub --port 3901 > svc-stub.log 2>&1 &"): "TestTheCiGuide",
    ("docs/guides/ci.md", "# .github/workflows/tests.yml"): "TestPartialBlocks.test_workflows",
    ("docs/guides/inspector.md", "S=http://127.0.0.1:3901"): "TestTheInspectorGuide",
    ("docs/guides/inspector.md", "pytest --svc-stub-journal journals"):
        "TestTheInspectorGuide.test_a_failed_test_leaves_the_page_its_report_names",
    ("docs/guides/inspector.md", "_____________________________ test_checkout_reads_the_flag "
     "_____________________________"):
        "TestTheInspectorGuide.test_a_failed_test_leaves_the_page_its_report_names",
    ("docs/guides/inspector.md", "# .github/workflows/tests.yml (the steps that matter)"):
        "TestPartialBlocks.test_workflows",
    ("docs/guides/client-libraries.md", "pip install fireweave==0.1.0"):
        "TestCheckingAClientLibrarySection",
    ("docs/guides/client-libraries.md", "from fireweave import ("):
        "TestCheckingAClientLibrarySection",
    ("docs/guides/client-libraries.md", "python adapters/reads_only.py --port 3903 &"):
        "TestCheckingAClientLibrarySection",
    ("docs/guides/client-libraries.md", "- run: python adapters/my_client.py --port 3902 &"):
        "TestPartialBlocks.test_workflows",
    ("docs/guides/client-libraries.md", "npm install --prefix adapters"):
        "tests/test_conformance_node.py",
    ("docs/guides/faults.md", "S=http://127.0.0.1:3901"): "TestTheFaultRecipes",
    ("docs/reference/fixtures.md", "flags:"): "TestTheFixtureExamples",
    ("docs/guides/fixtures.md", "svc-stub check fixtures/default.yaml"): "TestTheFixturesGuide",
    ("docs/guides/go.md", INSTALL_FROM_A_CLONE):
        "clients/go/examples/docs_test.go",
    ("docs/guides/go.md", "// checkout.go: the application code under test"):
        "clients/go/examples/checkout/checkout_test.go",
    ("docs/guides/go.md", "// checkout_test.go: run with `go test ./...`"):
        "clients/go/examples/checkout/checkout_test.go",
    ("docs/guides/go.md", "// provider.go: an infrastructure tool's code under test (a Terraform "
     "provider's resource)"): "clients/go/examples/provider/provider_test.go",
    ("docs/guides/go.md", "// provider_test.go: run with `go test ./...`"):
        "clients/go/examples/provider/provider_test.go",
    ("docs/guides/go.md", "// internal/client/svcstub_test.go, in the provider's module"):
        "clients/go/examples/docs_test.go (parsed; it builds only in the provider's module)",
    ("docs/guides/go.md", "// sdks/go/adapters/remote/stub_test.go"):
        "clients/go/examples/docs_test.go (parsed; it builds only in the SDK's module)",
    ("docs/guides/go.md", "=== RUN"): "clients/go/svcstub/journal_test.go",
    ("docs/guides/go.md", NO_COMMAND): "clients/go/svcstub/errors_test.go",
    ("docs/guides/rust.md", INSTALL_FROM_A_CLONE):
        "clients/rust/tests/guide.rs",
    ("docs/guides/rust.md", "//! checkout.rs: the application code under test"):
        "clients/rust/tests/examples_checkout.rs",
    ("docs/guides/rust.md", "// tests/checkout.rs: run with `cargo test`"):
        "clients/rust/tests/examples_checkout.rs",
    ("docs/guides/rust.md", "//! provider.rs: an infrastructure tool's code under test (a "
     "Terraform provider's resource)"): "clients/rust/tests/examples_provider.rs",
    ("docs/guides/rust.md", "// tests/provider.rs: run with `cargo test`"):
        "clients/rust/tests/examples_provider.rs",
    ("docs/guides/rust.md", "---- checkout_records_the_exposure stdout ----"):
        "clients/rust/tests/journal.rs",
    ("docs/guides/rust.md", NO_COMMAND): "clients/rust/tests/errors.rs",
    ("docs/guides/java.md", INSTALL_FROM_A_CLONE):
        JAVA_TESTS + "GuideTest.java",
    ("docs/guides/java.md", "<dependency>"): JAVA_TESTS + "GuideTest.java",
    ("docs/guides/java.md", "repositories { mavenLocal(); mavenCentral() }"):
        "TestPartialBlocks (Gradle is not on this machine; GuideTest checks its coordinates)",
    ("docs/guides/java.md", "// Checkout.java: the application code under test"):
        JAVA_TESTS + "examples/CheckoutTest.java",
    ("docs/guides/java.md", "// CheckoutTest.java: run with `mvn test`"):
        JAVA_TESTS + "examples/CheckoutTest.java",
    ("docs/guides/java.md", "# pricing.yaml: src/test/resources/dev/svcstub/junit/examples/"):
        JAVA_TESTS + "examples/CheckoutTest.java",
    ("docs/guides/java.md", "junit.jupiter.execution.parallel.enabled=true"):
        "clients/java/src/test/resources/junit-platform.properties",
    ("docs/guides/java.md", "@ExtendWith(SvcStubExtension::class)"):
        "TestPartialBlocks (Kotlin is not built in CI; compiled and run by hand)",
    ("docs/guides/java.md", "// Provider.java: an infrastructure tool's code under test (a "
     "Terraform provider's resource)"):
        JAVA_TESTS + "examples/ProviderTest.java",
    ("docs/guides/java.md", "// ProviderTest.java: run with `mvn test`"):
        JAVA_TESTS + "examples/ProviderTest.java",
    ("docs/guides/java.md", "// src/test/java/com/example/checkout/FireweaveClientTest.java"):
        "TestPartialBlocks (it builds only beside the SDK; run by hand against it)",
    ("docs/guides/java.md", "[INFO] Running com.example.checkout.CheckoutTest"):
        JAVA_TESTS + "JournalTest.java",
    ("docs/guides/java.md", NO_COMMAND.replace("/path/to/", "path/to/")):
        JAVA_TESTS + "GuideTest.java",
    ("docs/guides/javascript.md", INSTALL_FROM_A_CLONE):
        "clients/javascript/test/node/docs.test.js",
    ("docs/guides/javascript.md", "// checkout.test.js: run with `node --test`"):
        "clients/javascript/scripts/examples.mjs",
    ("docs/guides/javascript.md", "// vitest.config.js: one stub for the run, shared by every "
     "worker"): "clients/javascript/scripts/examples.mjs",
    ("docs/guides/javascript.md", "// checkout.test.js: run with `npx vitest run`"):
        "clients/javascript/scripts/examples.mjs",
    ("docs/guides/javascript.md", "// jest.config.js: one stub for the run, shared by every "
     "worker"): "clients/javascript/scripts/examples.mjs",
    ("docs/guides/javascript.md", "// checkout.test.js: run with "
     "`NODE_OPTIONS=--experimental-vm-modules npx jest`"):
        "clients/javascript/scripts/examples.mjs",
    ("docs/guides/javascript.md", "// playwright.config.js: one stub for the run; Chromium from "
     "the system"): "clients/javascript/scripts/examples.mjs",
    ("docs/guides/javascript.md", "// checkout.spec.js: run with `npx playwright test`"):
        "clients/javascript/scripts/examples.mjs",
    ("docs/guides/javascript.md", "AssertionError: no exposure of checkout-v2 for user-2; "
     "exposures recorded:"): "clients/javascript/test/node/journal.test.js",
    ("docs/guides/javascript.md", NO_COMMAND.replace("/path/to/", "path/to/")):
        "clients/javascript/test/node/docs.test.js",
    ("docs/guides/keys.md", "# An organisation key in a runtime adapter: served, and flagged"):
        "TestKeysAndPlanesSection",
    ("docs/guides/keys.md", "keys:"): "TestTheFixtureExamples",
    ("docs/guides/management.md", "S=http://127.0.0.1:3901"): "TestManagementPlaneSection",
    ("docs/guides/management.md", "management:"): "TestManagementPlaneSection",
    ("docs/guides/management.md", '@pytest.mark.svc_stub(fixtures="fixtures/acme.yaml")'):
        "TestManagementPlaneSection.test_the_marker_example_passes_against_the_seeding_example",
    ("docs/guides/management.md", "# The provider's retry-free error path: the next project "
     "create fails with a 503"): "TestManagementPlaneSection",
    ("docs/guides/pytest.md", "from fireweave import EvaluationContext, FireweaveClient, "
     "FireweaveRemoteAdapter, FireweaveRuntime"): "TestInPytestSection",
    ("docs/guides/pytest.md", "S=http://127.0.0.1:3901"): "TestNamespacesSection",
    ("docs/guides/real-service.md", "U=https://staging.example.com"): "TestTheRealServiceSection",
    ("docs/guides/real-service.md", "SAME"): "TestTheRealServiceSection",
    ("docs/guides/real-service.md", "# .github/workflows/stub-drift.yml"):
        "TestTheRealServiceSection",
    ("docs/guides/real-service.md", "# svc-stub in front of a stand-in for your staging service"):
        "TestProxySection",
    ("docs/guides/real-service.md", "# A stand-in for your staging service: a second svc-stub "
     "that takes only its own key, strictly"): "TestOnYourMachineFirst",
    ("docs/reference/cli.md", "svc-stub [--host 127.0.0.1] [--port 3901] [--fixtures PATH ...] "
     "[--watch] [--api-key KEY ...]"): "TestPartialBlocks.test_the_synopsis",
    ("docs/reference/control-plane.md", "import pytest"): "TestTheJournalExample",
    ("docs/reference/control-plane.md", "S=http://127.0.0.1:3901"): "TestTheOfflineExample",
    ("docs/guides/coverage.md", "S=http://127.0.0.1:3901"): "TestTheCoverageGuide",
    ("docs/guides/java.md", COVERAGE_LINE): JAVA_TESTS + "CoverageTest.java",
    ("docs/guides/javascript.md", COVERAGE_LINE): "clients/javascript/test/vitest/coverage.test.js",
    ("docs/guides/coverage.md", "profiles:"): "TestTheCoverageGuide",
    ("docs/guides/coverage.md", COVERAGE_LINE): "TestTheCoverageGuide",
    ("docs/about/releasing.md", '.venv-test/bin/pip install -e ".[release]"'):
        "TestTheReleasePage (.ci/run)",
    ("docs/guides/rust.md", "svc-stub coverage: runtime 1 of 15 cells met; gaps: evaluate was "
     "never answered successfully; evaluate never met a 401; evaluate never met a 429 with "
     "Retry-After; evaluate never met a timeout (a delay or a hang); evaluate never met a "
     "malformed answer (invalid_json); and 9 more"): "clients/rust/tests/coverage.rs",
    ("docs/reference/cli.md", "svc-stub shared --owner $$ -- --fixtures flags.yaml"):
        "TestTheSharedCommandExample",
}  # fmt: skip
"""Each block, by page and first line, and the test that runs it (or checks it as far as a
block that is partial can be: a CI workflow, a tree, a synopsis)."""


class TestEveryBlockIsRun:
    def test_every_block_has_a_test_and_every_entry_a_block(self) -> None:
        found = {(block.page, block.first_line) for block in blocks()}
        missing = found - RUN_BY.keys()
        assert not missing, f"blocks no test runs (add one, and an entry in RUN_BY): {missing}"
        assert not RUN_BY.keys() - found, "RUN_BY names blocks the docs no longer have"

    def test_every_test_named_exists(self) -> None:
        here = (ROOT / "tests" / "test_docs.py").read_text(encoding="utf-8")
        for runner in RUN_BY.values():
            name = runner.split()[0]
            if name.startswith(("tests/", "clients/")):
                assert (ROOT / name).is_file(), name
            else:
                cls, _, method = name.partition(".")
                assert f"class {cls}:" in here, cls
                assert not method or f"def {method}" in here, name


class TestTheReadmesThirtySeconds:
    def test_it_prints_what_it_shows(self, fresh_stub: SpawnedStub) -> None:
        fresh_stub.post("/_test/reset")
        (block,) = [b.text for b in blocks() if b.first_line == "S=http://127.0.0.1:3901"][:1]
        results = run(block, fresh_stub.url)
        checked = [(step, out) for step, out in results if step.expected is not None]
        assert len(checked) == 2
        for step, output in checked:
            assert matches(output, step.expected), f"{step.script}\nprinted {output}"
        assert results[-1][1].startswith('{"requests":[{"seq":')


class TestTheCiGuide:
    def test_the_job_script_runs_as_written_on_a_free_port(self, tmp_path: Path) -> None:
        (block,) = [
            b.text for b in blocks() if b.page == "docs/guides/ci.md" and b.language == "sh"
        ]
        checked, said = run_as_a_script(block.replace("3901", str(free_port())), cwd=tmp_path)
        assert (tmp_path / "svc-stub.log").is_file()  # its log, where the job runs
        assert len(checked) == 3
        for step, output in checked:
            assert matches(output, step.expected), f"{step.script}\nprinted {output}"
        assert '{"decisions":[{"flagKey":"dark-mode"' in said  # untouched by the suite's fault

    def test_under_a_taken_port_the_job_fails_with_the_stubs_own_line(self, tmp_path: Path) -> None:
        (block,) = [
            b.text for b in blocks() if b.page == "docs/guides/ci.md" and b.language == "sh"
        ]
        port = str(free_port())
        first_steps = block.replace("3901", port).split("# A suite in any language")[0]
        with StubProcess.start(["--port", port]):
            done = bash(first_steps, cwd=tmp_path, timeout=30)
        assert done.returncode == 1
        assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in done.stdout


class TestTheFaultRecipes:
    def test_each_recipe_arms_what_it_says(self, fresh_stub: SpawnedStub) -> None:
        fresh_stub.post("/_test/reset")
        (block,) = shell_blocks("## Recipes")
        run(block, fresh_stub.url)
        armed = fresh_stub.get("/_test/fault")["armed"]
        assert [fault.get("mode") for fault in armed] == ["500", None, "500", "delay"]
        assert armed[0]["ttlRequests"] == 2
        assert [step["mode"] for step in armed[1]["sequence"]] == ["429", "reset", "status", "none"]
        assert (armed[2]["probability"], armed[2]["seed"]) == (0.3, 42)
        last = fresh_stub.get("/_test/requests")["requests"][-1]
        assert (last["status"], last["fault"]["mode"]) == (503, "status")
        fresh_stub.post("/_test/reset")


class TestTheFixtureExamples:
    @pytest.mark.parametrize(
        ("page", "first_line"),
        [("docs/reference/fixtures.md", "flags:"), ("docs/guides/keys.md", "keys:")],
    )
    def test_the_example_loads_as_a_fixture_file(self, page: str, first_line: str) -> None:
        from stub.fixtures import parse_fixture_document, parse_yaml

        (block,) = [b.text for b in blocks() if (b.page, b.first_line) == (page, first_line)]
        document = parse_yaml(block.replace("{...}", "{}"), page)
        parse_fixture_document(document, page)


class TestTheFixturesGuide:
    def test_the_check_prints_what_it_shows(self) -> None:
        (block,) = [b.text for b in blocks() if b.first_line.startswith("svc-stub check ")]
        command, shown = block.splitlines()
        done = subprocess.run(
            [sys.executable, "-m", "stub", *command.split()[1:]],
            cwd=ROOT, capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        assert (done.returncode, done.stdout) == (0, shown.removeprefix("# ") + "\n")


class TestPartialBlocks:
    """Blocks that cannot run here whole, checked as far as they go."""

    def test_the_tree(self) -> None:
        """Every top-level name exists, and the package's listing is its modules, all of them
        and no more: a folder two spaces in, its modules four."""
        (block,) = [b.text for b in blocks() if b.page == "docs/about/architecture.md"]
        named = [line.split()[0] for line in block.splitlines() if line and not line[0].isspace()]
        for name in named:
            assert (ROOT / name.rstrip("/")).exists(), name
        package = ROOT / "stub"
        listed = set(_package_listing(block))
        modules = {
            path.relative_to(ROOT).as_posix()
            for path in package.rglob("*.py")
            if path.name != "__init__.py" or path.parent == package
        }
        assert listed - {name for name in listed if not name.endswith(".py")} == modules

    def test_the_lowest_aiohttp_block(self) -> None:
        """The development page's run on the lowest aiohttp is `.ci/run`'s: the floor
        `pyproject.toml` declares, and tests of the request path `.ci/run` runs on it."""
        (block,) = [
            b.text for b in blocks() if b.page == "docs/about/development.md" and "lowest" in b.text
        ]
        declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
        (aiohttp,) = [dependency for dependency in declared if dependency.startswith("aiohttp")]
        floor = re.search(r">=([0-9.]+)", aiohttp)[1]  # type: ignore[index]  # it declares one
        assert f'"aiohttp=={floor}.0"' in block or f'"aiohttp=={floor}"' in block
        ci = (ROOT / ".ci" / "run").read_text()
        assert '.venv-lowest/bin/pip install -e ".[test]" "aiohttp==$lowest"' in ci
        assert "AIOHTTP_NO_EXTENSIONS=1 .venv-test/bin/pytest" in ci
        for test_file in re.findall(r"tests/\S+\.py", block):
            assert test_file in ci, test_file

    def test_workflows(self) -> None:
        """CI files: valid YAML, and every svc-stub option they pass exists."""
        import yaml

        workflows = [b.text for b in blocks() if b.language == "yaml" and "run:" in b.text]
        assert len(workflows) >= 3
        helped = {
            name: subprocess.run(
                [sys.executable, "-m", "stub", *name.split()[1:], "--help"],
                capture_output=True, text=True, timeout=30, check=True,
            ).stdout
            for name in ("svc-stub", "svc-stub conformance", "svc-stub verify")
        }  # fmt: skip
        for text in workflows:
            yaml.safe_load(text)
            for command in re.findall(r"svc-stub(?: (conformance|verify))?([^\n]*)", text):
                words = " ".join(command[1].split())
                for option in re.findall(r"(--[a-z-]+)", words):
                    helper = "svc-stub" + (f" {command[0]}" if command[0] else "")
                    assert option in helped[helper], (helper, option)

    def test_the_synopsis(self) -> None:
        block = next(b.text for b in blocks() if b.page == "docs/reference/cli.md")
        for line in block.splitlines():
            words = line.split()
            sub = (
                words[1]
                if len(words) > 1
                and words[1] in ("record", "verify", "conformance", "check", "shared", "coverage")
                else ""
            )
            if not words or words[0] not in ("svc-stub", "python") or line.startswith("python"):
                continue
            helped = subprocess.run(
                [sys.executable, "-m", "stub", *([sub] if sub else []), "--help"],
                capture_output=True, text=True, timeout=30, check=True,
            ).stdout  # fmt: skip
            for option in re.findall(r"(--[a-z-]+)", line):
                assert option in helped, (sub, option)


class TestTheSite:
    def test_it_builds_strictly(self, tmp_path: Path) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
            cwd=ROOT,
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
        assert "--max-namespaces" in cli
        assert "--write-accepted" in cli
        client = (tmp_path / "site" / "reference" / "client" / "index.html").read_text()
        assert "wait_for_svc_events" in client  # from the client's docstrings
        api = (tmp_path / "site" / "reference" / "control-plane" / "index.html").read_text()
        assert "/_test/namespaces" in api  # from stub/openapi.json
        environment = (tmp_path / "site" / "reference" / "environment" / "index.html").read_text()
        assert "SVC_STUB_RUNTIME_KEY" in environment
        home = (tmp_path / "site" / "index.html").read_text()
        # the header links the repository (a newcomer looked for it)
        header = r'<a href="https://github.com/svc-stub/svc-stub"[^>]*class="md-source"'
        assert re.search(header, home)
        self._no_code_block_scrolls_sideways(tmp_path / "site")

    @staticmethod
    def _no_code_block_scrolls_sideways(site: Path) -> None:
        """At 1280 px, as a newcomer reads the site, no code block of the pages with the
        longest command lines is wider than the page (they wrap instead)."""
        from browsers import CHROMIUM, chromium

        if CHROMIUM is None:
            return  # CI installs Chromium; without one the build is still checked
        pages = ("getting-started", "guides/real-service", "guides/management", "guides/go")
        with chromium() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            for name in pages:
                page.goto((site / name / "index.html").as_uri())
                wider = page.evaluate(
                    "() => [...document.querySelectorAll('pre > code')]"
                    ".filter((c) => c.scrollWidth > c.clientWidth + 1).length"
                )
                assert wider == 0, f"{name}: {wider} code blocks scroll sideways"


def _package_listing(tree: str) -> Iterator[str]:
    """The paths the tree names under `stub/`: `  name` at the package's level, `    name`
    in the folder named last (deeper lines continue a description)."""
    lines = tree.split("\nstub/", 1)[1].splitlines()[1:]
    folder = "stub/"
    for line in lines:
        if not line.startswith(" "):
            return
        depth = len(line) - len(line.lstrip())
        name = line.split()[0]
        if depth == 2:
            folder = f"stub/{name}" if name.endswith("/") else "stub/"
            yield f"stub/{name}"
        elif depth == 4:
            yield folder + name
