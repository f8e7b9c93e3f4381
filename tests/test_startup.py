"""What a start imports: a plain start imports only what a plain start uses (issue #46, "a run's
stub starts in less"). aiohttp's client side, the upstream tools, the conformance kit, the
inspector's view, the subcommands, YAML loading and difflib come when something asks for them,
or never; each is shown to come when asked, so that a probe that saw nothing proves nothing.

No timing here: `python bench/run.py --only startup` measures the start (docs/about/performance.md).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path

import pytest

from conftest import HANG_GUARD_S
from stub.process import url_of

CLIENT_SIDE = (
    "aiohttp.client",
    "aiohttp.client_reqrep",
    "aiohttp.connector",
    "aiohttp.cookiejar",
    "aiohttp.tracing",
    "aiohttp.resolver",
    "aiohttp.client_middleware_digest_auth",
    "aiohappyeyeballs",
)
"""aiohttp's client side, which `import aiohttp` brings (two SSL contexts built at import)."""
NEVER_IN_A_PLAIN_START = (
    *CLIENT_SIDE,
    "stub.upstream",  # proxy mode, record, verify
    "stub.conformance",  # svc-stub conformance
    "stub.testing",  # the pytest plugin, svc-stub shared
    "stub.client",  # the Python control client
    "stub.inspector.view",  # the inspector page's feed and snapshot
    "yaml",  # a YAML fixture file
    "difflib",  # a 404 that suggests the route meant
)
"""Modules (and packages, with everything under them) a plain start that serves the runtime and
control planes never imports."""

_PROBE = textwrap.dedent(
    """
    import atexit, json, os, sys

    def _say():
        with open(os.environ["STARTUP_TEST_MODULES"], "w") as out:
            json.dump(sorted(sys.modules), out)

    atexit.register(_say)
    from stub.entry import main

    main()
    """
)
"""The `svc-stub` command's entry point, writing every module the process imported once it
stops (cleanly, on SIGTERM)."""

Request = tuple[str, str]
"""A method and a path, sent once the stub is ready."""
EVALUATE = ("POST", "/v1/flags/evaluate")
HEALTH = ("GET", "/health")
JOURNAL = ("GET", "/_test/requests")


def imported_by(args: Iterable[str], requests: Iterable[Request], tmp_path: Path) -> set[str]:
    """Every module a `svc-stub ARGS` process imported, from spawn until it stopped, having
    answered `requests` (any status)."""
    out = tmp_path / "modules.json"
    env = {**os.environ, "STARTUP_TEST_MODULES": str(out)}
    env = {name: value for name, value in env.items() if not name.startswith("SVC_STUB_")}
    with subprocess.Popen(
        [sys.executable, "-P", "-c", _PROBE, "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    ) as process:
        try:
            assert process.stdout is not None
            url = url_of(process.stdout.readline())
            assert url is not None, "the stub did not start"
            for method, path in requests:
                _send(url, method, path)
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=HANG_GUARD_S) == 0
    modules: list[str] = json.loads(out.read_text())
    return set(modules)


def _send(url: str, method: str, path: str) -> None:
    body = b'{"targetingKey": "user-1", "flagKeys": ["checkout-v2"]}' if method == "POST" else None
    headers = {"Authorization": "Bearer project-api-key_a", "Content-Type": "application/json"}
    request = urllib.request.Request(url + path, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=HANG_GUARD_S) as answer:
            answer.read()
    except urllib.error.HTTPError as refused:
        refused.read()


def among(modules: set[str], names: Iterable[str]) -> set[str]:
    """Those of `modules` that are one of `names` or under one."""
    return {
        module
        for module in modules
        for name in names
        if module == name or module.startswith(name + ".")
    }


class TestAPlainStart:
    def test_imports_only_what_it_uses(self, tmp_path: Path) -> None:
        modules = imported_by((), (HEALTH, EVALUATE, JOURNAL), tmp_path)
        assert {"stub.app", "stub.control.routes", "stub.inspector.routes"} <= modules
        assert among(modules, NEVER_IN_A_PLAIN_START) == set()


class TestWhatComesWhenAsked:
    """Each deferred part is imported by what needs it, by this same probe."""

    def test_proxy_mode_imports_the_upstream_tools_and_aiohttps_client(
        self, tmp_path: Path
    ) -> None:
        modules = imported_by(("--upstream", "http://127.0.0.1:9"), (HEALTH,), tmp_path)
        assert among(modules, ("stub.upstream.proxy", *CLIENT_SIDE)) >= {
            "stub.upstream.proxy",
            *CLIENT_SIDE,
        }

    def test_a_yaml_fixture_imports_yaml(self, tmp_path: Path) -> None:
        fixtures = tmp_path / "flags.yaml"
        fixtures.write_text("flags:\n  new-checkout:\n    type: boolean\n    value: true\n")
        assert "yaml" in imported_by(("--fixtures", str(fixtures)), (HEALTH,), tmp_path)

    def test_the_inspectors_feed_imports_its_view(self, tmp_path: Path) -> None:
        modules = imported_by((), (("GET", "/_test/ui/feed"),), tmp_path)
        assert "stub.inspector.view" in modules

    def test_a_mistyped_route_imports_difflib_for_its_suggestion(self, tmp_path: Path) -> None:
        assert "difflib" in imported_by((), (("POST", "/v1/flag/evaluate"),), tmp_path)


_DEFERRED = textwrap.dedent(
    """
    import sys
    from stub.http.client_side import defer_client, is_deferred

    assert defer_client() and is_deferred()
    from aiohttp import hdrs, web
    import aiohttp

    assert not [name for name in {client!r} if name in sys.modules], sys.modules
    {then}
    """
)


def aiohttp_version() -> str:
    from importlib.metadata import version

    return version("aiohttp")


def run_deferred(then: str) -> str:
    """`then`, in a process whose aiohttp was imported with its client side deferred (and
    its server side imported: aiohttp.web), run to success; what it said on stderr."""
    script = _DEFERRED.format(client=CLIENT_SIDE, then=textwrap.dedent(then).strip())
    done = subprocess.run(
        [sys.executable, "-P", "-c", script], capture_output=True, text=True, timeout=HANG_GUARD_S
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


class TestTheDeferredClientSide:
    """stub/http/client_side.py: aiohttp's package `__init__` runs when a name of its own is
    first asked for, and the package is then the one `import aiohttp` makes."""

    def test_the_server_side_knows_its_version_without_the_init(self) -> None:
        assert not run_deferred(
            """
            from importlib.metadata import version
            assert aiohttp.__version__ == version("aiohttp"), aiohttp.__version__
            assert is_deferred()
            """
        )

    @pytest.mark.parametrize(
        "asked",
        [
            "from aiohttp import ClientSession",
            "aiohttp.ClientSession",
            "import aiohttp.client; aiohttp.ClientSession",
            "getattr(aiohttp, '__all__')",
        ],
    )
    def test_the_first_name_asked_runs_the_init(self, asked: str) -> None:
        assert not run_deferred(
            f"""
            {asked}
            assert not is_deferred()
            import aiohttp.client
            assert aiohttp.ClientSession is aiohttp.client.ClientSession
            assert aiohttp.web is web and aiohttp.hdrs is hdrs
            assert "ClientSession" in aiohttp.__all__ and "__getattr__" in vars(aiohttp)
            assert aiohttp.GunicornWebWorker is None or aiohttp.GunicornWebWorker
            """
        )

    def test_a_name_it_lacks_is_an_attribute_error_once_it_ran(self) -> None:
        assert not run_deferred(
            """
            try:
                aiohttp.no_such_name
            except AttributeError:
                pass
            else:
                raise AssertionError("no AttributeError")
            assert not is_deferred()
            """
        )

    def test_a_module_of_the_package_is_imported_not_the_init(self) -> None:
        assert not run_deferred(
            """
            from aiohttp import web_fileresponse, typedefs
            assert aiohttp.cookiejar.CookieJar  # as after `import aiohttp`, which imports it
            assert is_deferred()
            """
        )

    def test_the_door_runs_the_init_on_an_aiohttp_the_suite_did_not_run_on(self) -> None:
        said = run_deferred(
            """
            from stub.http import connection
            assert connection.door().lane  # a tested release: the client side stays deferred
            assert is_deferred()
            connection.door.cache_clear()
            connection.TESTED = ((0, 0, 0), (0, 0, 1))
            assert not connection.door().lane
            assert not is_deferred() and "aiohttp.connector" in sys.modules
            """
        )
        assert said.splitlines() == [
            f"aiohttp {aiohttp_version()} is not one svc-stub's direct lane was tested on "
            "(0.0.0 to 0.0.1): the direct lane is off; every request takes its route (slower, "
            "never wrong)"
        ]

    def test_nothing_is_deferred_once_aiohttp_was_imported(self) -> None:
        done = subprocess.run(
            [
                sys.executable,
                "-P",
                "-c",
                "import aiohttp\n"
                "from stub.http.client_side import defer_client, is_deferred\n"
                "assert not defer_client() and not is_deferred()\n",
            ],
            capture_output=True,
            text=True,
            timeout=HANG_GUARD_S,
        )
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
