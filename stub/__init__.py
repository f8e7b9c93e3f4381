"""svc-stub: a local test stub for the control-point service and its legacy vendor routes.

Names are imported on first use, so `import stub.client` (the pytest plugin does it in every
suite that installs svc-stub) does not pay for aiohttp and the server.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "ArmOptions",
    "AsyncStubClient",
    "FixtureError",
    "FixtureSet",
    "Flag",
    "StubClient",
    "StubConfig",
    "StubProcess",
    "__version__",
    "create_app",
    "load_fixture_paths",
    "parse_fixture_document",
]

_HOMES = {
    "ArmOptions": "stub.client",
    "AsyncStubClient": "stub.client",
    "StubClient": "stub.client",
    "FixtureError": "stub.validation",
    "FixtureSet": "stub.fixtures",
    "Flag": "stub.runtime.flags",
    "load_fixture_paths": "stub.fixtures",
    "parse_fixture_document": "stub.fixtures",
    "StubConfig": "stub.config",
    "StubProcess": "stub.process",
    "create_app": "stub.app",
}

if TYPE_CHECKING:
    from stub.app import create_app
    from stub.client import ArmOptions, AsyncStubClient, StubClient
    from stub.config import StubConfig
    from stub.fixtures import FixtureSet, load_fixture_paths, parse_fixture_document
    from stub.process import StubProcess
    from stub.runtime.flags import Flag
    from stub.validation import FixtureError


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'stub' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
