"""The `svc-stub` command: parse options, load fixtures, serve until SIGINT or SIGTERM."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import resource
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from stub import __version__
from stub.app import create_app, load_fixtures
from stub.config import (
    DEFAULT_HOST,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_NAMESPACES,
    DEFAULT_MAX_RECORDED,
    DEFAULT_MAX_RECORDED_BYTES,
    DEFAULT_MAX_RECORDED_IN_NAMESPACES,
    DEFAULT_MAX_UPSTREAM_IN_FLIGHT_BYTES,
    DEFAULT_NAMESPACE_MAX_RECORDED,
    DEFAULT_PORT,
    IntRange,
    StubConfig,
    Upstream,
    is_loopback,
)
from stub.control.access import BadSetting, host_setting, origin_setting
from stub.http.listener import ListenError, serve
from stub.process import is_running, ready_line
from stub.rate_limit import is_rate
from stub.validation import FixtureError

F = TypeVar("F", bound=Callable[..., Any])


def _option(*declarations: str, **attributes: Any) -> Callable[[F], F]:
    """A click option that also reads SVC_STUB_<OPTION> (`--max-recorded`:
    SVC_STUB_MAX_RECORDED), as CI sets things, and names it in --help."""
    variable = "SVC_STUB_" + declarations[0].lstrip("-").upper().replace("-", "_")
    return click.option(*declarations, envvar=variable, show_envvar=True, **attributes)


class ConfigError(Exception):
    """A usage or configuration problem: exit 2 with one line on stderr."""


EXAMPLES = """\b
Examples:
  svc-stub                                   the default fixtures on 127.0.0.1:3901
  svc-stub --port 0                          any free port (the ready line names it)
  svc-stub --fixtures flags.yaml --watch     your fixtures, served anew when edited
  svc-stub --api-key project-api-key_ci --strict-keys --rate-limit 50/s
  svc-stub --upstream https://staging.example.com   faults in front of the real service
  svc-stub --allow-origin http://localhost:63315     an in-browser test runner drives /_test
  svc-stub record --upstream URL --runtime-key KEY --out staging.yaml
  svc-stub verify --upstream URL --runtime-key KEY --fixtures staging.yaml
  svc-stub conformance --adapter http://127.0.0.1:3902
  svc-stub coverage --url http://127.0.0.1:3901 --profile runtime --fail-under 80
"""


@click.command(
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=EXAMPLES
    + "\nEvery option also reads the environment variable shown (several --fixtures in "
    "SVC_STUB_FIXTURES: separated by ':'); the command line wins. The test-control plane "
    "(/_test/...) is described in the docs (docs/reference/control-plane.md) and served as "
    "OpenAPI at GET /_test/openapi.json.",
)
@_option(
    "--host",
    default=DEFAULT_HOST,
    show_default=True,
    help="Address to bind.",
)
@_option(
    "--port",
    type=IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port to bind; 0 picks a free one (read it from the ready line).",
)
@_option(
    "--fixtures",
    "fixture_paths",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Fixture file or directory; repeatable, a later file wins per key. "
    "Default: the set shipped with the package.",
)
@_option(
    "--watch",
    is_flag=True,
    help="Reload the --fixtures files when they change: a valid change is served at once, "
    "an invalid one is logged and the previous set stays served.",
)
@_option(
    "--api-key",
    "api_keys",
    multiple=True,
    help="Accept only this key on runtime and vendor routes; repeatable. "
    "Default: any non-empty key.",
)
@_option(
    "--strict-keys",
    is_flag=True,
    help="Refuse a key sent to the wrong plane, or a browser key outside its scope (401/403), "
    "instead of serving it with an X-Svc-Stub-Warning header.",
)
@_option(
    "--rate-limit",
    metavar="N/s",
    help="Requests a second each key may make on runtime and vendor routes; over it, 429 with "
    "Retry-After. Default: no limit.",
)
@_option(
    "--allow-non-loopback",
    is_flag=True,
    help="Permit a --host that is not a loopback address.",
)
@_option(
    "--control-token",
    help="Require 'Authorization: Bearer TOKEN' on /_test/*. "
    "Generated and printed when binding off loopback without one.",
)
@_option(
    "--allow-origin",
    "allow_origins",
    multiple=True,
    metavar="ORIGIN",
    help="Let pages on this origin (http://localhost:5173) drive /_test/*: an in-browser test "
    "runner's; repeatable. Any other page is refused (the runtime plane answers every origin).",
)
@_option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="Answer /_test/* for this Host too (a container's service name: svc-stub, or "
    "svc-stub:3901 for one port); repeatable. Default: IP addresses, localhost, *.localhost.",
)
@_option(
    "--max-recorded",
    type=IntRange(min=1),
    default=DEFAULT_MAX_RECORDED,
    show_default=True,
    help="Most entries kept per recorded list (events, svcEvents, targets, requests).",
)
@_option(
    "--max-namespaces",
    type=IntRange(min=1),
    default=DEFAULT_MAX_NAMESPACES,
    show_default=True,
    help="Named namespaces kept at once; beyond it the least recently used is evicted.",
)
@_option(
    "--namespace-max-recorded",
    type=IntRange(min=1),
    default=DEFAULT_NAMESPACE_MAX_RECORDED,
    show_default=True,
    help="Most entries kept per recorded list of each named namespace.",
)
@_option(
    "--max-recorded-in-namespaces",
    type=IntRange(min=1),
    default=DEFAULT_MAX_RECORDED_IN_NAMESPACES,
    show_default=True,
    help="Entries recorded by every named namespace together; beyond it the least recently "
    "used namespaces are evicted.",
)
@_option(
    "--max-recorded-bytes",
    type=IntRange(min=1),
    default=DEFAULT_MAX_RECORDED_BYTES,
    show_default=True,
    help="Request and answer bodies the journal keeps (the default namespace's, and every "
    "named namespace's together, one of them an eighth); beyond it the oldest requests are "
    "dropped (named namespaces: the least recently used evicted).",
)
@_option(
    "--max-body-bytes",
    type=IntRange(min=1),
    default=DEFAULT_MAX_BODY_BYTES,
    show_default=True,
    help="Largest request body accepted, after gzip decompression; larger is a 413.",
)
@_option(
    "--upstream",
    metavar="URL",
    help="Proxy mode: forward every runtime, vendor and management request to this service "
    "(https off loopback) and relay its answers, faults and recording on top.",
)
@_option(
    "--upstream-ca-bundle",
    type=click.Path(path_type=Path),
    help="PEM certificates to trust for the upstream's TLS, instead of the system's.",
)
@_option(
    "--max-upstream-in-flight-bytes",
    type=IntRange(min=1),
    default=DEFAULT_MAX_UPSTREAM_IN_FLIGHT_BYTES,
    show_default=True,
    help="Bytes of the upstream's answers held at once in proxy mode; beyond it, a 502.",
)
@_option(
    "--allow-insecure-upstream",
    is_flag=True,
    help="Permit a plain-http --upstream off loopback (a test service on your own network).",
)
@_option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
    default="info",
    show_default=True,
    help="'debug' adds one line per request (keys and tokens redacted).",
)
@_option(
    "--stop-with",
    metavar="PID",
    type=IntRange(min=1),
    help="Stop when process PID has ended (the test run that started the stub), however it "
    "ended: a run killed outright leaves no stub behind.",
)
@click.version_option(__version__, prog_name="svc-stub")
def command(
    host: str,
    port: int,
    fixture_paths: tuple[Path, ...],
    watch: bool,
    api_keys: tuple[str, ...],
    strict_keys: bool,
    rate_limit: str | None,
    allow_non_loopback: bool,
    control_token: str | None,
    allow_origins: tuple[str, ...],
    allow_hosts: tuple[str, ...],
    max_recorded: int,
    max_namespaces: int,
    namespace_max_recorded: int,
    max_recorded_in_namespaces: int,
    max_recorded_bytes: int,
    max_body_bytes: int,
    upstream: str | None,
    upstream_ca_bundle: Path | None,
    max_upstream_in_flight_bytes: int,
    allow_insecure_upstream: bool,
    log_level: str,
    stop_with: int | None,
) -> None:
    """A local stand-in for the control-point service's runtime and management planes and the
    legacy vendor routes.

    `svc-stub conformance --adapter URL` checks a client library on the wire instead (see
    `svc-stub conformance --help`); `svc-stub record` and `svc-stub verify` take the real
    service as the reference (`--help` on each)."""
    if not is_loopback(host) and not allow_non_loopback:
        raise ConfigError(f"--host {host} is not a loopback address; add --allow-non-loopback")
    if watch and not fixture_paths:
        raise ConfigError("--watch: add --fixtures FILE_OR_DIR (the shipped set never changes)")
    if any(not key for key in api_keys):
        raise ConfigError("--api-key: a key cannot be empty")
    if stop_with is not None and not is_running(stop_with):
        raise ConfigError(f"--stop-with {stop_with}: no such process (give the test run's PID)")
    generated_token = not is_loopback(host) and control_token is None
    config = StubConfig(
        host=host,
        port=port,
        fixture_paths=fixture_paths,
        watch=watch,
        api_keys=frozenset(api_keys),
        strict_keys=strict_keys,
        rate_limit=_rate(rate_limit),
        allow_non_loopback=allow_non_loopback,
        control_token=_new_token() if generated_token else control_token,
        allow_origins=_settings("--allow-origin", origin_setting, allow_origins),
        allow_hosts=_settings("--allow-host", host_setting, allow_hosts),
        max_recorded=max_recorded,
        max_namespaces=max_namespaces,
        namespace_max_recorded=namespace_max_recorded,
        max_recorded_in_namespaces=max_recorded_in_namespaces,
        max_recorded_bytes=max_recorded_bytes,
        max_body_bytes=max_body_bytes,
        upstream=_upstream(upstream, upstream_ca_bundle, allow_insecure_upstream),
        max_upstream_in_flight_bytes=max_upstream_in_flight_bytes,
        log_level=log_level.lower(),
    )
    try:
        fixtures = load_fixtures(config)
        app = create_app(config, fixtures)  # derives every answer: may refuse a value, too
    except FixtureError as exc:
        raise ConfigError(str(exc)) from None
    logging.basicConfig(level=config.log_level.upper(), format="svc-stub %(levelname)s %(message)s")
    _allow_many_connections()

    def ready(port: int) -> None:
        url = _url(config.host, port)
        # One write: a parent that reads the ready line and closes the pipe loses the rest
        # unread, and the stub never meets the closed pipe.
        said = [ready_line(url), f"svc-stub inspector: {url}/_test/ui"]
        if config.upstream is not None:
            said.append(f"svc-stub forwarding to: {config.upstream.shown}")
        if generated_token:
            said.append(f"svc-stub control token: {config.control_token}")
        try:
            sys.stdout.write("".join(f"{line}\n" for line in said))  # one write, unbuffered too
            sys.stdout.flush()
        except BrokenPipeError:  # the parent read its line and left: nothing more to say
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (the process's own, to its end)

    # An access log halves throughput, so it exists only at debug level.
    access_log = logging.getLogger("stub.access") if config.log_level == "debug" else None
    _collect_again()
    try:
        asyncio.run(
            serve(
                app,
                config.host,
                config.port,
                on_ready=ready,
                access_log=access_log,
                stop_with=stop_with,
            )
        )
    except ListenError as exc:
        raise ConfigError(str(exc)) from None


def _collect_again() -> None:
    """The entry point turned the garbage collector off for start-up (stub/entry.py): turn it
    back on, with what start-up built (it lives as long as the process) frozen out of every
    later collection. Called some other way (a test), the collector was never off."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def _upstream(raw: str | None, ca_bundle: Path | None, allow_insecure: bool) -> Upstream | None:
    """Checked before anything connects: a refused address is one line, exit 2."""
    if raw is None:
        if ca_bundle is not None or allow_insecure:
            raise ConfigError("--upstream-ca-bundle and --allow-insecure-upstream need --upstream")
        return None
    from stub.upstream.transport import UpstreamError, tls_context, upstream_of  # proxy mode

    try:
        upstream = upstream_of(raw, allow_insecure=allow_insecure, ca_bundle=ca_bundle)
        tls_context(upstream)
    except UpstreamError as exc:
        raise ConfigError(f"--upstream: {exc}") from None
    return upstream


def _settings(option: str, parse: Callable[[str], str], values: tuple[str, ...]) -> frozenset[str]:
    try:
        return frozenset(map(parse, values))
    except BadSetting as exc:
        raise ConfigError(f"{option}: {exc}") from None


def _new_token() -> str:
    import secrets  # only off loopback: not worth its import on every start

    return secrets.token_urlsafe(24)


def _rate(raw: str | None) -> float | None:
    """`50/s` or `50`: requests a second, above 0."""
    if raw is None:
        return None
    try:
        rate = float(raw.strip().removesuffix("/s"))
    except ValueError:
        rate = 0.0
    if not is_rate(rate):
        raise ConfigError(f"--rate-limit: expected requests a second like 50/s, got {raw!r}")
    return rate


def _allow_many_connections() -> None:
    """Raise the open-file limit to its ceiling: a thousand concurrent clients need the sockets."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}"


def main(argv: list[str] | None = None) -> None:
    """Entry point: configuration and usage errors are one line on stderr and exit code 2."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["conformance"]:  # its own command, imported only when asked for
        from stub.conformance.commands import main as conformance

        conformance(args[1:])
        return
    if args[:1] == ["shared"]:  # the run's one stub, for test runners in any language
        from stub.testing.shared import main as shared

        shared(args[1:])
        return
    if args[:1] == ["coverage"]:  # what a run's tests exercised, from a stub or a report
        from stub.control.commands import main as coverage

        coverage(args[1:])
        return
    if args[:1] == ["check"]:
        _check(args[1:])
        return
    if args[:1] in (["record"], ["verify"]):
        from stub.upstream.commands import main as against_the_service

        against_the_service(args[0], args[1:])
        return
    try:
        code = command.main(args=args, prog_name="svc-stub", standalone_mode=False)
    except click.ClickException as exc:
        _fail(exc.format_message())
    except ConfigError as exc:
        _fail(str(exc))
    sys.exit(code if isinstance(code, int) else 0)


CHECK_USAGE = (
    "usage: svc-stub check FILE_OR_DIR ...\n\n"
    "Checks fixture files as a start with --fixtures would, without starting a stub (for a\n"
    "pre-commit hook or a CI step): exit 0 with what they serve, or the start's one line on\n"
    "stderr and exit 2."
)


def _check(paths: list[str]) -> None:
    """`svc-stub check FILE ...`: the fixture files loaded and every answer derived, as at
    start-up, and nothing served."""
    if paths[:1] in (["-h"], ["--help"]):
        print(CHECK_USAGE)
        return
    if not paths:
        _fail("check: give the fixture files to check (svc-stub check flags.yaml)")
    config = StubConfig(fixture_paths=tuple(Path(path) for path in paths))
    try:
        fixtures = load_fixtures(config)
        create_app(config, fixtures)
    except FixtureError as exc:
        _fail(str(exc))
    served = [f"{len(fixtures.flags)} flag{'' if len(fixtures.flags) == 1 else 's'}"]
    if fixtures.management is not None:
        served.append("the management plane")
    if fixtures.keys is not None:
        served.append("key rules")
    print(f"svc-stub check: ok, {' and '.join(served)} from {' '.join(paths)}")


def _fail(message: str) -> None:
    print(f"svc-stub: error: {message}", file=sys.stderr)
    sys.exit(2)
