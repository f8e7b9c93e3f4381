"""An app served inside a test's own event loop as `svc-stub` serves it: aiohttp's test server,
its connections handled by the stub's own (JSON for what aiohttp cannot parse, the direct
lane for a plain evaluate)."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestServer
from aiohttp.web_runner import BaseRunner

from stub.http.connection import StubRunner


class StubTestServer(TestServer):
    """pytest-aiohttp's `TestServer`, with `StubRunner` for aiohttp's runner."""

    async def _make_runner(self, **kwargs: Any) -> BaseRunner:
        return StubRunner(self.app, **kwargs)
