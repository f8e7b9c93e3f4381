"""svc-stub: a local test stub for the control-point service and its legacy vendor routes."""

from stub.app import create_app
from stub.config import StubConfig
from stub.fixtures import FixtureError, FixtureSet, Flag, load_fixture_paths, parse_fixture_document

__version__ = "0.1.0"

__all__ = [
    "FixtureError",
    "FixtureSet",
    "Flag",
    "StubConfig",
    "__version__",
    "create_app",
    "load_fixture_paths",
    "parse_fixture_document",
]
