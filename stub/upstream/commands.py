"""`svc-stub record` and `svc-stub verify`: the real service as the reference, from the command
line. Keys come from options or SVC_STUB_* variables and are never printed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import click

from stub.config import IntRange, Upstream
from stub.fixtures import load_fixture_paths
from stub.keys import redacted
from stub.management.seed import DEFAULT_KEY, Principal
from stub.process import StubProcess, StubStartError
from stub.upstream.comparison import Accepted, accepted_key
from stub.upstream.probes import left_out_when_read_only
from stub.upstream.record import (
    PLACEHOLDERS,
    RECORDING_CONTEXT,
    Keys,
    fixture_text,
    recorded,
)
from stub.upstream.transport import (
    MAX_ANSWER_BYTES,
    Secrets,
    UpstreamError,
    session,
    upstream_of,
)
from stub.upstream.verify import Outcome, Side, run_probes, summary
from stub.validation import FixtureError

STUB_RUNTIME_KEY = "project-api-key_svc-stub-verify"
STUB_VENDOR_KEY = "phc_svc-stub-verify"
"""The keys verify gives the stub it starts (which then refuses any other, as the service does)."""
SHOWN_AS_IS = (*PLACEHOLDERS, DEFAULT_KEY)
"""Keys svc-stub itself makes up: shown and written as they are, being no secret."""


F = TypeVar("F", bound=Callable[..., Any])


def _option(*declarations: str, **attributes: Any) -> Callable[[F], F]:
    variable = "SVC_STUB_" + declarations[0].lstrip("-").upper().replace("-", "_")
    return click.option(*declarations, envvar=variable, show_envvar=True, **attributes)


def _upstream_options(command: F) -> F:
    for option in reversed(
        (
            _option("--upstream", required=True, metavar="URL", help="The service."),
            _option("--runtime-key", required=True, help="A server runtime key of the service."),
            _option("--org-key", help="An organisation key: adds the management plane."),
            _option(
                "--upstream-ca-bundle",
                type=click.Path(path_type=Path),
                help="PEM certificates to trust for the service's TLS.",
            ),
            _option(
                "--allow-insecure-upstream",
                is_flag=True,
                help="Permit plain http off loopback.",
            ),
            _option(
                "--max-answer-bytes",
                type=IntRange(min=1),
                metavar="N",
                default=MAX_ANSWER_BYTES,
                show_default=True,
                help="The largest answer read from the service (or the stub).",
            ),
        )
    ):
        command = option(command)
    return command


def _checked(raw: str, ca_bundle: Path | None, allow_insecure: bool) -> Upstream:
    return upstream_of(raw, allow_insecure=allow_insecure, ca_bundle=ca_bundle)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@_upstream_options
@click.option("--out", required=True, type=click.Path(path_type=Path), help="The file to write.")
@click.option("--flag", "flag_keys", multiple=True, help="Record only this flag (repeatable).")
@click.option(
    "--targeting-key",
    default=RECORDING_CONTEXT,
    show_default=True,
    help="The context the flags are evaluated for.",
)
@_option("--ci-read-key", help="Says the organisation has an org:ci-read key (never written).")
@_option("--vendor-key", help="A vendor project key (else the runtime key) for the legacy routes.")
def record(
    upstream: str,
    runtime_key: str,
    org_key: str | None,
    upstream_ca_bundle: Path | None,
    allow_insecure_upstream: bool,
    max_answer_bytes: int,
    out: Path,
    flag_keys: tuple[str, ...],
    targeting_key: str,
    ci_read_key: str | None,
    vendor_key: str | None,
) -> None:
    """Write a fixture file from the service: its flags as it answers them, and with
    --org-key its projects, environments and control points. Keys are never written."""
    base = _checked(upstream, upstream_ca_bundle, allow_insecure_upstream)
    keys = Keys(runtime_key, org_key, ci_read_key, vendor_key)
    text = asyncio.run(_record(base, keys, flag_keys, targeting_key, max_answer_bytes))
    _write(out, text)
    click.echo(f"recorded {out} from {base.shown}")


async def _record(
    base: Upstream, keys: Keys, flag_keys: tuple[str, ...], context: str, max_answer_bytes: int
) -> str:
    async with session(base) as client:
        recording = await recorded(
            client, base, keys, flag_keys, context, max_answer_bytes=max_answer_bytes
        )
    return fixture_text(recording, base, context)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@_upstream_options
@_option("--vendor-key", help="A vendor project key (else the runtime key) for the legacy routes.")
@_option("--ci-read-key", help="An org:ci-read key: adds its probes.")
@click.option("--stub", "stub_url", metavar="URL", help="A running svc-stub to compare.")
@click.option(
    "--fixtures",
    "fixture_paths",
    multiple=True,
    type=click.Path(path_type=Path, exists=True),
    help="Start a svc-stub from these files (recorded from this service) and compare it.",
)
@click.option("--stub-runtime-key", help="The runtime key the --stub takes (if it lists keys).")
@click.option("--stub-vendor-key", help="The vendor project key the --stub takes.")
@click.option(
    "--stub-org-key",
    help=(
        "The organisation key the stub takes (default: that of the management: section it "
        f"serves, else {DEFAULT_KEY})."
    ),
)
@click.option("--stub-ci-read-key", help="The org:ci-read key the stub takes.")
@click.option(
    "--allow-writes",
    is_flag=True,
    help=(
        "Also probe the routes that store what they are sent: a signal and a target (kept), "
        "empty and malformed batches, a scratch project (removed)."
    ),
)
@click.option(
    "--values/--shapes-only",
    default=None,
    help="Compare values too (default: when the stub serves a recording of this service).",
)
@click.option("--report", type=click.Path(path_type=Path), help="Write a JSON report here.")
@click.option(
    "--accept",
    "accept_path",
    type=click.Path(path_type=Path, exists=True),
    help="Differences accepted (from --write-accepted): they do not fail the run.",
)
@click.option(
    "--write-accepted",
    type=click.Path(path_type=Path),
    help="Write this run's differences as accepted, and exit 0.",
)
def verify(
    upstream: str,
    runtime_key: str,
    org_key: str | None,
    upstream_ca_bundle: Path | None,
    allow_insecure_upstream: bool,
    max_answer_bytes: int,
    vendor_key: str | None,
    ci_read_key: str | None,
    stub_url: str | None,
    fixture_paths: tuple[Path, ...],
    stub_runtime_key: str | None,
    stub_vendor_key: str | None,
    stub_org_key: str | None,
    stub_ci_read_key: str | None,
    allow_writes: bool,
    values: bool | None,
    report: Path | None,
    accept_path: Path | None,
    write_accepted: Path | None,
) -> None:
    """Send the probe set to the service and to svc-stub, and compare the answers. With
    neither --stub nor --fixtures, the service is recorded first and that is served."""
    if stub_url and fixture_paths:
        raise click.UsageError("give --stub or --fixtures, not both")
    base = _checked(upstream, upstream_ca_bundle, allow_insecure_upstream)
    given = (runtime_key, org_key, vendor_key, ci_read_key)
    secrets = Secrets(
        (*given, stub_runtime_key, stub_vendor_key, stub_org_key, stub_ci_read_key),
        keep=SHOWN_AS_IS,
    )
    theirs = {
        "runtime": runtime_key,
        "org": org_key,
        "vendor": vendor_key or runtime_key,
        "ci-read": ci_read_key,
    }
    accepted = _accepted(accept_path) if accept_path else frozenset()
    keys = Keys(runtime_key, org_key, ci_read_key, vendor_key)
    with _stub_side(stub_url, fixture_paths, base, keys, max_answer_bytes) as stub:
        management = _stub_management(stub, stub_org_key, stub_ci_read_key)
        stub_keys = {  # the user's keys go to the service only, never to a stub
            "runtime": stub_runtime_key or STUB_RUNTIME_KEY,
            "vendor": stub_vendor_key or STUB_VENDOR_KEY,
            "org": management.org,
            "ci-read": management.ci_read,
        }
        for line in _header(base, stub, management, allow_writes):
            click.echo(secrets.text(line))
        upstream_side = Side("upstream", base, _present(theirs), {}, secrets, max_answer_bytes)
        stub_side = Side(
            "stub", upstream_of(stub.url), _present(stub_keys), {}, secrets, max_answer_bytes
        )
        compare_values = stub.recording if values is None else values
        outcomes = asyncio.run(
            _verify(upstream_side, stub_side, allow_writes, compare_values, accepted)
        )
    for outcome in outcomes:
        click.echo(secrets.text(outcome.line()))
    click.echo(summary(outcomes))
    if report is not None:
        document = {"upstream": base.shown, "probes": [o.to_json() for o in outcomes]}
        _write(report, secrets.text(json.dumps(document, indent=2)) + "\n")
    if write_accepted is not None:
        _write_accepted(write_accepted, outcomes, secrets)
        return
    if any(outcome.result == "differs" for outcome in outcomes):
        sys.exit(1)


class StubUnderTest(NamedTuple):
    url: str
    served: tuple[Path, ...]
    """The fixture files it was started from (none: a running stub, `--stub`)."""
    recording: bool
    """Whether it serves a recording of this service (its values are then compared)."""
    own_recording: bool = False
    """Whether that recording is verify's own, made just now."""


class StubManagement(NamedTuple):
    """The organisation keys verify sends the stub, and where they come from, in words."""

    org: str
    ci_read: str | None
    said: str


def _stub_management(
    stub: StubUnderTest, org_key: str | None, ci_read_key: str | None
) -> StubManagement:
    """Keys the stub's management plane serves: as given, else those of the management:
    section it was started from, else the default organisation's (what it then serves)."""
    if org_key is not None:
        return StubManagement(org_key, ci_read_key, "given with --stub-org-key")
    if not stub.served:
        said = f"{DEFAULT_KEY}, the default organisation's (--stub-org-key to send another)"
        return StubManagement(DEFAULT_KEY, ci_read_key, said)
    named = ", ".join(path.name for path in stub.served)
    if stub.own_recording:
        named = "verify's own recording"
    try:
        seed = load_fixture_paths(stub.served).management
    except FixtureError as exc:
        raise click.UsageError(f"--fixtures: {exc}") from None
    if seed is None:
        said = f"{DEFAULT_KEY}, the default organisation's ({named}: no management: section)"
        return StubManagement(DEFAULT_KEY, ci_read_key, said)
    principals = next(iter(seed.orgs.values())).principals
    managing = _first(principals, ("org:management", "cli")) or DEFAULT_KEY
    shown = managing if managing in SHOWN_AS_IS else redacted(managing)  # it may be a real one
    said = f"{shown}, from the management: section of {named}"
    return StubManagement(managing, ci_read_key or _first(principals, ("org:ci-read",)), said)


def _first(principals: tuple[Principal, ...], scopes: tuple[str, ...]) -> str | None:
    return next((p.token for p in principals if p.scope in scopes), None)


def _header(
    base: Upstream, stub: StubUnderTest, management: StubManagement, writes: bool
) -> list[str]:
    """What the run compares, the keys the stub is sent, and what it writes to the service."""
    if stub.own_recording:
        what = "a svc-stub serving what verify recorded from it just now"
    elif stub.served:
        what = "a svc-stub started from " + ", ".join(str(path) for path in stub.served)
    else:
        what = f"the svc-stub at {stub.url}"
    left_out = ", ".join(left_out_when_read_only())
    written = (
        "one signal captured (capture/valid) and one target registered (register/target), "
        "which the service keeps; empty and malformed batches (capture/empty, capture/bad, "
        "vendor/batch, vendor/batch-no-slash), which a permissive service may keep; a scratch "
        "project, removed after"
        if writes
        else f"nothing (read-only; left out, as their routes store what they are sent, even an "
        f"empty or malformed batch: {left_out}; --allow-writes sends them)"
    )
    return [
        f"verify: {base.shown} against {what}",
        f"stub management key: {management.said}",
        f"writes to the service: {written}",
    ]


def _present(keys: dict[str, str | None]) -> dict[str, str]:
    return {role: key for role, key in keys.items() if key}


async def _verify(
    upstream: Side, stub: Side, writes: bool, values: bool, accepted: Accepted
) -> list[Outcome]:
    """The probes; SIGTERM (a CI job's timeout) or SIGINT cancel them, and the scratch
    project is still removed on the way out."""
    loop, running = asyncio.get_running_loop(), asyncio.current_task()
    assert running is not None
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, running.cancel)
    async with session(upstream.base) as client:
        return await run_probes(
            client, upstream, stub, writes=writes, values=values, accepted=accepted
        )


@contextlib.contextmanager
def _stub_side(
    url: str | None,
    fixture_paths: tuple[Path, ...],
    base: Upstream,
    keys: Keys,
    max_answer_bytes: int,
) -> Iterator[StubUnderTest]:
    """The stub compared: running, or started here from the files or a recording made now."""
    if url is not None:
        yield StubUnderTest(url, (), recording=False)
        return
    with tempfile.TemporaryDirectory() as scratch:
        own = not fixture_paths
        if own:
            recording = Path(scratch) / "recorded.yaml"
            text = asyncio.run(_record(base, keys, (), RECORDING_CONTEXT, max_answer_bytes))
            recording.write_text(text, encoding="utf-8")
            fixture_paths = (recording,)
        options = [arg for path in fixture_paths for arg in ("--fixtures", str(path))]
        options += ["--api-key", STUB_RUNTIME_KEY, "--api-key", STUB_VENDOR_KEY, "--strict-keys"]
        process = StubProcess.start(options, own_settings_only=True)
        try:
            yield StubUnderTest(process.url, fixture_paths, recording=True, own_recording=own)
        finally:
            process.stop()


def _accepted(path: Path) -> Accepted:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        return frozenset(
            (entry["probe"], entry["where"], entry["upstream"], entry["stub"])
            for entry in document["accepted"]
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise click.UsageError(
            f"--accept {path}: not a file written by --write-accepted ({exc})"
        ) from None


def _write_accepted(path: Path, outcomes: list[Outcome], secrets: Secrets) -> None:
    entries = [
        dict(
            zip(("probe", "where", "upstream", "stub"), accepted_key(o.probe.name, d), strict=True)
        )
        for o in outcomes
        if o.result in ("differs", "accepted")
        for d in o.differences
    ]
    _write(path, secrets.text(json.dumps({"accepted": entries}, indent=2)) + "\n")
    click.echo(f"wrote {len(entries)} accepted differences to {path}")


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UpstreamError(f"cannot write {path}: {exc.strerror}") from None


KEY_OPTIONS = ("--runtime-key", "--org-key", "--vendor-key", "--ci-read-key")


def main(name: str, argv: list[str]) -> None:
    """`svc-stub record|verify ARGS`: usage errors and an unreachable upstream are one line on
    stderr and exit 2 (never with a key in it, even one the service echoed); verify exits 1 on
    a difference not accepted, 130 when interrupted."""
    command = record if name == "record" else verify
    try:
        command.main(args=argv, prog_name=f"svc-stub {name}", standalone_mode=False)
    except click.ClickException as exc:
        _fail(name, exc.format_message(), argv)
    except (UpstreamError, StubStartError) as exc:
        _fail(name, str(exc), argv)
    except (asyncio.CancelledError, KeyboardInterrupt):
        print(f"svc-stub {name}: interrupted (scratch data removed)", file=sys.stderr)
        sys.exit(130)


def _fail(name: str, message: str, argv: list[str]) -> None:
    shown = Secrets(_keys_given(argv), keep=SHOWN_AS_IS).text(message)
    print(f"svc-stub {name}: error: {shown}", file=sys.stderr)
    sys.exit(2)


def _keys_given(argv: list[str]) -> list[str]:
    """Every key the command was given, on its command line or in the environment."""
    given = [os.environ.get("SVC_STUB_" + o[2:].upper().replace("-", "_"), "") for o in KEY_OPTIONS]
    for index, word in enumerate(argv):
        option, equals, value = word.partition("=")
        if option in KEY_OPTIONS:
            given.append(value if equals else (argv[index + 1] if index + 1 < len(argv) else ""))
    return [key for key in given if key]
