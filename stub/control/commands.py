"""`svc-stub coverage`: what a run's tests exercised, read from a running stub or a saved
report, as a table in the terminal with the gaps in words; a gate for CI with `--fail-under`
or `--require`."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stub.coverage import Expected, Profile, profile_report

EXAMPLES = """\
examples:
  svc-stub coverage --url http://127.0.0.1:3901 --scope run
  svc-stub coverage --report coverage.json --profile runtime --fail-under 80
  svc-stub coverage --url http://127.0.0.1:3901 --namespace t-42 --require
"""


def parser() -> argparse.ArgumentParser:
    parsing = argparse.ArgumentParser(
        prog="svc-stub coverage",
        description="What a run's tests exercised: each route against each outcome it was "
        "served, and the gaps of each profile, from a running stub or a saved report "
        "(GET /_test/coverage, as JSON).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = parsing.add_mutually_exclusive_group(required=True)
    source.add_argument("--url", help="a running stub")
    source.add_argument("--report", type=Path, help="a saved GET /_test/coverage answer")
    parsing.add_argument("--scope", choices=("namespace", "run"), default="run")
    parsing.add_argument("--namespace", help="with --url: this namespace's (--scope namespace)")
    parsing.add_argument("--profile", help="one profile (default: every one the stub has)")
    parsing.add_argument(
        "--profiles",
        type=Path,
        metavar="FILE",
        help="your own profiles, in YAML (profiles: NAME: {description, expect: [{route, "
        "outcomes, says}]}), held against the same cells",
    )
    parsing.add_argument("--control-token", help="the stub's --control-token, if it has one")
    gate = parsing.add_mutually_exclusive_group()
    gate.add_argument(
        "--fail-under",
        type=float,
        metavar="PERCENT",
        help="exit 1 when a profile's cells met are under PERCENT of its cells",
    )
    gate.add_argument("--require", action="store_true", help="exit 1 on any gap")
    return parsing


def main(args: Sequence[str]) -> None:
    asked = parser().parse_args(list(args))
    try:
        report = _fetched(asked) if asked.url else _read(asked.report)
        if asked.profiles is not None:
            report["profiles"].update(_own(report["cells"], asked.profiles))
    except CoverageError as exc:
        print(f"svc-stub: error: coverage: {exc}", file=sys.stderr)
        sys.exit(2)
    print(rendered(report))
    failing = failures(report, asked.fail_under, asked.require)
    for line in failing:
        print(line, file=sys.stderr)
    sys.exit(1 if failing else 0)


class CoverageError(Exception):
    """One line: what was asked, and what to do."""


def _fetched(asked: argparse.Namespace) -> dict[str, Any]:
    base = asked.url.rstrip("/")
    if asked.namespace:
        base += "/ns/" + urllib.parse.quote(asked.namespace, safe="")
    scope = "namespace" if asked.namespace else asked.scope
    query = {"scope": scope, **({"profile": asked.profile} if asked.profile else {})}
    request = urllib.request.Request(f"{base}/_test/coverage?{urllib.parse.urlencode(query)}")
    if asked.control_token:
        request.add_header("Authorization", f"Bearer {asked.control_token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return _report(answer.read(), asked.url)
    except urllib.error.HTTPError as refused:
        with refused:
            said = _message(refused.read())
        raise CoverageError(f"{asked.url} refused: {refused.code} {said}") from None
    except OSError as exc:
        reason = getattr(exc, "reason", exc)
        raise CoverageError(
            f"{asked.url} does not answer ({reason}); start one there or give --report FILE"
        ) from None


def _read(path: Path) -> dict[str, Any]:
    try:
        return _report(path.read_bytes(), str(path))
    except OSError as exc:
        raise CoverageError(f"--report {path}: {exc.strerror or exc}") from None


def _report(raw: bytes, where: str) -> dict[str, Any]:
    try:
        report = json.loads(raw)
    except ValueError:
        report = None
    if not isinstance(report, dict) or not {"cells", "profiles"} <= set(report):
        raise CoverageError(f"{where}: not a GET /_test/coverage answer (cells, profiles)")
    return report


def _own(cells: list[dict[str, Any]], path: Path) -> dict[str, Any]:
    """Each profile of `path`, held against the report's cells."""
    import yaml  # only for a file of one's own profiles

    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CoverageError(f"--profiles {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise CoverageError(f"--profiles {path}: not YAML ({exc})") from None
    met = {(cell["route"], cell["outcome"]) for cell in cells}
    return {profile.name: profile_report(met, profile) for profile in _profiles(document, path)}


def _profiles(document: object, path: Path) -> list[Profile]:
    def refused(where: str, what: str) -> CoverageError:
        return CoverageError(f"--profiles {path}: {where}: {what}")

    if not isinstance(document, dict) or not isinstance(document.get("profiles"), dict):
        raise refused("profiles", "expected a mapping of profile names")
    found = []
    for name, body in document["profiles"].items():
        where = f"profiles.{name}"
        if not isinstance(body, dict) or not isinstance(body.get("expect"), list):
            raise refused(f"{where}.expect", "expected a list of {route, outcomes, says}")
        cells = []
        for index, cell in enumerate(body["expect"]):
            at = f"{where}.expect[{index}]"
            route, outcomes = (
                (cell.get("route"), cell.get("outcomes"))
                if isinstance(cell, dict)
                else (None, None)
            )
            if not isinstance(route, str):
                raise refused(f"{at}.route", "expected a route's name (evaluate, projects)")
            if (
                not isinstance(outcomes, list)
                or not outcomes
                or not all(isinstance(o, str) for o in outcomes)
            ):
                raise refused(f"{at}.outcomes", "expected a list of outcomes (ok, 401, fault 429)")
            says = cell.get("says") or f"{route} never met {' or '.join(outcomes)}"
            cells.append(Expected(route, frozenset(outcomes), str(says)))
        found.append(Profile(str(name), str(body.get("description", "")), tuple(cells)))
    return found


def _message(raw: bytes) -> str:
    try:
        said = json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")[:200]
    return str(said.get("message", said)) if isinstance(said, dict) else str(said)


def rendered(report: dict[str, Any]) -> str:
    """The cells as a table, then each profile's tally and its gaps, then the fixture flags
    never read (every one named: the summary names the first few)."""
    lines = [f"coverage ({report.get('scope', 'run')}):"]
    cells = report["cells"]
    if cells:
        width = max(len(c["route"]) for c in cells)
        lines += [f"  {c['route']:<{width}}  {c['outcome']:<20} {c['count']:>6}" for c in cells]
    else:
        lines.append("  (no request was recorded)")
    for name, profile in report["profiles"].items():
        lines.append(f"{name}: {profile['met']} of {profile['of']} cells met")
        lines += [f"  - {gap['says']}" for gap in profile["gaps"]]
    flags = report.get("flags")  # optional in a saved report: cells and profiles suffice
    if flags and flags["of"]:
        never = flags["neverRead"]
        lines.append(f"fixture flags: {flags['of'] - len(never)} of {flags['of']} read")
        if never:
            named = textwrap.fill(
                ", ".join(never), 100, initial_indent="  never read: ", subsequent_indent="    "
            )
            lines += named.splitlines()
    return "\n".join(lines)


def failures(report: dict[str, Any], fail_under: float | None, require: bool) -> list[str]:
    """Why the gate fails, a line each (none: it passes)."""
    failing = []
    for name, profile in report["profiles"].items():
        met, of = profile["met"], profile["of"]
        share = 100.0 * met / of if of else 100.0
        if fail_under is not None and share < fail_under:
            failing.append(
                f"svc-stub coverage: {name} is {share:.0f}% ({met} of {of}), "
                f"under --fail-under {fail_under:g}"
            )
        if require and profile["gaps"]:
            failing.append(f"svc-stub coverage: {name} has {len(profile['gaps'])} gaps")
    return failing
