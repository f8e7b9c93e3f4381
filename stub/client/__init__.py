"""A typed client for the test-control plane, usable from any test runner.

Each operation is described once, as a `Call` (what to send, how to read the answer); the
blocking `StubClient` and the asyncio `AsyncStubClient` only carry the calls over HTTP.
"""

from stub.client.aio import AsyncStubClient
from stub.client.models import (
    DEFAULT_WAIT_S,
    MAX_WAIT_S,
    ArmedFault,
    ArmOptions,
    FaultRecord,
    Json,
    ManagedOrg,
    ManagementState,
    NamespaceInfo,
    Recorded,
    RecordedRequest,
    RequestInFull,
    ServedFixtures,
    StubAssertionError,
    StubError,
    StubUnreachable,
    WaitTimeout,
)
from stub.client.sync import StubClient

__all__ = [
    "DEFAULT_WAIT_S",
    "MAX_WAIT_S",
    "ArmOptions",
    "ArmedFault",
    "AsyncStubClient",
    "FaultRecord",
    "Json",
    "ManagedOrg",
    "ManagementState",
    "NamespaceInfo",
    "Recorded",
    "RecordedRequest",
    "RequestInFull",
    "ServedFixtures",
    "StubAssertionError",
    "StubClient",
    "StubError",
    "StubUnreachable",
    "WaitTimeout",
]
