"""Shared fixtures: an in-process app for route tests and a spawned stub for real clients."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from aiohttp.web import Application
from fireweave import FireweaveClient, FireweaveRemoteAdapter, FireweaveRuntime

from stub import StubConfig, create_app
from stub.process import StubProcess
from stub.testing.in_process import StubTestServer

AiohttpClient = Callable[[Application], Awaitable[TestClient[Any, Any]]]
AUTH = {"Authorization": "Bearer test-key"}
INNER_PYTEST = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")
"""Options for a pytest run inside a test, a user's suite as they have it: no cache left in
the project, and not this suite's Hypothesis plugin, which a user's suite lacks and which
costs each run, and each of its xdist workers, most of a second to import."""


@pytest.fixture
def aiohttp_client(aiohttp_client: AiohttpClient) -> AiohttpClient:
    """pytest-aiohttp's, an app served by `StubTestServer`, so every in-process test meets
    the direct lane where a client of `svc-stub` would."""

    async def served(app: Application, **kwargs: Any) -> TestClient[Any, Any]:
        return await aiohttp_client(StubTestServer(app), **kwargs)  # type: ignore[arg-type]

    return served


@pytest.fixture
async def client(aiohttp_client: AiohttpClient) -> TestClient[Any, Any]:
    """The stub in process, default fixtures and settings."""
    return await aiohttp_client(create_app(StubConfig()))


HANG_GUARD_S = 60
"""How long a spawned stub's answer is awaited: a guard against a hang, not a speed budget (a
stub draining a gzip bomb on a busy 2-core machine takes seconds to answer the next)."""


@dataclass
class SpawnedStub:
    process: subprocess.Popen[str]
    url: str

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=HANG_GUARD_S) as response:
            return json.load(response)

    def post(self, path: str, body: object = None) -> Any:
        data = json.dumps(body if body is not None else {}).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method="POST", headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=HANG_GUARD_S) as response:
            return json.load(response)

    def status(self, path: str, headers: dict[str, str]) -> int:
        """The status a GET with these headers is answered with, an error's included."""
        request = urllib.request.Request(self.url + path, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=HANG_GUARD_S) as response:
                return int(response.status)
        except urllib.error.HTTPError as refused:
            refused.close()
            return refused.code


@contextmanager
def spawn_stub(*args: str, read_log: bool = True) -> Iterator[SpawnedStub]:
    """`python -m stub --port 0 ARGS`, ready once its ready line is read; stopped by PID.

    With `read_log`, stderr is a pipe so a test can read what the stub logged once it stopped
    it; a long-lived stub must not (nobody reads the pipe, and a full one blocks the stub), so
    its log goes to a private file.
    """
    process = StubProcess.start(args, stderr=subprocess.PIPE if read_log else None)
    try:
        yield SpawnedStub(process.process, process.url)
    finally:
        process.stop()
        if process.process.stderr is not None:
            process.process.stderr.close()


@pytest.fixture(scope="session")
def session_stub() -> Iterator[SpawnedStub]:
    with spawn_stub(read_log=False) as stub:
        yield stub


@pytest.fixture
def live_stub(session_stub: SpawnedStub) -> SpawnedStub:
    """The session's spawned stub, reset before the test."""
    session_stub.post("/_test/reset")
    return session_stub


OpenFireweave = Callable[..., tuple[Any, Any, Any]]


@pytest.fixture
def open_fireweave() -> Iterator[OpenFireweave]:
    """Opens the published client in remote mode (`url, api_key, timeout_ms=3000`) as its
    adapter, runtime and client, initialised; every one is shut down after the test."""
    clients: list[Any] = []

    def open_one(url: str, api_key: str, timeout_ms: int = 3000) -> tuple[Any, Any, Any]:
        adapter = FireweaveRemoteAdapter(
            api_url=url, api_key=api_key, request_timeout_ms=timeout_ms
        )
        runtime = FireweaveRuntime(adapter)
        runtime.initialize()
        clients.append(FireweaveClient(runtime))
        return adapter, runtime, clients[-1]

    yield open_one
    for client in clients:
        client.shutdown()


def free_port() -> int:
    """A loopback port free right now (for examples that name one, run as written)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def closed_within(port: int, seconds: float) -> bool:
    """Whether nothing listens on loopback `port` within `seconds`: a stub stopped, by
    whatever stops it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except ConnectionRefusedError:
            return True
        time.sleep(0.05)
    return False


@contextmanager
def adapter_process(command: Sequence[str], cwd: Path | None = None) -> Iterator[str]:
    """A conformance adapter (`command` ends in `--port 0`), run as a team would run theirs:
    its URL from its ready line; stopped by its PID."""
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("adapter listening on "), line
        yield line.removeprefix("adapter listening on ").strip()
    finally:
        process.terminate()
        process.wait(5)
        if process.stdout is not None:
            process.stdout.close()


def run_stub(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """`svc-stub ARGS` (`python -m stub`) run to its end, its output captured: for a start
    that is refused, or a command (`record`, `verify`, `--help`) that ends by itself; `env`,
    when given, is its whole environment."""
    return subprocess.run(
        [sys.executable, "-m", "stub", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def one_line(done: subprocess.CompletedProcess[str], command: str = "") -> str:
    """The one line a refused run says, checked: exit 2, nothing on stdout, and on stderr
    exactly one line, `svc-stub[ COMMAND]: error: ...` (so never a traceback); that line."""
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert done.stdout == "", said
    lines = done.stderr.splitlines()
    assert len(lines) == 1, said
    assert done.stderr == lines[0] + "\n", said
    assert lines[0].startswith(f"svc-stub{f' {command}' if command else ''}: error: "), said
    return lines[0]


# ---- an upstream for proxy mode, record and verify: the "real service"

SERVICE_RUNTIME_KEY = "project-api-key_staging"
SERVICE_VENDOR_KEY = "phc_staging"


@contextmanager
def real_service(*more: str) -> Iterator[SpawnedStub]:
    """A second svc-stub standing in for the real service upstream: it takes only its own
    keys (`SERVICE_RUNTIME_KEY`, `SERVICE_VENDOR_KEY`), as the service does; `more` are its
    other options (`--fixtures FILE`, `--strict-keys`). A server that answers in ways
    svc-stub never does is `foreign_upstream.running()`."""
    keys = ("--api-key", SERVICE_RUNTIME_KEY, "--api-key", SERVICE_VENDOR_KEY)
    with spawn_stub(*more, *keys, read_log=False) as service:
        yield service


def run_kit(*args: str) -> subprocess.CompletedProcess[str]:
    """`svc-stub conformance ARGS`, as a CI job runs it."""
    return subprocess.run(
        [sys.executable, "-m", "stub", "conformance", *args],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
