"""Each control-plane operation described once, as a `Call` (what to send, how to read the
answer), with no I/O; the blocking and asyncio clients only carry the calls over HTTP."""

from __future__ import annotations

import base64
import itertools
import json
import operator
import re
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Self, TypeVar

from stub.client.models import (
    MAX_WAIT_S,
    PREFLIGHT,
    ArmedFault,
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
    Verdict,
    WaitTimeout,
    hidden_in_failures,
)

__tracebackhide__ = hidden_in_failures

T = TypeVar("T")

_YAML = "application/yaml"


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One control-plane request and how to read its answer."""

    method: str
    path: str
    read: Callable[[Any], T]
    query: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    content_type: str = "application/json"
    scoped: bool = True
    """Sent in the client's namespace; False: to the stub itself (the namespace registry)."""
    text: bool = False
    """The answer is read as text (a page), not JSON."""
    source: Path | None = None
    """The file the body was read from: a refusal names it instead of `body`."""

    def decoded(self, raw: bytes) -> Any:
        return raw.decode("utf-8") if self.text else json.loads(raw)

    def url(self, control: Control) -> str:
        query = f"?{urllib.parse.urlencode(self.query)}" if self.query else ""
        return f"{control.url if self.scoped else control.base_url}{self.path}{query}"


def _json_call(
    method: str,
    path: str,
    read: Callable[[Any], T],
    body: object = None,
    query: Mapping[str, str] | None = None,
    *,
    scoped: bool = True,
) -> Call[T]:
    encoded = None if body is None else json.dumps(body).encode()
    return Call(method, path, read, dict(query or {}), encoded, scoped=scoped)


def _ok(_: Any) -> None:
    return None


def _management(body: Json) -> ManagementState:
    return ManagementState(
        {
            org_id: ManagedOrg(org_id, tuple(org["principals"]), tuple(org["projects"]))
            for org_id, org in body["orgs"].items()
        }
    )


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
        # absent where the mode does not use them (or the fault is a sequence): None
        delay_ms=body.get("delayMs"),
        status=body.get("status"),
        body=body.get("body"),
        retry_after=body.get("retryAfter"),
    )


def _recorded(body: Json) -> Recorded:
    return Recorded(body["events"], body["svcEvents"], body["targets"], body["dropped"])


def recorded_requests(body: Json) -> list[RecordedRequest]:
    """`GET /_test/requests` as typed values."""
    return [recorded_request(e) for e in body["requests"]]


def recorded_request(e: Json) -> RecordedRequest:
    return RecordedRequest(
        seq=e["seq"],
        method=e["method"],
        path=e["path"],
        query=e["query"],
        route=e["route"],
        status=e["status"],
        client_gone=e.get("clientGone", False),
        fault=_fault_record(e["fault"]),
        duration_ms=e["durationMs"],
        warning=e.get("warning"),
        arrived_ms=e.get("arrivedMs", 0.0),
        retry_after=e.get("retryAfter"),
        headers=e.get("headers", {}),
        upstream_status=(e.get("upstream") or {}).get("status"),
        upstream_ms=(e.get("upstream") or {}).get("durationMs"),
        body_bytes=e.get("bodyBytes"),
        answer_bytes=e.get("answerBytes"),
        unmatched=e.get("unmatched"),
        body=_body(e["body"]) if "body" in e else None,
    )


def request_in_full(e: Json) -> RequestInFull:
    """`GET /_test/requests/{seq}` as a typed value."""
    answer = e["answer"] or {}
    return RequestInFull(
        recorded_request(e),
        _body(e["body"]),
        answer.get("status"),
        answer.get("headers", {}),
        _body(answer.get("body")),
        e["curl"],
    )


def _body(shown: Json | None) -> str | bytes | None:
    if shown is None:
        return None
    text: str | None = shown.get("text")
    return text if text is not None else base64.b64decode(shown["base64"])


def _namespace(body: Json) -> NamespaceInfo:
    return NamespaceInfo(
        body["name"], body["boundKeys"], body["flags"], body["armedFaults"], body["recorded"]
    )


def _fault_record(raw: Json | None) -> FaultRecord | None:
    if raw is None:
        return None
    return FaultRecord(raw["mode"], raw["source"], raw.get("armedId"), raw.get("step"))


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


def _document_call(
    path: str,
    read: Callable[[Any], T],
    document: Mapping[str, Any] | str | Path,
    query: Mapping[str, str] | None = None,
) -> Call[T]:
    """A mapping travels as JSON; a path is read here (the stub never opens a path it is sent)
    and, like YAML text, travels as YAML."""
    if isinstance(document, Mapping):
        return _json_call("POST", path, read, dict(document), query)
    text = document.read_text(encoding="utf-8") if isinstance(document, Path) else document
    source = document if isinstance(document, Path) else None
    return Call("POST", path, read, dict(query or {}), text.encode(), _YAML, source=source)


def _flag_keys(body: Json) -> list[str]:
    return list(body["flags"])


class Calls:
    """Every operation of the control plane, described without doing any I/O."""

    @staticmethod
    def health() -> Call[bool]:
        return _json_call("GET", "/health", lambda body: body.get("ok") is True)

    @staticmethod
    def reset() -> Call[None]:
        return _json_call("POST", "/_test/reset", _ok, {})

    @staticmethod
    def arm(mode: str | None, options: Mapping[str, Any]) -> Call[ArmedFault]:
        return _json_call(
            "POST", "/_test/fault", lambda b: _armed(b["fault"]), _arming(mode, options)
        )

    @staticmethod
    def armed() -> Call[list[ArmedFault]]:
        return _json_call("GET", "/_test/fault", lambda b: [_armed(f) for f in b["armed"]])

    @staticmethod
    def clear_faults() -> Call[None]:
        return _json_call("DELETE", "/_test/fault", _ok)

    @staticmethod
    def disarm(fault_id: int) -> Call[None]:
        return _json_call("DELETE", f"/_test/fault/{fault_id}", _ok)

    @staticmethod
    def recorded(minimums: Mapping[str, int] | None = None, wait_s: float = 0) -> Call[Recorded]:
        query = {name: str(n) for name, n in (minimums or {}).items()}
        if wait_s:
            query["waitMs"] = _wait_ms(wait_s)
        return _json_call("GET", "/_test/events", _recorded, query=query)

    @staticmethod
    def requests(
        route: str | None, minimum: int = 0, wait_s: float = 0
    ) -> Call[list[RecordedRequest]]:
        query = {"bodies": "true"}  # each request's body one call away: `request.json()`
        if route is not None:
            query["route"] = route
        if minimum:
            query.update(min=str(minimum), waitMs=_wait_ms(wait_s))
        return _json_call("GET", "/_test/requests", recorded_requests, query=query)

    @staticmethod
    def check(name: str, query: Mapping[str, str], wait_s: float = 0) -> Call[Verdict]:
        """One of the stub's checks (`GET /_test/checks/{name}`): passed, and in what words."""
        if wait_s:
            query = {**query, "waitMs": _wait_ms(wait_s)}
        return _json_call("GET", f"/_test/checks/{name}", _verdict, query=query)

    @staticmethod
    def offline_url() -> Call[str]:
        return _json_call("GET", "/_test/offline", operator.itemgetter("url"), scoped=False)

    @staticmethod
    def coverage(scope: str, profile: str | None) -> Call[Json]:
        query = {"scope": scope, **({"profile": profile} if profile else {})}
        return _json_call("GET", "/_test/coverage", dict, query=query)

    @staticmethod
    def request(seq: int) -> Call[RequestInFull]:
        return _json_call("GET", f"/_test/requests/{seq}", request_in_full)

    @staticmethod
    def snapshot() -> Call[str]:
        return Call("GET", "/_test/ui/snapshot", str, text=True)

    @staticmethod
    def set_fixtures(document: Mapping[str, Any] | str | Path, merge: bool) -> Call[list[str]]:
        query = {"merge": "true"} if merge else {}
        return _document_call("/_test/fixtures", _flag_keys, document, query)

    @staticmethod
    def served_fixtures() -> Call[ServedFixtures]:
        def read(body: Json) -> ServedFixtures:
            return ServedFixtures(
                list(body["flags"]), body["watching"], body["reloads"], body["reloadError"]
            )

        return _json_call("GET", "/_test/fixtures", read)

    @staticmethod
    def seed_management(
        section: Mapping[str, Any] | str | Path, merge: bool
    ) -> Call[ManagementState]:
        query = {"merge": "true"} if merge else {}
        return _document_call("/_test/management", _management, section, query)

    @staticmethod
    def set_rate_limit(per_second: float | None, per_key: Mapping[str, float] | None) -> Call[None]:
        body: Json = {"perSecond": per_second, "perKey": dict(per_key or {})}
        return _json_call("POST", "/_test/rate-limit", _ok, body)

    @staticmethod
    def management() -> Call[ManagementState]:
        return _json_call("GET", "/_test/management", _management)

    @staticmethod
    def create_namespace(
        name: str | None, keys: Sequence[str], test: str | None = None
    ) -> Call[NamespaceInfo]:
        """By `name`, or from a test's identity (`test`): the stub makes the name."""
        named = {"name": name} if test is None else {"test": test}
        body = {**named, "keys": list(keys)}
        return _json_call("POST", "/_test/namespaces", _namespace, body, scoped=False)

    @staticmethod
    def namespaces() -> Call[list[NamespaceInfo]]:
        def read(body: Json) -> list[NamespaceInfo]:
            return [_namespace(n) for n in body["namespaces"]]

        return _json_call("GET", "/_test/namespaces", read, scoped=False)

    @staticmethod
    def delete_namespace(name: str) -> Call[None]:
        path = f"/_test/namespaces/{urllib.parse.quote(name, safe='')}"
        return _json_call("DELETE", path, _ok, scoped=False)

    @staticmethod
    def set_vendor_flags(body: Mapping[str, Any]) -> Call[list[str]]:
        return _json_call("POST", "/_test/flags", _flag_keys, dict(body))


def _wait_ms(wait_s: float) -> str:
    if not 0 <= wait_s <= MAX_WAIT_S:
        raise ValueError(f"timeout: expected 0 to {MAX_WAIT_S:g} seconds, got {wait_s:g}")
    return str(int(wait_s * 1000))


def check_count(what: str, got: list[Any], wanted: int, timeout_s: float) -> list[Any]:
    if len(got) < wanted:
        shown = json.dumps(got, indent=2, default=str)
        raise WaitTimeout(f"waited {timeout_s:g}s for {wanted} {what}, got {len(got)}:\n{shown}")
    return got


def check_requests(
    route: str | None, got: list[RecordedRequest], wanted: int, timeout_s: float
) -> list[RecordedRequest]:
    """As `check_count`, where a browser's preflight counts only when it is the route asked
    for (the stub's wait counts so too): it is listed, but it is no client's request."""
    counted = got if route is not None else [r for r in got if r.route != PREFLIGHT]
    check_count(f"requests to {route or 'any route'}", counted, wanted, timeout_s)
    return got


def gaps_ms(requests: list[RecordedRequest]) -> list[float]:
    """Between each request's arrival and the next one's, in ms."""
    return [round(b.arrived_ms - a.arrived_ms, 3) for a, b in itertools.pairwise(requests)]


def _verdict(body: Json) -> Verdict:
    return Verdict(body["check"], body["passed"], body["message"])


def passed(verdict: Verdict) -> None:
    """The check held, or the assertion fails in the stub's words."""
    if not verdict.passed:
        raise StubAssertionError(verdict.message)


NAMESPACE_PREFIX = "/ns/"
_NAMESPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
"""The stub's rule (stub/namespaces.py), repeated: this client imports nothing of the server."""


class Control:
    """Where the control plane is and how to call it; what both clients share.

    With `namespace`, every call and `url` (the base URL to give a client library) are in
    that namespace: `url` is `<stub>/ns/<namespace>`, and `base_url` the stub itself.
    """

    def __init__(
        self,
        url: str,
        *,
        control_token: str | None = None,
        timeout_s: float = 10,
        namespace: str | None = None,
    ) -> None:
        if namespace is not None and not _NAMESPACE.fullmatch(namespace):
            raise ValueError(
                f"namespace: {namespace!r} is not a namespace name (1 to 64 of "
                "A-Z a-z 0-9 . _ -, starting with a letter or digit)"
            )
        self.base_url = url.rstrip("/")
        self.namespace = namespace
        self.url = (
            self.base_url if namespace is None else self.base_url + NAMESPACE_PREFIX + namespace
        )
        self._control_token = control_token
        self._headers = {"Authorization": f"Bearer {control_token}"} if control_token else {}
        self._timeout_s = timeout_s

    def in_namespace(self, namespace: str) -> Self:
        """A client of the same stub in `namespace` (created by its first request there)."""
        return type(self)(
            self.base_url,
            control_token=self._control_token,
            timeout_s=self._timeout_s,
            namespace=namespace,
        )

    def _namespace_name(self, name: str | None) -> str:
        name = name or self.namespace
        if name is None:
            raise ValueError("delete_namespace(): name a namespace (this client is in none)")
        return name


def wait_of(call: Call[Any]) -> float:
    return int(call.query.get("waitMs", "0")) / 1000


def stub_error(status: int, raw: bytes, source: Path | None = None) -> StubError:
    """The stub's refusal; of a body read from a file, in that file's name (the stub saw only
    a body)."""
    try:
        body = json.loads(raw)
        message = body.get("message", "")
        if source is not None and message.startswith("body: "):
            message = f"{source}: {message.removeprefix('body: ')}"
        return StubError(status, body.get("error", "ERROR"), message)
    except (ValueError, AttributeError):
        return StubError(status, "ERROR", raw.decode(errors="replace")[:200])
