"""A typed client for the test-control plane, usable from any test runner.

Each operation is described once, as a `_Call` (what to send, how to read the answer); the
blocking `StubClient` and the asyncio `AsyncStubClient` only carry the calls over HTTP.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypedDict, TypeVar, Unpack

T = TypeVar("T")
Json = dict[str, Any]

DEFAULT_WAIT_S = 5.0
_YAML = "application/yaml"


class StubError(Exception):
    """The stub refused a control call; `code` and `message` are its words."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class WaitTimeout(AssertionError):
    """A wait ran out; the message shows what was recorded instead."""


@dataclass(frozen=True, slots=True)
class FaultRecord:
    """The fault that fired on a request, and where it came from."""

    mode: str
    source: str
    armed_id: int | None = None
    step: int | None = None


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


@dataclass(frozen=True, slots=True)
class ArmedFault:
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
    status: int | None = None
    body: Any = None
    retry_after: int | None = None


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
class _Call(Generic[T]):
    """One control-plane request and how to read its answer."""

    method: str
    path: str
    read: Callable[[Any], T]
    query: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    content_type: str = "application/json"

    def url(self, base: str) -> str:
        query = f"?{urllib.parse.urlencode(self.query)}" if self.query else ""
        return f"{base}{self.path}{query}"


def _json_call(
    method: str,
    path: str,
    read: Callable[[Any], T],
    body: object = None,
    query: Mapping[str, str] | None = None,
) -> _Call[T]:
    encoded = None if body is None else json.dumps(body).encode()
    return _Call(method, path, read, dict(query or {}), encoded)


def _ok(_: Any) -> None:
    return None


def _armed(body: Json) -> ArmedFault:
    sequence = body.get("sequence")
    return ArmedFault(
        id=body["id"],
        apply_to=tuple(body["applyTo"]),
        mode=body.get("mode"),
        sequence=tuple(sequence) if sequence is not None else None,
        ttl_requests=body["ttlRequests"],
        probability=body["probability"],
        seed=body["seed"],
        fired=body["fired"],
        delay_ms=body.get("delayMs"),
        status=body.get("status"),
        body=body.get("body"),
        retry_after=body.get("retryAfter"),
    )


def _recorded(body: Json) -> Recorded:
    return Recorded(body["events"], body["svcEvents"], body["targets"], body["dropped"])


def _requests(body: Json) -> list[RecordedRequest]:
    return [
        RecordedRequest(
            seq=e["seq"],
            method=e["method"],
            path=e["path"],
            query=e["query"],
            route=e["route"],
            status=e["status"],
            fault=_fault_record(e["fault"]),
            duration_ms=e["durationMs"],
        )
        for e in body["requests"]
    ]


def _fault_record(raw: Json | None) -> FaultRecord | None:
    if raw is None:
        return None
    return FaultRecord(raw["mode"], raw["source"], raw.get("armedId"), raw.get("step"))


MAX_WAIT_S = 60.0
"""The stub holds a long-poll open for at most a minute."""


class ArmOptions(TypedDict, total=False):
    """Everything `arm` takes besides the mode; see the README's fault reference."""

    apply_to: str | Sequence[str]
    ttl_requests: int
    sequence: Sequence[str | Json]
    delay_ms: int
    status: int
    body: Any
    retry_after: int
    probability: float
    seed: int


_WIRE_NAMES = {
    "apply_to": "applyTo",
    "ttl_requests": "ttlRequests",
    "sequence": "sequence",
    "delay_ms": "delayMs",
    "status": "status",
    "body": "body",
    "retry_after": "retryAfter",
    "probability": "probability",
    "seed": "seed",
}


def _arming(mode: str | None, options: Mapping[str, Any]) -> Json:
    if mode == "none" and options.get("sequence") is None:
        raise ValueError("arm('none') would clear every fault: call clear_faults() for that")
    unknown = sorted(set(options) - set(_WIRE_NAMES))
    if unknown:
        raise TypeError(f"arm() got an unexpected keyword argument {unknown[0]!r}")
    document: Json = {} if mode is None else {"mode": mode}
    for name, value in options.items():
        if value is not None:
            is_list = name == "sequence" or (name == "apply_to" and not isinstance(value, str))
            document[_WIRE_NAMES[name]] = list(value) if is_list else value
    return document


def _fixtures_call(document: Mapping[str, Any] | str | Path, merge: bool) -> _Call[list[str]]:
    """A mapping travels as JSON; a path is read here (the stub never opens a path it is sent)
    and, like YAML text, travels as YAML."""
    query = {"merge": "true"} if merge else {}
    if isinstance(document, Mapping):
        return _json_call("POST", "/_test/fixtures", _flag_keys, dict(document), query)
    text = document.read_text(encoding="utf-8") if isinstance(document, Path) else document
    return _Call("POST", "/_test/fixtures", _flag_keys, query, text.encode(), _YAML)


def _flag_keys(body: Json) -> list[str]:
    return list(body["flags"])


class _Calls:
    """Every operation of the control plane, described without doing any I/O."""

    @staticmethod
    def health() -> _Call[bool]:
        return _json_call("GET", "/health", lambda body: body.get("ok") is True)

    @staticmethod
    def reset() -> _Call[None]:
        return _json_call("POST", "/_test/reset", _ok, {})

    @staticmethod
    def arm(mode: str | None, options: Mapping[str, Any]) -> _Call[ArmedFault]:
        return _json_call(
            "POST", "/_test/fault", lambda b: _armed(b["fault"]), _arming(mode, options)
        )

    @staticmethod
    def armed() -> _Call[list[ArmedFault]]:
        return _json_call("GET", "/_test/fault", lambda b: [_armed(f) for f in b["armed"]])

    @staticmethod
    def clear_faults() -> _Call[None]:
        return _json_call("DELETE", "/_test/fault", _ok)

    @staticmethod
    def disarm(fault_id: int) -> _Call[None]:
        return _json_call("DELETE", f"/_test/fault/{fault_id}", _ok)

    @staticmethod
    def recorded(minimums: Mapping[str, int] | None = None, wait_s: float = 0) -> _Call[Recorded]:
        query = {name: str(n) for name, n in (minimums or {}).items()}
        if wait_s:
            query["waitMs"] = _wait_ms(wait_s)
        return _json_call("GET", "/_test/events", _recorded, query=query)

    @staticmethod
    def requests(
        route: str | None, minimum: int = 0, wait_s: float = 0
    ) -> _Call[list[RecordedRequest]]:
        query = {"route": route} if route is not None else {}
        if minimum:
            query.update(min=str(minimum), waitMs=_wait_ms(wait_s))
        return _json_call("GET", "/_test/requests", _requests, query=query)

    @staticmethod
    def set_fixtures(document: Mapping[str, Any] | str | Path, merge: bool) -> _Call[list[str]]:
        return _fixtures_call(document, merge)

    @staticmethod
    def set_vendor_flags(body: Mapping[str, Any]) -> _Call[list[str]]:
        return _json_call("POST", "/_test/flags", _flag_keys, dict(body))


def _wait_ms(wait_s: float) -> str:
    if not 0 <= wait_s <= MAX_WAIT_S:
        raise ValueError(f"timeout: expected 0 to {MAX_WAIT_S:g} seconds, got {wait_s:g}")
    return str(int(wait_s * 1000))


def _check_count(what: str, got: list[Any], wanted: int, timeout_s: float) -> list[Any]:
    if len(got) < wanted:
        shown = json.dumps(got, indent=2, default=str)
        raise WaitTimeout(f"waited {timeout_s:g}s for {wanted} {what}, got {len(got)}:\n{shown}")
    return got


def _find_exposure(
    recorded: Recorded, flag_key: str, targeting_key: str, variant: str | None
) -> None:
    for event in recorded.exposures:
        same = event.get("flagKey") == flag_key and event.get("targetingKey") == targeting_key
        if same and (variant is None or event.get("variant") == variant):
            return
    wanted = f"flagKey={flag_key!r}, targetingKey={targeting_key!r}"
    if variant is not None:
        wanted += f", variant={variant!r}"
    shown = json.dumps(recorded.exposures, indent=2) if recorded.exposures else "(none)"
    raise AssertionError(f"no exposure with {wanted}; exposures recorded:\n{shown}")


def _no_request(requests: list[RecordedRequest], route: str) -> None:
    if requests:
        lines = "\n".join(f"  #{r.seq} {r.method} {r.path} -> {r.status}" for r in requests)
        raise AssertionError(
            f"expected no request to route {route!r}, got {len(requests)}:\n{lines}"
        )


class _Control:
    """Where the control plane is and how to call it; what both clients share."""

    def __init__(
        self, url: str, *, control_token: str | None = None, timeout_s: float = 10
    ) -> None:
        self.url = url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {control_token}"} if control_token else {}
        self._timeout_s = timeout_s


class StubClient(_Control):
    """The control plane over blocking HTTP (standard library only)."""

    def health(self) -> bool:
        return self._run(_Calls.health())

    def reset(self) -> None:
        self._run(_Calls.reset())

    def arm(self, mode: str | None = None, **options: Unpack[ArmOptions]) -> ArmedFault:
        """Arm a fault (or a `sequence` of them); `apply_to` defaults to every route."""
        return self._run(_Calls.arm(mode, options))

    @contextmanager
    def fault(self, mode: str | None = None, **arming: Unpack[ArmOptions]) -> Iterator[ArmedFault]:
        """Arm a fault for the block, then disarm just that one (if it has not run out)."""
        armed = self.arm(mode, **arming)
        try:
            yield armed
        finally:
            self._disarm_quietly(armed.id)

    def armed(self) -> list[ArmedFault]:
        return self._run(_Calls.armed())

    def disarm(self, fault_id: int) -> None:
        self._run(_Calls.disarm(fault_id))

    def clear_faults(self) -> None:
        self._run(_Calls.clear_faults())

    def recorded(self) -> Recorded:
        return self._run(_Calls.recorded())

    def events(self) -> list[Json]:
        return self.recorded().events

    def svc_events(self) -> list[Json]:
        return self.recorded().svc_events

    def targets(self) -> list[Json]:
        return self.recorded().targets

    def requests(self, route: str | None = None) -> list[RecordedRequest]:
        return self._run(_Calls.requests(route))

    def set_fixtures(
        self, document: Mapping[str, Any] | str | Path, *, merge: bool = False
    ) -> list[str]:
        """Serve these fixtures (a mapping, YAML text or a file path) until reset."""
        return self._run(_Calls.set_fixtures(document, merge))

    def set_vendor_flags(self, body: Mapping[str, Any]) -> list[str]:
        return self._run(_Calls.set_vendor_flags(body))

    def wait_for_events(self, n: int, timeout: float = DEFAULT_WAIT_S) -> list[Json]:
        """Vendor batch items, once at least `n` arrived (SDKs flush in the background)."""
        got = self._run(_Calls.recorded({"minEvents": n}, timeout)).events
        return _check_count("events", got, n, timeout)

    def wait_for_svc_events(self, n: int, timeout: float = DEFAULT_WAIT_S) -> list[Json]:
        got = self._run(_Calls.recorded({"minSvcEvents": n}, timeout)).svc_events
        return _check_count("svcEvents", got, n, timeout)

    def wait_for_targets(self, n: int, timeout: float = DEFAULT_WAIT_S) -> list[Json]:
        got = self._run(_Calls.recorded({"minTargets": n}, timeout)).targets
        return _check_count("targets", got, n, timeout)

    def wait_for_requests(
        self, n: int, route: str | None = None, timeout: float = DEFAULT_WAIT_S
    ) -> list[RecordedRequest]:
        got = self._run(_Calls.requests(route, n, timeout))
        return _check_count(f"requests to {route or 'any route'}", got, n, timeout)

    def assert_exposure(
        self, flag_key: str, targeting_key: str, variant: str | None = None
    ) -> None:
        """An exposure for this flag and targeting key was captured (and, if given, variant)."""
        _find_exposure(self.recorded(), flag_key, targeting_key, variant)

    def assert_no_request(self, route: str) -> None:
        _no_request(self.requests(route), route)

    def _disarm_quietly(self, fault_id: int) -> None:
        try:
            self.disarm(fault_id)
        except StubError as exc:
            if exc.status != 404:  # 404: it ran out by itself
                raise

    def _run(self, call: _Call[T]) -> T:
        request = urllib.request.Request(
            call.url(self.url),
            data=call.body,
            method=call.method,
            headers={**self._headers, "Content-Type": call.content_type},
        )
        try:
            with urllib.request.urlopen(
                request, timeout=self._timeout_s + _wait_of(call)
            ) as answer:
                return call.read(json.load(answer))
        except urllib.error.HTTPError as exc:
            with exc:
                raise _stub_error(exc.code, exc.read()) from None


class AsyncStubClient(_Control):
    """The control plane over aiohttp, for tests whose stub runs in their own event loop."""

    _session: Any = None  # made on first use: a session needs a running event loop

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def health(self) -> bool:
        return await self._run(_Calls.health())

    async def reset(self) -> None:
        await self._run(_Calls.reset())

    async def arm(self, mode: str | None = None, **options: Unpack[ArmOptions]) -> ArmedFault:
        """Arm a fault (or a `sequence` of them); `apply_to` defaults to every route."""
        return await self._run(_Calls.arm(mode, options))

    @asynccontextmanager
    async def fault(
        self, mode: str | None = None, **arming: Unpack[ArmOptions]
    ) -> AsyncIterator[ArmedFault]:
        armed = await self.arm(mode, **arming)
        try:
            yield armed
        finally:
            try:
                await self.disarm(armed.id)
            except StubError as exc:
                if exc.status != 404:
                    raise

    async def armed(self) -> list[ArmedFault]:
        return await self._run(_Calls.armed())

    async def disarm(self, fault_id: int) -> None:
        await self._run(_Calls.disarm(fault_id))

    async def clear_faults(self) -> None:
        await self._run(_Calls.clear_faults())

    async def recorded(self) -> Recorded:
        return await self._run(_Calls.recorded())

    async def events(self) -> list[Json]:
        return (await self.recorded()).events

    async def svc_events(self) -> list[Json]:
        return (await self.recorded()).svc_events

    async def targets(self) -> list[Json]:
        return (await self.recorded()).targets

    async def requests(self, route: str | None = None) -> list[RecordedRequest]:
        return await self._run(_Calls.requests(route))

    async def set_fixtures(
        self, document: Mapping[str, Any] | str | Path, *, merge: bool = False
    ) -> list[str]:
        return await self._run(_Calls.set_fixtures(document, merge))

    async def set_vendor_flags(self, body: Mapping[str, Any]) -> list[str]:
        return await self._run(_Calls.set_vendor_flags(body))

    async def wait_for_svc_events(self, n: int, timeout: float = DEFAULT_WAIT_S) -> list[Json]:
        got = (await self._run(_Calls.recorded({"minSvcEvents": n}, timeout))).svc_events
        return _check_count("svcEvents", got, n, timeout)

    async def wait_for_events(self, n: int, timeout: float = DEFAULT_WAIT_S) -> list[Json]:
        got = (await self._run(_Calls.recorded({"minEvents": n}, timeout))).events
        return _check_count("events", got, n, timeout)

    async def wait_for_targets(self, n: int, timeout: float = DEFAULT_WAIT_S) -> list[Json]:
        got = (await self._run(_Calls.recorded({"minTargets": n}, timeout))).targets
        return _check_count("targets", got, n, timeout)

    async def wait_for_requests(
        self, n: int, route: str | None = None, timeout: float = DEFAULT_WAIT_S
    ) -> list[RecordedRequest]:
        got = await self._run(_Calls.requests(route, n, timeout))
        return _check_count(f"requests to {route or 'any route'}", got, n, timeout)

    async def assert_exposure(
        self, flag_key: str, targeting_key: str, variant: str | None = None
    ) -> None:
        _find_exposure(await self.recorded(), flag_key, targeting_key, variant)

    async def assert_no_request(self, route: str) -> None:
        _no_request(await self.requests(route), route)

    async def _run(self, call: _Call[T]) -> T:
        import aiohttp  # here, not at the top: the pytest plugin imports this module at start-up

        if self._session is None:
            self._session = aiohttp.ClientSession(headers=self._headers)
        timeout = aiohttp.ClientTimeout(total=self._timeout_s + _wait_of(call))
        async with self._session.request(
            call.method,
            call.url(self.url),
            data=call.body,
            headers={"Content-Type": call.content_type},
            timeout=timeout,
        ) as answer:
            raw = await answer.read()
            if answer.status >= 400:
                raise _stub_error(answer.status, raw)
            return call.read(json.loads(raw))


def _wait_of(call: _Call[Any]) -> float:
    return int(call.query.get("waitMs", "0")) / 1000


def _stub_error(status: int, raw: bytes) -> StubError:
    try:
        body = json.loads(raw)
        return StubError(status, body.get("error", "ERROR"), body.get("message", ""))
    except (ValueError, AttributeError):
        return StubError(status, "ERROR", raw.decode(errors="replace")[:200])
