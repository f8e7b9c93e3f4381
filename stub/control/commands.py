"""`svc-stub coverage`: what a run's tests exercised, read from a running stub or a saved
report, as a table in the terminal with the gaps in words; a gate for CI with `--fail-under`
or `--require`."""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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


def _message(raw: bytes) -> str:
    try:
        said = json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")[:200]
    return str(said.get("message", said)) if isinstance(said, dict) else str(said)


def rendered(report: dict[str, Any]) -> str:
    """The cells as a table, then each profile's tally and its gaps."""
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
