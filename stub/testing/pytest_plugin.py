"""pytest fixtures for users' suites: a stub in one fixture, faults in one line.

One stub process per test run on an ephemeral port (shared by every pytest-xdist worker), or
the one at `SVC_STUB_URL`; and a function-scoped `svc_stub` control client in a namespace of
the test's own, so tests never see each other's faults, fixtures or recordings, however many
run at once. Loaded by the `pytest11` entry point, svc_stub_pytest (which also declares the
options and the marker): installing svc-stub is all a suite needs.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

import svc_stub_pytest
from stub.client import AsyncStubClient, StubClient, StubError
from stub.packaged import install_source
from stub.process import StubProcess
from stub.testing import shared
from svc_stub_pytest import FIXTURES_INI, JOURNAL_OPTION, MARKER, NAMESPACES_INI

URL_VARIABLE = "SVC_STUB_URL"
TOKEN_VARIABLE = "SVC_STUB_CONTROL_TOKEN"
_RUN_OWNER = "svc_stub_run_owner"
"""What the xdist controller tells each worker: the PID the run's shared stub lives by."""
_SHARING = pytest.StashKey[bool]()
_RUN_STUB = "svc_stub_url"
"""What each xdist worker tells the controller when it leaves: the run's stub, for coverage."""
_COVERAGE_FROM = pytest.StashKey[str]()
"""The run's stub, where the terminal summary reads the run's coverage."""
_COVERAGE = pytest.StashKey[dict[str, Any] | None]()
"""The run's coverage, read before a stub of this process's own stopped."""
_SNAPSHOT = pytest.StashKey[Callable[[], str]]()
"""How to take a test's inspector page, should it fail: set by the fixture that gave it a
stub."""

FixtureSpec = str | Path | Mapping[str, Any]


def pytest_addoption(pluginmanager: pytest.PytestPluginManager) -> None:
    """Loaded by name (`-p stub.testing.pytest_plugin`, or a conftest's `pytest_plugins`)
    rather than by the entry point: bring the entry point's options and marker along."""
    if not pluginmanager.is_registered(svc_stub_pytest):
        pluginmanager.register(svc_stub_pytest, "svc_stub")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist's controller, once per worker: whose run the workers' one stub is
    (`svc-stub shared`). Without namespaces every test resets the whole stub, so each worker
    keeps its own."""
    if node.config.getini(NAMESPACES_INI):
        node.config.stash[_SHARING] = True
        node.workerinput[_RUN_OWNER] = os.getpid()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The controller, after the last worker left: stop the run's stub now (it would stop
    with this process anyway)."""
    if config.stash.get(_SHARING, False) and not os.environ.get(URL_VARIABLE):
        shared.stop_shared_stub(os.getpid(), _stub_options(config))


@pytest.fixture(scope="session")
def svc_stub_url(pytestconfig: pytest.Config) -> Iterator[str]:
    """The session's stub: `SVC_STUB_URL` if set, else the run's (`svc-stub shared`: started
    by the first xdist worker to ask), else a process started for this session."""
    running = os.environ.get(URL_VARIABLE)
    if running:
        url = _answering(running.rstrip("/"))
        pytestconfig.stash[_COVERAGE_FROM] = url
        yield url
        return
    options = _stub_options(pytestconfig)
    owner = getattr(pytestconfig, "workerinput", {}).get(_RUN_OWNER)
    if owner is not None:  # an xdist worker: the run's stub, whoever started it
        url = shared.shared_stub_url(owner, options)
        pytestconfig.workeroutput[_RUN_STUB] = url  # type: ignore[attr-defined]
        yield url
        return
    # stopped at session end, failures or not; and with this process, however it ends
    with StubProcess.start([*options, "--stop-with", str(os.getpid())]) as process:
        yield process.url
        pytestconfig.stash[_COVERAGE] = _run_coverage(process.url)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """pytest-xdist's controller, as each worker leaves: where the run's stub is."""
    url = getattr(node, "workeroutput", {}).get(_RUN_STUB)
    if url is not None:
        node.config.stash[_COVERAGE_FROM] = url


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """What the run's tests exercised: the stub's summary, a line a profile they met any of
    with its first gaps, and the fixture flags never read (`svc-stub coverage` says it all,
    and gates CI)."""
    report = config.stash.get(_COVERAGE, None)
    if report is None and _COVERAGE_FROM in config.stash:
        report = _run_coverage(config.stash[_COVERAGE_FROM])
    if not report:
        return
    terminalreporter.write_sep("-", "svc-stub coverage")
    for line in report.get("summary", ()):  # the stub's words, as every helper prints them
        terminalreporter.write_line(line)
    directory = config.getoption(JOURNAL_OPTION)
    if directory:  # beside the failed tests' journals
        written = Path(config.invocation_params.dir, directory, "coverage.json")
        try:
            written.parent.mkdir(parents=True, exist_ok=True)
            written.write_text(json.dumps(report, indent=2), encoding="utf-8")
        except OSError as exc:
            terminalreporter.write_line(f"the run's coverage not written: {exc}")
        else:
            terminalreporter.write_line(f"the run's coverage in full: {written}")


def _run_coverage(url: str) -> dict[str, Any] | None:
    try:
        return StubClient(url, control_token=os.environ.get(TOKEN_VARIABLE)).coverage("run")
    except (OSError, StubError):  # an older stub, or one gone: no summary rather than a failure
        return None


def _stub_options(config: pytest.Config) -> list[str]:
    options: list[str] = []
    for path in _session_fixture_paths(config):
        options += ["--fixtures", str(path)]
    return options


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed test that used a stub leaves its inspector page in `--svc-stub-journal DIR`,
    taken before its namespace is deleted, and the report names the file."""
    report = yield
    directory = item.config.getoption(JOURNAL_OPTION)
    take = item.stash.get(_SNAPSHOT, None)
    if report.failed and report.when != "teardown" and directory and take is not None:
        where = Path(item.config.invocation_params.dir, directory)
        report.sections.append(("svc-stub journal", _kept_journal(take, where, item.nodeid)))
    return report


def _kept_journal(take: Callable[[], str], directory: Path, test_id: str) -> str:
    """Where the page was written, or in one line why it was not."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", test_id).strip("_")[:120] or "test"
    unique = hashlib.sha256(test_id.encode()).hexdigest()[:8]  # `[a b]`, `[a/b]`: one readable
    path = directory / f"{readable}-{unique}.html"
    try:
        page = take()
        directory.mkdir(parents=True, exist_ok=True)
        path.write_text(page, encoding="utf-8")
    except Exception as exc:  # the report says so in a line; the run goes on
        return f"not written: {type(exc).__name__}: {exc}"
    return f"the stub's journal of this test: {path.resolve()} (open it in a browser)"


def _answering(url: str) -> str:
    """The stub at `SVC_STUB_URL`, or the session stops with one line that says what to do."""
    try:
        answers = StubClient(url, control_token=os.environ.get(TOKEN_VARIABLE)).health()
        problem = "" if answers else "its /health does not say ok"
    except (OSError, ValueError, StubError) as exc:
        problem = str(getattr(exc, "reason", None) or exc).splitlines()[0]
    if problem:
        pytest.exit(
            f"svc-stub: {URL_VARIABLE}={url} does not answer as svc-stub ({problem}); start "
            f"one there (svc-stub --port PORT) or unset {URL_VARIABLE} to have one started",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )
    return url


@pytest.fixture
def svc_stub(svc_stub_url: str, request: pytest.FixtureRequest) -> Iterator[StubClient]:
    """The control client in a namespace of this test's own: `.url` is the base URL to give
    a client library (`<stub>/ns/<namespace>`), and every call is scoped to it."""
    stub = StubClient(svc_stub_url, control_token=os.environ.get(TOKEN_VARIABLE))
    marker = request.node.get_closest_marker(MARKER)
    options = marker.kwargs if marker is not None else {}
    if marker is not None and not {"fixtures", "keys"} & set(options):
        pytest.fail(f"@pytest.mark.{MARKER} needs fixtures=... or keys=...", pytrace=False)
    if not request.config.getini(NAMESPACES_INI):
        request.node.stash[_SNAPSHOT] = stub.snapshot
        yield from _reset_whole_stub(stub, options, request.path.parent)
        return
    # the test's id within its file (`TestCheckout::test_retries[503]`), as JUnit's Class#method
    client = stub.create_namespace(test=request.node.nodeid.split("::", 1)[-1], keys=_keys(options))
    request.node.stash[_SNAPSHOT] = client.snapshot
    try:
        if "fixtures" in options:
            _serve(client, options["fixtures"], request.path.parent)
        yield client
    finally:
        _delete_quietly(client)


def _reset_whole_stub(
    stub: StubClient, options: Mapping[str, Any], here: Path
) -> Iterator[StubClient]:
    """The way before namespaces (`svc_stub_namespaces = false`): one state, reset per test."""
    if "keys" in options:
        pytest.fail(f"@pytest.mark.{MARKER}(keys=...) needs namespaces", pytrace=False)
    stub.reset()
    if "fixtures" in options:
        _serve(stub, options["fixtures"], here)
    yield stub
    if "fixtures" in options:  # put the session's fixtures back for whoever uses it next
        stub.reset()


def _keys(options: Mapping[str, Any]) -> list[str]:
    keys = options.get("keys", [])
    if isinstance(keys, str) or not all(isinstance(key, str) for key in keys):
        pytest.fail(f"@pytest.mark.{MARKER}(keys=...) takes a list of strings", pytrace=False)
    return list(keys)


def _delete_quietly(client: StubClient) -> None:
    try:
        client.delete_namespace()
    except StubError as exc:
        if exc.status != 404:  # 404: the test deleted it itself
            raise


try:
    import pytest_asyncio
except ImportError:  # the in-process fixture needs pytest-aiohttp (and so pytest-asyncio)

    @pytest.fixture(name="svc_stub_in_process")
    def _svc_stub_in_process_unavailable() -> None:
        """Stands in for the real one, to say what to install."""
        pytest.fail(
            f"svc_stub_in_process needs pytest-aiohttp: pip install "
            f"'{install_source()}[in-process]' (or pytest-aiohttp)",
            pytrace=False,
        )

else:

    @pytest_asyncio.fixture
    async def svc_stub_in_process(request: pytest.FixtureRequest) -> AsyncIterator[AsyncStubClient]:
        """A stub inside the test's own event loop (pytest-aiohttp's test server, serving as
        `svc-stub` does), for aiohttp users; the async control client, `.url` included."""
        from stub.app import create_app
        from stub.config import StubConfig
        from stub.testing.in_process import StubTestServer

        paths = tuple(_session_fixture_paths(request.config))
        server = StubTestServer(create_app(StubConfig(fixture_paths=paths)))
        await server.start_server()
        client = AsyncStubClient(str(server.make_url("")))
        request.node.stash[_SNAPSHOT] = functools.partial(_in_process_page, server.app, client.url)
        marker = request.node.get_closest_marker(MARKER)
        try:
            if marker is not None and "fixtures" in marker.kwargs:  # keys: it is all its own
                for call in _fixture_calls(marker.kwargs["fixtures"], request.path.parent):
                    try:
                        await client.set_fixtures(call[0], merge=call[1])
                    except StubError as exc:
                        raise _refused_marker(exc) from None
            yield client
        finally:
            await client.close()
            await server.close()


def _in_process_page(app: Any, url: str) -> str:
    """Read straight from the app: its event loop is not running between phases."""
    from stub.inspector.routes import snapshot_page
    from stub.namespaces import DEFAULT, NAMESPACES

    namespaces = app[NAMESPACES]
    return snapshot_page(namespaces, namespaces.default, DEFAULT, url)


def _session_fixture_paths(config: pytest.Config) -> list[Path]:
    given = config.getoption("--svc-stub-fixtures")
    if given:
        return [Path(p) for p in given]
    return list(config.getini(FIXTURES_INI))


def _serve(
    client: StubClient, spec: FixtureSpec | Sequence[FixtureSpec] | None, here: Path
) -> None:
    for document, merge in _fixture_calls(spec, here):
        try:
            client.set_fixtures(document, merge=merge)
        except StubError as exc:
            raise _refused_marker(exc) from None


def _refused_marker(refused: StubError) -> BaseException:
    """The marker's fixtures refused: one line, the file and what is wrong in it."""
    message = f"@pytest.mark.{MARKER}(fixtures=...): {refused.message}"
    return pytest.fail.Exception(message, pytrace=False)


def _fixture_calls(
    spec: FixtureSpec | Sequence[FixtureSpec] | None, here: Path
) -> list[tuple[Mapping[str, Any] | Path, bool]]:
    """The first document replaces the served fixtures; later ones overlay it, key by key."""
    if spec is None:
        pytest.fail(
            f"@pytest.mark.{MARKER} needs fixtures=<path, paths or document>", pytrace=False
        )
    specs = [spec] if isinstance(spec, str | Path | Mapping) else list(spec)
    documents: list[Mapping[str, Any] | Path] = []
    for item in specs:
        if isinstance(item, Mapping):
            documents.append(item)
        else:
            path = Path(item) if Path(item).is_absolute() else here / item
            documents.extend(sorted(_fixture_files(path)))
    return [(document, index > 0) for index, document in enumerate(documents)]


def _fixture_files(path: Path) -> list[Path]:
    if path.is_dir():
        return [p for p in path.iterdir() if p.suffix in (".yaml", ".yml", ".json")]
    if not path.is_file():
        pytest.fail(f"@pytest.mark.{MARKER}: no fixture file at {path}", pytrace=False)
    return [path]
