"""`svc-stub conformance`: run the kit's cases against a client library's adapter."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from stub.config import IntRange
from stub.conformance.cases import AREAS, Case, CaseError, load_cases
from stub.conformance.contracts import (
    Unsupported,
    contracts_summary,
    load_contracts,
    report_document,
    run_contracts,
)
from stub.conformance.protocol import Adapter, AdapterError
from stub.conformance.reporting import junit_xml, summary
from stub.conformance.runner import Run, run_cases
from stub.conformance.stub_driver import has_health, has_namespaces
from stub.process import StubProcess, StubStartError


@click.command(
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="The adapter protocol and the cases: docs/guides/client-libraries.md.",
)
@click.option(
    "--adapter", "adapter_url", metavar="URL", help="The adapter (required, but for --list)."
)
@click.option(
    "--stub",
    "stub_url",
    metavar="URL",
    help="A running stub to use; default: start one on a free port (stopped after).",
)
@click.option("--case", "names", multiple=True, metavar="PATTERN", help="Only these cases (glob).")
@click.option("--area", "areas", multiple=True, type=click.Choice(AREAS), help="Only this area.")
@click.option("--parallel", default=4, show_default=True, type=IntRange(1, 64))
@click.option("--strict", is_flag=True, help="What the published clients do counts too.")
@click.option("--junit", "junit_path", type=click.Path(path_type=Path), help="Write JUnit XML.")
@click.option("--list", "list_only", is_flag=True, help="List the cases and exit.")
@click.option(
    "--adapter-timeout",
    "timeout_s",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds the adapter may take over one call before the case fails.",
)
@click.option(
    "--contracts",
    "contracts_dir",
    type=click.Path(path_type=Path),
    help="Run this directory of contract fixtures instead of the kit's cases.",
)
@click.option(
    "--contracts-report",
    "report_path",
    type=click.Path(path_type=Path),
    help="With --contracts: write each fixture's id, status and message as JSON.",
)
def command(
    adapter_url: str | None,
    stub_url: str | None,
    names: tuple[str, ...],
    areas: tuple[str, ...],
    parallel: int,
    strict: bool,
    junit_path: Path | None,
    list_only: bool,
    timeout_s: float,
    contracts_dir: Path | None,
    report_path: Path | None,
) -> None:
    """Check a client library on the wire, through its adapter, against the stub."""
    if contracts_dir is not None:
        kit_only = {"--case": names, "--area": areas, "--strict": strict, "--junit": junit_path,
                    "--list": list_only}  # fmt: skip
        given = [option for option, value in kit_only.items() if value]
        if given:
            raise click.UsageError(
                f"--contracts runs the fixtures alone: {given[0]} does not apply"
            )
        if adapter_url is None:
            raise click.UsageError("Missing option '--adapter'.")
        sys.exit(_contracts(adapter_url, stub_url, contracts_dir, parallel, report_path, timeout_s))
    if report_path is not None:
        raise click.UsageError("--contracts-report needs --contracts")
    cases = load_cases(names, areas)
    if not cases:
        raise click.UsageError("--case/--area selected no case (svc-stub conformance --list)")
    if list_only:
        for case in cases:
            click.echo(f"{case.id} ({case.plane}): {case.description}")
        return
    if adapter_url is None:
        raise click.UsageError("Missing option '--adapter'.")
    adapter = Adapter(adapter_url, timeout_s)
    info = adapter.info()
    cases = [case for case in cases if case.plane == info.plane]  # the routes its client calls
    if not cases:
        raise click.UsageError(
            f"no selected case is for the {info.plane} plane the adapter declares"
        )
    click.echo(f"conformance: {len(cases)} cases against {info.name} ({info.language})")
    with _stub(stub_url) as url:
        run = Run(url, adapter, info, strict, has_namespaces(url))
        failed = _run(run, cases, parallel, junit_path)
    sys.exit(1 if failed else 0)


def _run(run: Run, cases: list[Case], parallel: int, junit_path: Path | None) -> bool:
    results = run_cases(run, cases, parallel, lambda result: click.echo(result.line()))
    click.echo(summary(results))
    if junit_path is not None:
        junit_path.write_bytes(junit_xml(results, run.info.name))
    return any(result.failed for result in results)


def _contracts(
    adapter_url: str,
    stub_url: str | None,
    directory: Path,
    parallel: int,
    report: Path | None,
    timeout_s: float,
) -> int:
    contracts = load_contracts(directory)
    adapter = Adapter(adapter_url, timeout_s)
    info = adapter.info()
    if info.plane != "runtime":
        raise click.UsageError(
            f"the contract fixtures are for the service's runtime clients; the adapter "
            f"declares the {info.plane} plane"
        )
    fixtures = len({contract.fixture_id for contract in contracts})
    click.echo(
        f"contracts: {fixtures} fixtures ({len(contracts)} cases) from {directory} "
        f"against {info.name}"
    )
    with _stub(stub_url) as url:
        run = Run(url, adapter, info, namespaces=has_namespaces(url))
        verdicts = run_contracts(run, contracts, parallel, lambda one: click.echo(one.line()))
    click.echo(contracts_summary(verdicts))
    if report is not None:
        document = report_document(verdicts, info.language)
        report.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 1 if any(one.failed for one in verdicts) else 0


@contextmanager
def _stub(url: str | None) -> Iterator[str]:
    """The stub to run against: the one given (which must answer), or one started for it."""
    if url is not None:
        url = url.rstrip("/")
        if not has_health(url):
            raise AdapterError(f"--stub {url}: no svc-stub answers there")
        yield url
        return
    with StubProcess.start() as stub:
        yield stub.url


def main(argv: list[str]) -> None:
    """Usage errors and an unreachable adapter are one line on stderr and exit code 2."""
    try:
        command.main(args=argv, prog_name="svc-stub conformance", standalone_mode=False)
    except click.ClickException as exc:
        _fail(exc.format_message())
    except (AdapterError, CaseError, StubStartError, Unsupported) as exc:
        _fail(str(exc))


def _fail(message: str) -> None:
    print(f"svc-stub conformance: error: {message}", file=sys.stderr)
    sys.exit(2)
