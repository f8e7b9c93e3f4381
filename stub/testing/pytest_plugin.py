"""pytest fixtures for users' suites: a stub in one fixture, faults in one line.

One stub process per session (per xdist worker: each worker is its own session) on an
ephemeral port, and a function-scoped `svc_stub` handle that resets it before every test.
Registered through the `pytest11` entry point, so installing svc-stub is all a suite needs.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from stub.client import AsyncStubClient, StubClient
from stub.testing.process import StubProcess

URL_VARIABLE = "SVC_STUB_URL"
TOKEN_VARIABLE = "SVC_STUB_CONTROL_TOKEN"
MARKER = "svc_stub"

FixtureSpec = str | Path | Mapping[str, Any]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("svc-stub")
    group.addoption(
        "--svc-stub-fixtures",
        action="append",
        default=None,
        metavar="PATH",
        help="fixture file or directory for the session's svc-stub (repeatable)",
    )
    parser.addini(
        "svc_stub_fixtures",
        type="paths",
        default=[],
        help="fixture files or directories for the session's svc-stub",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(fixtures=...): serve these fixtures (a path, a list of paths relative to the "
        "test file, or a fixture document) for this test only",
    )


@pytest.fixture(scope="session")
def svc_stub_url(pytestconfig: pytest.Config) -> Iterator[str]:
    """The session's stub: `SVC_STUB_URL` if set, else a process started for this session."""
    running = os.environ.get(URL_VARIABLE)
    if running:
        yield running.rstrip("/")
        return
    args: list[str] = []
    for path in _session_fixture_paths(pytestconfig):
        args += ["--fixtures", str(path)]
    with StubProcess.start(args) as process:  # stopped at session end, failures or not
        yield process.url


@pytest.fixture
def svc_stub(svc_stub_url: str, request: pytest.FixtureRequest) -> Iterator[StubClient]:
    """The control client (`.url` is the stub's address), reset before the test."""
    client = StubClient(svc_stub_url, control_token=os.environ.get(TOKEN_VARIABLE))
    client.reset()
    marker = request.node.get_closest_marker(MARKER)
    if marker is not None:
        _serve(client, marker.kwargs.get("fixtures"), request.path.parent)
    yield client
    if marker is not None:  # put the session's fixtures back for whoever shares the stub next
        client.reset()


try:
    import pytest_asyncio
except ImportError:  # the in-process fixture needs pytest-aiohttp (and so pytest-asyncio)
    pass
else:

    @pytest_asyncio.fixture
    async def svc_stub_in_process(
        aiohttp_server: Any, request: pytest.FixtureRequest
    ) -> AsyncIterator[AsyncStubClient]:
        """A stub inside the test's own event loop (pytest-aiohttp's server fixture), for
        aiohttp users; the async control client, `.url` included."""
        from stub.app import create_app
        from stub.config import StubConfig

        paths = tuple(_session_fixture_paths(request.config))
        server = await aiohttp_server(create_app(StubConfig(fixture_paths=paths)))
        client = AsyncStubClient(str(server.make_url("")))
        marker = request.node.get_closest_marker(MARKER)
        try:
            if marker is not None:
                for call in _fixture_calls(marker.kwargs.get("fixtures"), request.path.parent):
                    await client.set_fixtures(call[0], merge=call[1])
            yield client
        finally:
            await client.close()


def _session_fixture_paths(config: pytest.Config) -> list[Path]:
    given = config.getoption("--svc-stub-fixtures")
    if given:
        return [Path(p) for p in given]
    return list(config.getini("svc_stub_fixtures"))


def _serve(
    client: StubClient, spec: FixtureSpec | Sequence[FixtureSpec] | None, here: Path
) -> None:
    for document, merge in _fixture_calls(spec, here):
        client.set_fixtures(document, merge=merge)


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
