"""What the control plane answers, as typed values, and the errors a call raises."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

Json = dict[str, Any]

DEFAULT_WAIT_S = 5.0


class StubError(Exception):
    """The stub refused a control call; `code` and `message` are its words."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message

    def __reduce__(self) -> tuple[type[StubError], tuple[int, str, str]]:
        """Pickled with its own arguments (a process pool sends exceptions back pickled)."""
        return (type(self), (self.status, self.code, self.message))


class StubUnreachable(ConnectionError):
    """Nothing answered at the stub's URL (refused, unresolvable, or silent past the timeout);
    `reason` is the network's word for it."""

    def __init__(self, url: str, reason: str) -> None:
        port = urllib.parse.urlsplit(url).port
        start = f"svc-stub --port {port}" if port else "svc-stub"
        super().__init__(
            f"svc-stub at {url} does not answer ({reason}); start one there ({start}) or "
            "correct the URL"
        )
        self.url = url
        self.reason = reason

    def __reduce__(self) -> tuple[type[StubUnreachable], tuple[str, str]]:
        return (type(self), (self.url, self.reason))


class WaitTimeout(AssertionError):
    """A wait ran out; the message shows what was recorded instead."""


class StubAssertionError(AssertionError):
    """An assertion of the control client failed (`assert_exposure`, `assert_no_request`,
    ...): the message lists what was recorded instead."""


def hidden_in_failures(failure: Any) -> bool:
    """pytest's `__tracebackhide__` for the client's modules: a refused call, a wait that ran
    out or a failed assertion is reported as the test's line and its message, not the
    client's frames; any other exception there (a bug) keeps them. `failure` is pytest's
    ExceptionInfo."""
    hidden = (StubError, StubUnreachable, WaitTimeout, StubAssertionError)
    return failure is not None and bool(failure.errisinstance(hidden))


@dataclass(frozen=True, slots=True)
class NamespaceInfo:
    """A namespace and what it holds (`recorded`: entries per list)."""

    name: str
    bound_keys: int
    flags: int
    armed_faults: int
    recorded: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class ServedFixtures:
    """What a namespace serves, and how `--watch` fared with the fixture files."""

    flags: list[str]
    """Flag keys, sorted."""
    watching: bool
    reloads: int
    """Changes to the files served since start-up."""
    reload_error: str | None
    """Why the last change was refused (None: it was not)."""


@dataclass(frozen=True, slots=True)
class FaultRecord:
    """The fault that fired on a request, and where it came from."""

    mode: str
    source: str
    armed_id: int | None = None
    step: int | None = None


PREFLIGHT = "preflight"
"""A browser's preflight's route in the journal: listed, never a client's request (the stub's
own word, stub/cors.py; this package imports nothing of the server)."""


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    seq: int
    method: str
    path: str
    query: Mapping[str, str | list[str]]
    route: str | None
    status: int | None
    fault: FaultRecord | None
    duration_ms: float
    warning: str | None = None
    """Set when the request's key was used where the service would refuse it."""
    arrived_ms: float = 0.0
    """When it arrived, in ms since the stub started (one monotonic clock for every request)."""
    retry_after: int | None = None
    """The `Retry-After` (seconds) the stub answered it with, if any."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """What the client sent, by lower-case name; keys shown by family only
    (`Bearer project-api-key_[redacted]`)."""
    upstream_status: int | None = None
    """In proxy mode, the status the upstream answered the forwarded request with."""
    upstream_ms: float | None = None
    """In proxy mode, how long the upstream took to answer it."""
    client_gone: bool = False
    """The client closed the connection before its body arrived: nothing was answered (status
    None)."""
    body_bytes: int | None = None
    """The size of the body the stub read (None: none was read). The body: `request(seq)`."""
    answer_bytes: int | None = None
    """The size of the answer's body as sent (None: nothing answered, or streamed)."""
    unmatched: str | None = None
    """For an unknown path: what its 404 or 405 said (the route it most resembles)."""
    body: str | bytes | None = None
    """What it sent: text when UTF-8 (a key in a JSON body shown by family only), else bytes;
    None when no body was read."""

    def header(self, name: str) -> str | None:
        """One header the client sent, by any case of its name."""
        return self.headers.get(name.lower())

    @property
    def text(self) -> str | None:
        """The body it sent as text; None when there was none, or it was not UTF-8."""
        return self.body if isinstance(self.body, str) else None

    def json(self) -> Any:
        """The body it sent, parsed as JSON; a ValueError that says why when it is not."""
        if self.body is None:
            raise ValueError(f"request #{self.seq} ({self.method} {self.path}) sent no body")
        try:
            return json.loads(self.body)
        except ValueError as exc:
            raise ValueError(
                f"request #{self.seq} ({self.method} {self.path}): its body is not JSON ({exc})"
            ) from None


@dataclass(frozen=True, slots=True)
class Verdict:
    """One of the stub's checks (`GET /_test/checks/{check}`): what every helper reports."""

    check: str
    passed: bool
    message: str


@dataclass(frozen=True, slots=True)
class RequestInFull:
    """A recorded request with what it sent and what it got, never cut."""

    request: RecordedRequest
    body: str | bytes | None
    """As sent: text when UTF-8 (a key in a JSON body shown by family only), else bytes."""
    answer_status: int | None
    answer_headers: Mapping[str, str]
    answer_body: str | bytes | None
    """None when nothing was answered, or the answer was streamed."""
    curl: str
    """A shell command that sends the request again to the stub (keys as placeholders)."""


@dataclass(frozen=True, slots=True)
class ArmedFault:
    """A fault as the stub armed it. Of `delay_ms`, `status`, `body` and `retry_after` the stub
    lists only those its mode uses (docs/reference/faults.md): any other reads None, as all four
    do for a sequence (each step in `sequence` lists its own)."""

    id: int
    apply_to: tuple[str, ...]
    mode: str | None
    """None for a sequence."""
    sequence: tuple[Json, ...] | None
    ttl_requests: int | None
    """What remains; None: until cleared."""
    probability: float | None
    seed: int | None
    fired: int
    delay_ms: int | None = None
    """For `delay` and `slow_body`."""
    status: int | None = None
    """For a mode that makes its own answer (None too when it answers with the mode's own)."""
    body: Any = None
    """Likewise (None too when it answers with the mode's own)."""
    retry_after: int | None = None
    """For `429`, and `status` with 429 or 503."""


@dataclass(frozen=True, slots=True)
class Recorded:
    """Everything clients sent, in arrival order."""

    events: list[Json]
    """Vendor `/batch` items."""
    svc_events: list[Json]
    """Runtime `/v1/capture` events."""
    targets: list[Json]
    dropped: Mapping[str, int] = field(default_factory=dict)

    @property
    def exposures(self) -> list[Json]:
        return [e for e in self.svc_events if e.get("type") == "exposure"]


@dataclass(frozen=True, slots=True)
class ManagedOrg:
    """One organisation of the management plane as it is now; rows in the wire's shapes."""

    org_id: str
    principals: tuple[Json, ...]
    """`{userId, scope}` of each key and CLI session (never the token)."""
    projects: tuple[Json, ...]
    """Full project rows, each with `environments`, `controlPoints` and `edges`."""

    def project(self, slug: str) -> Json:
        """The project with this slug; a KeyError lists the slugs there are."""
        for project in self.projects:
            if project["slug"] == slug:
                return project
        raise KeyError(f"no project {slug!r} in {self.org_id} (slugs: {self.slugs()})")

    def slugs(self) -> list[str]:
        return [project["slug"] for project in self.projects]


@dataclass(frozen=True, slots=True)
class ManagementState:
    """Every organisation of the management plane, by id."""

    orgs: Mapping[str, ManagedOrg]

    def org(self, org_id: str) -> ManagedOrg:
        try:
            return self.orgs[org_id]
        except KeyError:
            raise KeyError(f"no organisation {org_id!r} (there are: {sorted(self.orgs)})") from None


MAX_WAIT_S = 60.0
"""The stub holds a long-poll open for at most a minute."""


class ArmOptions(TypedDict, total=False):
    """Everything `arm` takes besides the mode; see docs/reference/faults.md."""

    apply_to: str | Sequence[str]
    ttl_requests: int
    sequence: Sequence[str | Json]
    delay_ms: int
    status: int
    body: Any
    retry_after: int
    probability: float
    seed: int
