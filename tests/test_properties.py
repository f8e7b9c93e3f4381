"""Property tests (hypothesis) over the HTTP API of a spawned stub.

Random bodies, methods, paths and headers; random fault arming documents; random sequences of
control operations interleaved with client requests. Whatever arrives: no 5xx that no fault
asked for, every answer JSON, `/health` answers, and the state the control plane reports stays
consistent with what was done to it.

Every example sends real requests (http.client, one connection per request) to one stub
process, reset at the start of each example. Faults that give no answer (reset,
empty_response, hang, truncated) are never generated, and delays are bounded to a few ms.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import re
import sys
import tempfile
import urllib.parse
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, ClassVar

import pytest
import yaml
from hypothesis import Phase, event, example, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from stub.process import StubProcess

# ---------------------------------------------------------------------------------------------
# The stub and a blocking client
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    body: bytes

    def json(self) -> Any:
        # what the stub accepts (1024 levels) it may echo back a level or two deeper
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 5000))
        try:
            return json.loads(self.body)
        finally:
            sys.setrecursionlimit(limit)

    def parses(self) -> bool:
        try:
            self.json()
        except ValueError:
            return False
        return True

    def __str__(self) -> str:
        shown = self.body if len(self.body) <= 300 else self.body[:300] + b"..."
        return f"{self.status} {self.content_type!r} {shown!r}"


class Stub:
    """One spawned stub; its log goes to a file we own, so it can be quoted on failure."""

    def __init__(self, url: str, log: IO[bytes]) -> None:
        parts = urllib.parse.urlsplit(url)
        assert parts.hostname is not None
        assert parts.port is not None
        self.host, self.port = parts.hostname, parts.port
        self._log = log
        self._mark = 0
        self.default_keys: frozenset[str] | None = None

    def send(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        headers: Sequence[tuple[str, str]] = (),
    ) -> Answer:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            connection.putrequest(method, path, skip_accept_encoding=True)
            for name, value in headers:
                connection.putheader(name, value)
            if body or method not in ("GET", "HEAD"):
                connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body)
            response = connection.getresponse()
            data = response.read()
            return Answer(response.status, response.getheader("Content-Type") or "", data)
        finally:
            connection.close()

    def send_json(
        self,
        method: str,
        path: str,
        document: object,
        headers: Sequence[tuple[str, str]] = (),
    ) -> Answer:
        # the stdlib encoder: integers beyond 64 bits are valid JSON and worth sending
        body = json.dumps(document, allow_nan=False).encode()
        return self.send(method, path, body, (("Content-Type", "application/json"), *headers))

    def start_example(self) -> None:
        """Reset the stub; what it logs from here on is quoted by `logged()`."""
        self._mark = os.fstat(self._log.fileno()).st_size
        answer = self.send("POST", "/_test/reset")
        assert (answer.status, answer.json()) == (200, {"ok": True}), str(answer)

    def logged(self) -> str:
        """What the stub logged since the example started (its tracebacks, if any)."""
        size = os.fstat(self._log.fileno()).st_size
        text = os.pread(self._log.fileno(), size - self._mark, self._mark)
        said = text.decode("utf-8", "replace").strip()
        return "\n  stub log: " + said[-3000:] if said else ""

    def why(self, answer: Answer, what: str) -> str:
        return f"{what}: {answer}{self.logged()}"


@pytest.fixture(scope="module")
def stub() -> Iterator[Stub]:
    """A stub of our own rather than the session's: the session stub's stderr is a pipe that no
    one reads, so once a property finds a bug (and shrinking logs a few hundred tracebacks)
    it would fill and freeze that stub for every later test. Ours logs to a file."""
    with tempfile.TemporaryFile() as log:
        process = StubProcess.start(stderr=log)
        try:
            yield Stub(process.url, log)
        finally:
            process.stop()


# Every property: the same examples on every run (a seed derived from the test, no example
# database), no deadline (real requests), and one failure per test, shrunk: looking on for
# more, and shrinking each, takes minutes while the stub has several bugs.
PROPERTIES = settings(
    deadline=None,
    derandomize=True,
    database=None,
    report_multiple_bugs=False,
    # not Phase.explain: on Python 3.11 it traces every line the shrinker runs, and shrinking
    # a failing sequence of real requests then takes minutes
    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink),
)

JSON_TYPE = "application/json"
AUTH = ("Authorization", "Bearer test-key")
NO_FAULT = ("X-Svc-Test-Fault", "none")


def is_json_type(answer: Answer) -> bool:
    return answer.content_type.split(";")[0].strip().lower() == JSON_TYPE


def assert_control_plane_answers(stub: Stub) -> None:
    """`/health` and the read-only control routes answer 200 JSON."""
    health = stub.send("GET", "/health")
    assert health.status == 200, stub.why(health, "/health")
    assert is_json_type(health), stub.why(health, "/health content type")
    assert health.json() == {"ok": True}, stub.why(health, "/health body")
    for path in ("/_test/fault", "/_test/events", "/_test/requests"):
        answer = stub.send("GET", path)
        assert answer.status == 200, stub.why(answer, f"GET {path} after the request")
        assert is_json_type(answer), stub.why(answer, f"GET {path} content type")
        assert answer.parses(), stub.why(answer, f"GET {path} body")


def nested_lists(depth: int) -> str:
    return "[" * depth + "]" * depth


class Deep:
    """A JSON value of lists nested `depth` deep, spliced in when the document is encoded."""

    def __init__(self, depth: int) -> None:
        self.depth = depth

    def __repr__(self) -> str:
        return f"Deep({self.depth})"


def compact(data: bytes) -> str:
    """A bytes literal with long runs written `b"[" * 1000`, so a failure stays readable."""
    pieces: list[str] = []
    position = 0
    for run in re.finditer(rb"(.)\1{15,}", data, re.DOTALL):
        if run.start() > position:
            pieces.append(repr(data[position : run.start()]))
        pieces.append(f"{data[run.start() : run.start() + 1]!r} * {len(run.group())}")
        position = run.end()
    if position < len(data) or not pieces:
        pieces.append(repr(data[position:]))
    return " + ".join(pieces)


class DeepText(str):
    """A JSON-encoded string that holds a `Deep` value."""

    __slots__ = ()


def encoded_text(value: object) -> str:
    """The value as a JSON-encoded string (vendor payloads travel so)."""
    text = encode(value).decode()
    return DeepText(text) if has_deep(value) else text


def has_deep(document: object) -> bool:
    if isinstance(document, Deep | DeepText):
        return True
    if isinstance(document, dict):
        return any(has_deep(value) for value in document.values())
    if isinstance(document, list):
        return any(has_deep(value) for value in document)
    return False


def encode(document: object) -> bytes:
    """JSON with each `Deep` spliced in as text (the stdlib encoder would recurse)."""
    deep: list[Deep] = []

    def default(value: object) -> object:
        if isinstance(value, Deep):
            deep.append(value)
            return f"\x00deep{len(deep) - 1}\x00"
        raise TypeError(type(value).__name__)

    text = json.dumps(document, allow_nan=False, default=default)
    for index, value in enumerate(deep):
        text = text.replace(f'"\\u0000deep{index}\\u0000"', nested_lists(value.depth), 1)
    return text.encode()


# ---------------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------------

SELECTORS = ("evaluate", "capture", "register", "flags", "definitions", "batch")
# Modes that always answer; the others (reset, empty_response, hang, truncated) drop or stall
# the connection, and delay / slow_body are only ever given a delay of a few ms.
ANSWERING_MODES = ("401", "429", "500", "status", "invalid_json", "quota_limited")
DELAYING_MODES = ("delay", "slow_body")
ALL_MODES = (
    *ANSWERING_MODES,
    *DELAYING_MODES,
    "truncated",
    "reset",
    "empty_response",
    "hang",
)
ARMING_FIELDS = (
    "mode",
    "delayMs",
    "status",
    "body",
    "retryAfter",
    "sequence",
    "applyTo",
    "ttlRequests",
    "probability",
    "seed",
)
STEP_FIELDS = ("mode", "delayMs", "status", "body", "retryAfter")

CLIENT_ROUTES: Mapping[tuple[str, str], str] = {
    ("POST", "/v1/flags/evaluate"): "evaluate",
    ("POST", "/v1/capture"): "capture",
    ("POST", "/v1/targets/register"): "register",
    ("POST", "/flags"): "flags",
    ("GET", "/flags/definitions"): "definitions",
    ("GET", "/api/feature_flag/local_evaluation"): "definitions",
    ("POST", "/batch"): "batch",
}
CONTROL_PATHS = (
    "/health",
    "/_test/reset",
    "/_test/events",
    "/_test/requests",
    "/_test/flags",
    "/_test/fixtures",
    "/_test/fault",
    "/_test/fault/1",
    "/_test/openapi.json",
)
CLIENT_PATHS = frozenset(path for _, path in CLIENT_ROUTES)
KNOWN_PATHS = tuple(sorted(CLIENT_PATHS | set(CONTROL_PATHS)))
# Every route with the method it serves, so random traffic reaches the handlers too.
ROUTE_TABLE = (
    *CLIENT_ROUTES,
    ("GET", "/health"),
    ("POST", "/_test/reset"),
    ("GET", "/_test/events"),
    ("GET", "/_test/requests"),
    ("POST", "/_test/flags"),
    ("POST", "/_test/fixtures"),
    ("POST", "/_test/fault"),
    ("GET", "/_test/fault"),
    ("DELETE", "/_test/fault"),
    ("DELETE", "/_test/fault/1"),
    ("GET", "/_test/openapi.json"),
)
METHODS = ("POST", "GET", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT")

# ---------------------------------------------------------------------------------------------
# Strategies: JSON
# ---------------------------------------------------------------------------------------------

utf8_text = st.text(st.characters(codec="utf-8"), max_size=12)
small_ints = st.integers(-(2**31), 2**31)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    utf8_text,
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(utf8_text, inner, max_size=4),
    max_leaves=10,
)
# Lists nested up to a few thousand deep: the parser refuses beyond 1024, and what it accepts
# must still come back out of every route that echoes it.
deep_values = st.integers(0, 3000).map(Deep)
values_or_deep = st.one_of(json_values, deep_values)
# As deep as the parser reads (1024 levels, counting the document's own): a document that
# must be accepted can hold these.
readable_deep = st.one_of(json_values, st.integers(0, 1000).map(Deep))
objects = st.dictionaries(utf8_text, values_or_deep, max_size=4)
json_text = st.text(st.characters(codec="utf-8"), max_size=6)

# ---------------------------------------------------------------------------------------------
# Strategies: one request of any shape (TestRandomTraffic)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FaultAsk:
    """A fault asked for by the request itself: header or query, mode and raw parameters."""

    source: str
    mode: str
    params: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: bytes
    headers: tuple[tuple[str, str], ...]
    fault: FaultAsk | None = None

    def __repr__(self) -> str:
        return (
            f"Request({self.method!r}, {self.path!r}, {compact(self.body)}, {self.headers!r}, "
            f"{self.fault!r})"
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    @property
    def selector(self) -> str | None:
        """The fault selector when this request reaches a runtime or vendor route."""
        path = self.path.partition("?")[0]
        if path.endswith("/") and len(path) > 1:
            path = path[:-1]
        return CLIENT_ROUTES.get((self.method, path))


PARAM_HEADERS = {
    "delayMs": "X-Svc-Test-Delay-Ms",
    "status": "X-Svc-Test-Status",
    "retryAfter": "X-Svc-Test-Retry-After",
}
junk_words = st.text(
    st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=0, max_size=6
).filter(lambda word: word.strip() not in ALL_MODES)
fault_asks = st.builds(
    FaultAsk,
    source=st.sampled_from(("header", "query")),
    mode=st.one_of(st.sampled_from((*ANSWERING_MODES, *DELAYING_MODES, "none")), junk_words),
    params=st.lists(
        st.one_of(
            st.tuples(st.just("delayMs"), st.integers(-2, 5).map(str)),
            st.tuples(
                st.just("status"),
                st.one_of(
                    st.sampled_from(("200", "204", "304", "400", "503", "599", "600", "99")),
                    st.integers(100, 700).map(str),
                    junk_words,
                ),
            ),
            st.tuples(st.just("retryAfter"), st.one_of(st.integers(-2, 100).map(str), junk_words)),
        ),
        max_size=3,
        unique_by=lambda pair: pair[0],
    ).map(tuple),
).filter(
    # delay and slow_body default to 10 s: only ever ask for them with a small delay
    lambda ask: ask.mode.strip() not in DELAYING_MODES or "delayMs" in dict(ask.params)
)

header_value_chars = st.characters(
    min_codepoint=0x20, max_codepoint=0xFF, exclude_categories=["Cc"]
)
header_values = st.text(header_value_chars, max_size=20)
key_values = st.one_of(st.sampled_from(("k", "test-key", "", " ", "phc_x")), header_values)
auth_headers = st.one_of(
    st.tuples(st.just("Authorization"), key_values.map(lambda key: f"Bearer {key}")),
    st.tuples(
        st.just("Authorization"),
        st.tuples(st.sampled_from(("bearer", "BEARER", "Basic", "Token", "")), key_values).map(
            " ".join
        ),
    ),
    st.tuples(st.sampled_from(("x-api-key", "X-API-KEY")), key_values),
)
content_types = st.one_of(
    st.sampled_from(
        (
            "application/json",
            "application/json; charset=utf-8",
            "application/yaml",
            "text/yaml",
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
            "application/octet-stream",
            "",
        )
    ),
    header_values,
)
content_encodings = st.one_of(
    st.sampled_from(("gzip", "deflate", "identity", "br", "zstd", "gzip, deflate", "x-gzip")),
    header_values,
)
token_names = st.from_regex(r"\A[A-Za-z][A-Za-z0-9-]{0,15}\Z").filter(
    lambda name: (
        name.lower() not in ("host", "content-length", "transfer-encoding", "connection", "upgrade")
        and not name.lower().startswith("x-svc-test")
    )
)
other_headers = st.one_of(
    st.tuples(
        st.sampled_from(
            ("Accept", "Accept-Encoding", "If-None-Match", "User-Agent", "Cookie", "Expect")
        ),
        st.one_of(st.sampled_from(("*/*", "gzip", "100-continue", '"etag"')), header_values),
    ),
    st.tuples(token_names, header_values),
)


@st.composite
def bodies(draw: st.DrawFn, path: str) -> bytes:
    """Arbitrary bytes, text, JSON, or JSON shaped like what the route reads."""
    shaped = {
        "targetingKey": st.one_of(st.sampled_from(("u1", "")), json_values),
        "flagKeys": st.one_of(st.lists(utf8_text, max_size=3), json_values),
        "attributes": st.one_of(objects, json_values),
        "events": st.one_of(st.lists(objects, max_size=3), json_values),
        "batch": st.one_of(st.lists(objects, max_size=3), json_values),
        "api_key": st.one_of(st.just("phc_x"), json_values),
        "token": st.one_of(st.just("phc_x"), json_values),
        "distinct_id": json_values,
        "person_properties": st.one_of(objects, json_values),
        "flag_keys_to_evaluate": st.one_of(st.lists(utf8_text, max_size=3), json_values),
        "properties": st.one_of(objects, json_values),
        "flags": st.one_of(st.dictionaries(utf8_text, objects, max_size=3), json_values),
        "mode": st.one_of(st.sampled_from(ANSWERING_MODES), json_values),
    }
    kind = draw(st.sampled_from(("route", "bytes", "text", "json", "shaped", "deep", "route")))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    if kind == "text":
        return draw(st.text(max_size=100)).encode("utf-8", "surrogatepass")
    if kind == "json":
        return encode(draw(values_or_deep))
    if kind == "deep":
        return nested_lists(draw(st.integers(0, 3000))).encode()
    if kind == "route" and path in ROUTE_DOCUMENTS:
        return encode(draw(ROUTE_DOCUMENTS[path]))
    document = draw(st.fixed_dictionaries({}, optional=shaped))
    document.update(draw(st.dictionaries(utf8_text, values_or_deep, max_size=2)))
    return encode(document)


segment_chars = st.characters(codec="utf-8", exclude_characters="/")
unknown_paths = st.tuples(
    st.sampled_from(("/", "/v1/", "/_test/", "/flags/", "/api/", "/_test/fault/")),
    st.text(segment_chars, min_size=1, max_size=10).filter(lambda seg: seg.strip(".") != ""),
).map(lambda parts: parts[0] + urllib.parse.quote(parts[1], safe=""))
query_values = st.one_of(
    st.sampled_from(("", "0", "1", "true", "2", "4", "evaluate", "phc_x")),
    st.integers(0, 20).map(str),
    st.text(max_size=5).filter(lambda value: not value.isdigit() or len(value) <= 2),
)
query_pairs = st.lists(
    st.tuples(
        st.one_of(
            st.sampled_from(
                ("token", "v", "min", "waitMs", "minEvents", "minSvcEvents", "route", "merge")
            ),
            st.text(st.characters(codec="utf-8"), max_size=5).filter(
                lambda name: "fault" not in name
            ),
        ),
        query_values,
    ),
    max_size=3,
)


def quoted_query(pairs: Sequence[tuple[str, str]]) -> str:
    return "&".join(
        f"{urllib.parse.quote(name, safe='')}={urllib.parse.quote(value, safe='')}"
        for name, value in pairs
    )


@st.composite
def requests(draw: st.DrawFn) -> Request:
    if draw(st.integers(0, 3)):  # mostly a route with its own method
        method, path = draw(st.sampled_from(ROUTE_TABLE))
    else:
        method = draw(st.sampled_from(METHODS))
        path = draw(st.one_of(st.sampled_from(KNOWN_PATHS), unknown_paths))
    body = draw(bodies(path))
    if draw(st.booleans()) and path in CLIENT_PATHS:
        path += "/"  # runtime and vendor routes answer with a trailing slash too
    elif not draw(st.integers(0, 9)):
        path += "/"
    pairs = draw(query_pairs)
    ask = draw(fault_asks) if not draw(st.integers(0, 2)) else None
    headers: list[tuple[str, str]] = [AUTH] if draw(st.booleans()) else []
    if ask is not None and ask.source == "query":
        pairs = [("fault", ask.mode), *ask.params, *pairs]
    elif ask is not None:
        headers.append(("X-Svc-Test-Fault", ask.mode))
        headers.extend((PARAM_HEADERS[name], value) for name, value in ask.params)
    query = quoted_query(pairs)
    headers.extend(draw(st.lists(st.one_of(auth_headers, other_headers), max_size=4)))
    if draw(st.booleans()):
        headers.append(("Content-Type", draw(content_types)))
    if draw(st.booleans()):
        encoding = draw(content_encodings)
        headers.append(("Content-Encoding", encoding))
        if draw(st.booleans()) and encoding.strip() in ("gzip", "x-gzip"):
            body = gzip.compress(body)
        elif draw(st.booleans()) and encoding.strip() == "deflate":
            body = zlib.compress(body)
    unique: dict[str, tuple[str, str]] = {}
    for name, value in headers:
        unique.setdefault(name.lower(), (name, value))
    return Request(
        method=method,
        path=path + ("?" + query if query else ""),
        body=body,
        headers=tuple(unique.values()),
        fault=ask,
    )


@dataclass(frozen=True)
class FaultAnswer:
    """How a fault the request asked for answers it, as the README describes."""

    status: int
    json_body: bool = True


def asked_answer(ask: FaultAsk, selector: str) -> FaultAnswer | None:
    """The answer a valid per-request fault gives; a 400 for an invalid one; None when the
    route's own handler answers (none, delay, slow_body)."""
    mode = ask.mode.strip()
    if mode == "none":
        return None
    parsed: dict[str, int] = {}
    for name, raw in ask.params:
        try:
            parsed[name] = int(raw.strip())
        except ValueError:
            return FaultAnswer(400)
    status = parsed.get("status")
    if (
        mode not in ALL_MODES
        or parsed.get("delayMs", 0) < 0
        or parsed.get("retryAfter", 0) < 0
        or (status is not None and not 200 <= status <= 599)
        or (mode == "status" and status is None)
    ):
        return FaultAnswer(400)
    if mode in DELAYING_MODES:
        return None
    defaults = {"401": 401, "429": 429, "500": 500, "status": 500, "invalid_json": 200}
    if mode == "quota_limited":
        if selector in ("evaluate", "flags"):
            return FaultAnswer(200)
        return FaultAnswer(status or 402)
    return FaultAnswer(status or defaults[mode], json_body=mode != "invalid_json")


class TestRandomTraffic:
    @settings(PROPERTIES, max_examples=500)
    @given(request=requests())
    @example(  # a few thousand levels deep: refused by the parser, with a 400
        request=Request("POST", "/v1/flags/evaluate", nested_lists(3000).encode(), (AUTH,))
    )
    @example(  # 1000 deep inside an event: accepted, and must come back out of /_test/events
        request=Request(
            "POST",
            "/v1/capture",
            encode({"events": [{"type": "event", "deep": Deep(1000)}]}),
            (AUTH,),
        )
    )
    @example(
        request=Request(
            "POST", "/batch", encode({"api_key": "k", "batch": [{"x": Deep(3000)}]}), ()
        )
    )
    def test_no_unintended_5xx_always_json_and_health_answers(
        self, stub: Stub, request: Request
    ) -> None:
        """Any method, path, query, headers and body: a 5xx only when a fault asked for it
        (with the status it asked for), JSON always, and the control plane answers after."""
        stub.start_example()
        answer = stub.send(request.method, request.path, request.body, request.headers)

        selector = request.selector
        fault = asked_answer(request.fault, selector) if request.fault and selector else None
        plane = "control" if request.path.startswith(("/_test/", "/health")) else "unknown"
        event(f"{selector or plane} {answer.status}" + (" (fault)" if fault else ""))
        intended = fault is not None and answer.status == fault.status
        assert answer.status < 500 or intended, stub.why(answer, "an unintended 5xx")
        assert is_json_type(answer), stub.why(answer, "not application/json")
        no_body = request.method == "HEAD" or (answer.status in (204, 304) and not answer.body)
        if not no_body and (fault is None or fault.json_body):
            assert answer.parses(), stub.why(answer, "a body that is not JSON")
        if fault is not None and not refused_before_routing(answer):
            assert answer.status == fault.status, stub.why(answer, "the asked fault's status")
        assert_control_plane_answers(stub)


def refused_before_routing(answer: Answer) -> bool:
    """aiohttp refused the request before any route (and so any fault) saw it: a request it
    cannot parse (an undecodable Content-Encoding, say), or an Expect it does not know."""
    if answer.status == 417:
        return True
    if answer.status != 400 or not answer.parses():
        return False
    body = answer.json()
    return isinstance(body, dict) and str(body.get("message", "")).startswith("request: ")


# ---------------------------------------------------------------------------------------------
# Strategies: fault arming documents (TestFaultArming)
# ---------------------------------------------------------------------------------------------

junk_json = st.one_of(json_values, json_text)
numbers = st.one_of(
    st.integers(-5, 1000),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
)
modes = st.sampled_from((*ALL_MODES, "none"))
applies = st.one_of(
    st.sampled_from((*SELECTORS, "all")),
    st.lists(st.one_of(st.sampled_from((*SELECTORS, "all")), json_text), max_size=4),
)


def step_fields(junk: st.SearchStrategy[Any]) -> dict[str, st.SearchStrategy[Any]]:
    return {
        "mode": st.one_of(modes, junk),
        "delayMs": st.one_of(numbers, junk),
        "status": st.one_of(st.integers(100, 700), numbers, junk),
        "body": values_or_deep,
        "retryAfter": st.one_of(numbers, junk),
    }


steps = st.one_of(
    modes,
    json_text,
    st.fixed_dictionaries({}, optional=step_fields(junk_json)).flatmap(
        lambda step: st.dictionaries(json_text, json_values, max_size=1).map(
            lambda extra: {**extra, **step}
        )
    ),
    json_values,
)
any_arming = st.tuples(
    st.fixed_dictionaries(
        {},
        optional={
            **step_fields(junk_json),
            "sequence": st.one_of(st.lists(steps, max_size=4), junk_json),
            "applyTo": st.one_of(applies, junk_json),
            "ttlRequests": st.one_of(numbers, junk_json),
            "probability": st.one_of(st.floats(-1, 2), numbers, junk_json),
            "seed": st.one_of(numbers, junk_json),
        },
    ),
    st.dictionaries(json_text, json_values, max_size=1),
).map(lambda parts: {**parts[1], **parts[0]})


@st.composite
def valid_steps(draw: st.DrawFn) -> dict[str, Any]:
    mode = draw(st.sampled_from(ALL_MODES))
    step: dict[str, Any] = {"mode": mode}
    if mode == "status" or draw(st.booleans()):
        step["status"] = draw(st.integers(200, 599))
    if draw(st.booleans()):
        step["delayMs"] = draw(st.integers(0, 2**40))
    if draw(st.booleans()):
        step["retryAfter"] = draw(st.integers(0, 3600))
    if draw(st.booleans()):
        step["body"] = draw(json_values)
    return step


@st.composite
def valid_armings(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.booleans()):
        document = draw(valid_steps())
        if draw(st.booleans()):
            document["ttlRequests"] = draw(st.integers(1, 2**40))
    else:
        document = {
            "sequence": draw(
                st.lists(
                    st.one_of(st.sampled_from((*ALL_MODES[:2], "none")), valid_steps()),
                    min_size=1,
                    max_size=4,
                )
            )
        }
    if draw(st.booleans()):
        document["applyTo"] = draw(
            st.one_of(
                st.sampled_from((*SELECTORS, "all")),
                st.lists(st.sampled_from((*SELECTORS, "all")), min_size=1, max_size=3),
            )
        )
    if draw(st.booleans()):
        document["probability"] = draw(st.floats(0, 1, exclude_min=True))
        document["seed"] = draw(st.integers(-(2**62), 2**62))
    return document


def field_names(document: object) -> set[str]:
    """Every name a 400 may start with: the fields written (or known), and sequence steps."""
    names = {"body", *ARMING_FIELDS}
    if not isinstance(document, dict):
        return names
    names.update(document)
    sequence = document.get("sequence")
    if isinstance(sequence, list):
        for index, step in enumerate(sequence):
            names.add(f"sequence[{index}]")
            step_keys = set(step) if isinstance(step, dict) else set()
            names.update(f"sequence[{index}].{key}" for key in step_keys | set(STEP_FIELDS))
    return names


class TestFaultArming:
    @settings(PROPERTIES, max_examples=400)
    @given(
        documents=st.lists(
            st.one_of(
                valid_armings().map(lambda document: (document, True)),
                any_arming.map(lambda document: (document, False)),
                json_values.map(lambda document: (document, False)),
            ),
            min_size=1,
            max_size=4,
        )
    )
    # 300 deep is within what the parser reads: armed, or refused with a 400, never a 500
    @example(documents=[({"mode": "500", "body": Deep(300)}, False)])
    def test_arming_answers_200_or_400_naming_the_field(
        self, stub: Stub, documents: list[tuple[object, bool]]
    ) -> None:
        """Valid documents are armed (200) and listed; anything else is a 400 whose message
        starts with a field's name; never a 5xx; /health answers after."""
        stub.start_example()
        armed: list[int] = []
        for document, valid in documents:
            answer = stub.send("POST", "/_test/fault", encode(document))
            event(f"arming {answer.status}")
            assert answer.status in (200, 400), stub.why(answer, f"arming {document!r}")
            assert is_json_type(answer), stub.why(answer, "not application/json")
            body = answer.json()
            if valid:
                assert answer.status == 200, stub.why(answer, f"a valid arming {document!r}")
            if answer.status == 400:
                message = body["message"]
                assert body["ok"] is False
                assert any(message.startswith(f"{name}:") for name in field_names(document)), (
                    f"the 400 names no field first: {message!r}"
                )
            elif body["fault"] is None:
                assert isinstance(document, dict)
                assert document.get("mode") == "none"
                armed.clear()
            else:
                armed.append(body["fault"]["id"])

        listed = stub.send("GET", "/_test/fault")
        assert listed.status == 200, stub.why(listed, "GET /_test/fault")
        assert is_json_type(listed), stub.why(listed, "not application/json")
        listed_ids = [fault["id"] for fault in listed.json()["armed"]]
        assert listed_ids == armed, f"armed {armed}, but GET /_test/fault lists {listed_ids}"
        health = stub.send("GET", "/health")
        assert (health.status, health.json()) == (200, {"ok": True}), stub.why(health, "/health")
        cleared = stub.send("DELETE", "/_test/fault")
        assert (cleared.status, cleared.json()) == (200, {"ok": True, "armed": []}), str(cleared)


# ---------------------------------------------------------------------------------------------
# Strategies: control sequences (TestControlSequences)
# ---------------------------------------------------------------------------------------------

small_statuses = st.one_of(
    st.sampled_from((200, 400, 402, 404, 418, 500, 502, 503, 504)), st.integers(400, 599)
)


@st.composite
def answering_steps(draw: st.DrawFn) -> dict[str, Any]:
    """A fault step that answers (a small delay for delay and slow_body)."""
    mode = draw(st.sampled_from((*ANSWERING_MODES, *DELAYING_MODES)))
    step: dict[str, Any] = {"mode": mode}
    if mode == "status" or (mode != "quota_limited" and draw(st.booleans())):
        step["status"] = draw(small_statuses)
    step["delayMs"] = draw(st.integers(0, 5))
    if mode == "429" and draw(st.booleans()):
        step["retryAfter"] = draw(st.integers(0, 5))
    return step


@st.composite
def safe_armings(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.booleans()):
        document = draw(answering_steps())
        if draw(st.booleans()):
            document["ttlRequests"] = draw(st.integers(1, 3))
    else:
        sequence = draw(
            st.lists(st.one_of(st.just("none"), answering_steps()), min_size=1, max_size=4)
        )
        document = {"sequence": sequence, "delayMs": 1}
    if draw(st.booleans()):
        document["applyTo"] = draw(
            st.one_of(
                st.sampled_from((*SELECTORS, "all")),
                st.lists(st.sampled_from(SELECTORS), min_size=1, max_size=3, unique=True),
            )
        )
    if draw(st.booleans()):
        document["probability"] = draw(st.floats(0.1, 1))
        document["seed"] = draw(st.integers(0, 1000))
    return document


flag_keys = st.text(st.characters(codec="utf-8"), min_size=1, max_size=8)
finite_floats = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def fixture_flags(draw: st.DrawFn) -> dict[str, Any]:
    declared = draw(
        st.sampled_from(("boolean", "string", "number", "integer", "float", "object", "json"))
    )
    value = draw(
        {
            "boolean": st.booleans(),
            "string": utf8_text,
            "number": st.one_of(small_ints, finite_floats),
            "integer": small_ints,
            "float": finite_floats,
            "object": st.one_of(
                st.dictionaries(utf8_text, readable_deep, max_size=3),
                st.lists(readable_deep, max_size=3),
            ),
            "json": st.dictionaries(utf8_text, json_values, max_size=3),
        }[declared]
    )
    flag: dict[str, Any] = {"type": declared, "value": value}
    optional = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "enabled": st.booleans(),
                "variant": st.one_of(st.none(), utf8_text),
                "payload": readable_deep,
                "metadata": st.fixed_dictionaries(
                    {}, optional={"version": small_ints, "id": small_ints}
                ),
                "reason": st.text(min_size=1, max_size=8),
                "matchAttribute": st.dictionaries(utf8_text, json_values, max_size=2),
                "matchTargetingKey": st.text(min_size=1, max_size=5),
            },
        )
    )
    flag.update(optional)
    return flag


valid_fixture_documents = st.fixed_dictionaries(
    {"flags": st.dictionaries(flag_keys, fixture_flags(), max_size=4)}
)


@st.composite
def invalid_fixture_documents(draw: st.DrawFn) -> object:
    """A valid document with one thing wrong: it must be refused whole."""
    document = draw(valid_fixture_documents)
    flags: dict[str, Any] = document["flags"]
    key = draw(flag_keys)
    flag = draw(fixture_flags())
    breakage = draw(
        st.sampled_from(("unknown", "type", "value", "missing", "metadata", "top", "flags"))
    )
    if breakage == "unknown":
        flag[draw(st.sampled_from(("valeu", "Type", "extra")))] = 1
    elif breakage == "type":
        flag["type"] = draw(st.sampled_from(("bool", "str", "", "Boolean")))
    elif breakage == "value":
        flag["value"] = {
            "boolean": "true",
            "string": 5,
            "number": "5",
            "integer": 1.5,
            "float": True,
            "object": "{}",
            "json": 3,
        }[flag["type"]]
    elif breakage == "missing":
        del flag[draw(st.sampled_from(("type", "value")))]
    elif breakage == "metadata":
        flag["metadata"] = draw(st.sampled_from(({"version": "7"}, {"id": 1.5}, {"other": 1}, [])))
    elif breakage == "top":
        document["extra"] = {}
    else:
        return {"flags": draw(st.sampled_from(([], "x", 3, True)))}
    flags[key] = flag
    return document


yaml_scalars = st.one_of(
    st.integers(-1000, 1000).map(str),
    st.sampled_from(("true", "false", "yes", "no", "null", "~", ".inf", ".nan", "1e3", "0x1F")),
    st.from_regex(r"\A[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}\Z"),
    st.from_regex(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{1,2}:[0-9]{2}:[0-9]{2}Z?\Z"),
    st.from_regex(r"\A[a-z][a-z0-9 ]{0,8}\Z"),
    st.sampled_from(("[1, 2]", "{a: 1}", "!!binary aGk=", "'quoted'", '"x"', "&a 1", "*a")),
)
yaml_flags = st.lists(
    st.tuples(
        st.from_regex(r"\A[a-z][a-z0-9-]{0,8}\Z"),
        st.sampled_from(("boolean", "string", "number", "integer", "object", "json", "date")),
        yaml_scalars,
        st.one_of(
            st.none(),
            st.tuples(st.sampled_from(("enabled", "variant", "payload", "reason")), yaml_scalars),
        ),
    ),
    max_size=3,
)


def yaml_text(flags: list[tuple[str, str, str, tuple[str, str] | None]]) -> str:
    lines = ["flags:"] if flags else ["flags: {}"]
    for key, declared, value, extra in flags:
        lines += [f"  {key}:", f"    type: {declared}", f"    value: {value}"]
        if extra is not None:
            lines.append(f"    {extra[0]}: {extra[1]}")
    return "\n".join(lines) + "\n"


@st.composite
def vendor_records(draw: st.DrawFn, valid: bool) -> dict[str, Any]:
    record: dict[str, Any] = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "enabled": st.booleans(),
                "variant": st.one_of(st.none(), utf8_text),
                "reason": json_values,
                "metadata": st.fixed_dictionaries(
                    {},
                    optional={
                        "version": small_ints,
                        "id": small_ints,
                        "payload": readable_deep.map(encoded_text),
                    },
                ),
            },
        )
    )
    if not valid:
        name, wrong = draw(
            st.sampled_from(
                (
                    ("enabled", "yes"),
                    ("variant", 3),
                    ("metadata", []),
                    ("metadata", {"version": "1"}),
                    ("metadata", {"payload": "{not json"}),
                    ("metadata", {"payload": {"a": 1}}),
                )
            )
        )
        record[name] = wrong
    return record


vendor_bodies = st.builds(
    lambda flags, extra: {**extra, "flags": flags},
    st.dictionaries(flag_keys, vendor_records(valid=True), max_size=4),
    st.fixed_dictionaries(
        {}, optional={"errorsWhileComputingFlags": st.booleans(), "quotaLimited": st.none()}
    ),
)
invalid_vendor_bodies = st.one_of(
    st.builds(
        lambda flags, key, bad: {"flags": {**flags, key: bad}},
        st.dictionaries(flag_keys, vendor_records(valid=True), max_size=3),
        flag_keys,
        st.one_of(vendor_records(valid=False), st.sampled_from((1, "x", [], True))),
    ),
    st.sampled_from(({}, {"flags": []}, {"flags": "x"})),
)

# Query values for the read routes; a wait is only ever a few ms (a single digit of any script).
numeric_text = st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=3)
wait_values = st.one_of(
    st.integers(0, 20).map(str),
    st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=1),
    st.text(st.characters(categories=["Lu", "Ll", "Po"]), min_size=1, max_size=3),
)
count_values = st.one_of(st.integers(0, 3).map(str), numeric_text, junk_words)


def wait_query(names: Sequence[str]) -> st.SearchStrategy[list[tuple[str, str]]]:
    return st.lists(
        st.one_of(
            st.tuples(st.sampled_from(names), count_values),
            st.tuples(st.just("waitMs"), wait_values),
        ),
        max_size=2,
        unique_by=lambda pair: pair[0],
    )


@dataclass(frozen=True)
class ClientCall:
    """A runtime or vendor request with a body the route may or may not accept."""

    selector: str
    method: str
    path: str
    document: object
    headers: tuple[tuple[str, str], ...]


event_objects = st.dictionaries(
    st.sampled_from(("type", "targetingKey", "flagKey", "value", "properties")) | utf8_text,
    values_or_deep,
    max_size=3,
)
maybe_auth = st.sampled_from(((AUTH,), (("x-api-key", "k"),), ()))
targeting_keys = st.one_of(st.just("u1"), flag_keys, json_values)
evaluate_documents = st.fixed_dictionaries(
    {"targetingKey": targeting_keys},
    optional={
        "flagKeys": st.one_of(st.lists(flag_keys, max_size=3), json_values),
        "attributes": st.one_of(
            st.dictionaries(utf8_text, values_or_deep, max_size=2), json_values
        ),
    },
)
capture_documents = st.fixed_dictionaries(
    {"events": st.one_of(st.lists(event_objects, max_size=3), json_values)}
)
register_documents = st.fixed_dictionaries(
    {"targetingKey": targeting_keys},
    optional={"kind": json_values, "properties": st.one_of(event_objects, json_values)},
)
flags_documents = st.fixed_dictionaries(
    {"api_key": st.sampled_from(("phc_x", ""))},
    optional={
        "distinct_id": json_values,
        "flag_keys_to_evaluate": st.one_of(st.lists(flag_keys, max_size=3), json_values),
        "person_properties": st.one_of(event_objects, json_values),
    },
)
batch_documents = st.fixed_dictionaries(
    {
        "api_key": st.sampled_from(("phc_x", "")),
        "batch": st.one_of(st.lists(event_objects, max_size=3), json_values),
    }
)
client_calls = st.one_of(
    st.builds(
        ClientCall,
        st.just("evaluate"),
        st.just("POST"),
        st.just("/v1/flags/evaluate"),
        evaluate_documents,
        maybe_auth,
    ),
    st.builds(
        ClientCall,
        st.just("capture"),
        st.just("POST"),
        st.just("/v1/capture"),
        capture_documents,
        maybe_auth,
    ),
    st.builds(
        ClientCall,
        st.just("register"),
        st.just("POST"),
        st.just("/v1/targets/register"),
        register_documents,
        maybe_auth,
    ),
    st.builds(
        ClientCall,
        st.just("flags"),
        st.just("POST"),
        st.sampled_from(("/flags", "/flags/?v=2", "/flags?v=4")),
        flags_documents,
        st.just(()),
    ),
    st.builds(
        ClientCall,
        st.just("definitions"),
        st.just("GET"),
        st.sampled_from(
            (
                "/flags/definitions?token=phc_x",
                "/api/feature_flag/local_evaluation/?token=phc_x&send_cohorts",
            )
        ),
        st.none(),
        maybe_auth,
    ),
    st.builds(
        ClientCall,
        st.just("batch"),
        st.just("POST"),
        st.just("/batch"),
        batch_documents,
        st.just(()),
    ),
)
# Requests each route accepts (unless a fault is armed): what gets recorded.
readable_objects = st.dictionaries(utf8_text, readable_deep, max_size=3)
well_formed_calls = st.one_of(
    st.builds(
        ClientCall,
        st.just("evaluate"),
        st.just("POST"),
        st.just("/v1/flags/evaluate"),
        st.fixed_dictionaries(
            {"targetingKey": flag_keys},
            optional={
                "flagKeys": st.lists(
                    st.one_of(st.sampled_from(("new-checkout", "checkout-v2")), flag_keys),
                    max_size=3,
                ),
                "attributes": readable_objects,
            },
        ),
        st.just((AUTH,)),
    ),
    st.builds(
        ClientCall,
        st.just("capture"),
        st.just("POST"),
        st.just("/v1/capture"),
        st.fixed_dictionaries({"events": st.lists(readable_objects, max_size=3)}),
        st.just((("x-api-key", "k"),)),
    ),
    st.builds(
        ClientCall,
        st.just("register"),
        st.just("POST"),
        st.just("/v1/targets/register/"),
        st.fixed_dictionaries(
            {"targetingKey": flag_keys},
            optional={"kind": utf8_text, "properties": readable_objects},
        ),
        st.just((AUTH,)),
    ),
    st.builds(
        ClientCall,
        st.just("flags"),
        st.just("POST"),
        st.just("/flags?v=2"),
        st.fixed_dictionaries(
            {"token": st.just("phc_x")},
            optional={"distinct_id": flag_keys, "person_properties": readable_objects},
        ),
        st.just(()),
    ),
    st.builds(
        ClientCall,
        st.just("definitions"),
        st.just("GET"),
        st.just("/flags/definitions?token=phc_x"),
        st.none(),
        st.just((AUTH,)),
    ),
    st.builds(
        ClientCall,
        st.just("batch"),
        st.just("POST"),
        st.just("/batch/"),
        st.fixed_dictionaries(
            {"api_key": st.just("phc_x"), "batch": st.lists(readable_objects, max_size=3)}
        ),
        st.just(()),
    ),
)
# What each route reads, for random traffic to reach past the first check.
ROUTE_DOCUMENTS: Mapping[str, st.SearchStrategy[Any]] = {
    "/v1/flags/evaluate": evaluate_documents,
    "/v1/capture": capture_documents,
    "/v1/targets/register": register_documents,
    "/flags": flags_documents,
    "/batch": batch_documents,
    "/_test/fault": safe_armings(),
    "/_test/fixtures": valid_fixture_documents,
    "/_test/flags": vendor_bodies,
}


def is_unclaimed(path: str) -> bool:
    """No route claims POST to this path, and it is not on the control plane."""
    plain = urllib.parse.unquote(path).rstrip("/")
    return not plain.startswith("/_test") and plain not in (*CLIENT_PATHS, "/health")


@dataclass
class ArmedModel:
    """What we know of one armed fault: where it fires and what it can answer."""

    routes: frozenset[str]
    statuses: frozenset[int]
    invalid_json: bool
    persistent: bool


def step_statuses(step: object, shared_status: object) -> tuple[set[int], bool]:
    """The statuses a step can answer with (empty: the route answers) and if it is not JSON."""
    if isinstance(step, str):
        step = {"mode": step}
    assert isinstance(step, dict)
    mode = step.get("mode")
    status = step.get("status", shared_status)
    if mode == "quota_limited":
        return {200, status or 402}, False
    defaults = {"401": 401, "429": 429, "500": 500, "status": 500, "invalid_json": 200}
    if mode in defaults:
        return {status or defaults[mode]}, mode == "invalid_json"
    return set(), False


def routes_of(document: Mapping[str, Any]) -> frozenset[str]:
    applied = document.get("applyTo", "all")
    names = [applied] if isinstance(applied, str) else applied
    return frozenset(SELECTORS) if "all" in names else frozenset(names)


class ControlSequence(RuleBasedStateMachine):
    """Control operations and client requests in any order, against a model of the state."""

    target: ClassVar[Stub]

    def __init__(self) -> None:
        super().__init__()
        self.stub = self.target
        self.stub.start_example()
        self.armed: dict[int, ArmedModel] = {}
        self.counts = {"events": 0, "svcEvents": 0, "targets": 0}
        self.statuses: list[int] = []  # every recorded client request's status, in order
        if self.stub.default_keys is None:
            self.stub.default_keys = self.served_keys()
        self.served: frozenset[str] = self.stub.default_keys

    # -- helpers ---------------------------------------------------------------------------

    def json_answer(self, answer: Answer, what: str, allowed: Sequence[int]) -> Any:
        assert answer.status in allowed, self.stub.why(answer, what)
        assert is_json_type(answer), self.stub.why(answer, f"{what}: not application/json")
        assert answer.parses(), self.stub.why(answer, f"{what}: not JSON")
        return answer.json()

    def served_keys(self) -> frozenset[str]:
        """Every served flag key, from evaluate with no flagKeys (bypassing armed faults)."""
        answer = self.stub.send_json(
            "POST", "/v1/flags/evaluate", {"targetingKey": "probe"}, (AUTH, NO_FAULT)
        )
        self.statuses.append(answer.status)
        body = self.json_answer(answer, "evaluate every flag", (200,))
        return frozenset(decision["flagKey"] for decision in body["decisions"])

    def check_faults(self) -> None:
        """Only faults armed since the last clear are listed, and none that stays armed is
        missing (ttlRequests and sequences run out as requests arrive)."""
        answer = self.stub.send("GET", "/_test/fault")
        listed = self.json_answer(answer, "GET /_test/fault", (200,))
        ids = {fault["id"] for fault in listed["armed"]}
        assert ids <= set(self.armed), f"armed {ids}, but only {set(self.armed)} were armed"
        persistent = {key for key, fault in self.armed.items() if fault.persistent}
        assert persistent <= ids, f"{persistent - ids} went missing"

    def check_recorded(self) -> None:
        """What was recorded is exactly what the answers said was accepted."""
        answer = self.stub.send("GET", "/_test/events")
        events = self.json_answer(answer, "GET /_test/events", (200,))
        assert {name: len(events[name]) for name in self.counts} == self.counts
        answer = self.stub.send("GET", "/_test/requests")
        log = self.json_answer(answer, "GET /_test/requests", (200,))
        assert [entry["status"] for entry in log["requests"]] == self.statuses

    def check_served(self) -> None:
        assert self.served_keys() == self.served

    # -- control operations ----------------------------------------------------------------

    @rule()
    def reset(self) -> None:
        answer = self.stub.send("POST", "/_test/reset")
        assert self.json_answer(answer, "reset", (200,)) == {"ok": True}
        self.armed.clear()
        self.counts = dict.fromkeys(self.counts, 0)
        self.statuses.clear()
        assert self.stub.default_keys is not None
        self.served = self.stub.default_keys
        self.check_faults()  # none armed
        self.check_recorded()  # nothing recorded
        self.check_served()  # the start-up fixtures

    @rule(document=safe_armings())
    def arm(self, document: dict[str, Any]) -> None:
        answer = self.stub.send_json("POST", "/_test/fault", document)
        body = self.json_answer(answer, f"arming {document!r}", (200,))
        sequence = document.get("sequence")
        statuses: set[int] = set()
        invalid_json = False
        for step in sequence if sequence is not None else [document]:
            answered, not_json = step_statuses(step, document.get("status"))
            statuses |= answered
            invalid_json |= not_json
        self.armed[body["fault"]["id"]] = ArmedModel(
            routes=routes_of(document),
            statuses=frozenset(statuses),
            invalid_json=invalid_json,
            persistent=sequence is None and "ttlRequests" not in document,
        )
        self.check_faults()

    @rule(how=st.sampled_from(("DELETE", "none")))
    def clear_faults(self, how: str) -> None:
        if how == "DELETE":
            answer = self.stub.send("DELETE", "/_test/fault")
            assert self.json_answer(answer, "clear", (200,)) == {"ok": True, "armed": []}
        else:
            answer = self.stub.send_json("POST", "/_test/fault", {"mode": "none"})
            assert self.json_answer(answer, "mode none", (200,)) == {"ok": True, "fault": None}
        self.armed.clear()
        self.check_faults()

    @rule(data=st.data())
    def disarm(self, data: st.DataObject) -> None:
        known = sorted(self.armed)
        raw = data.draw(
            st.one_of(st.sampled_from(known).map(str), numeric_text, junk_words.filter(bool))
            if known
            else st.one_of(numeric_text, junk_words.filter(bool)),
            label="id",
        )
        path = "/_test/fault/" + urllib.parse.quote(raw, safe="")
        answer = self.stub.send("DELETE", path)
        what = f"DELETE {path}"
        number = int(raw) if raw.isascii() and raw.isdigit() else None
        fault = self.armed.get(number) if number is not None else None
        if fault is not None and fault.persistent:
            self.json_answer(answer, what, (200,))
        elif fault is not None or raw.isdigit():
            # it may have run out; or digits of another script, an id to int() but (now) not
            # to the stub
            self.json_answer(answer, what, (200, 404))
        else:  # no such fault (and `/_test/fault/` + "/" routes nowhere)
            self.json_answer(answer, what, (404, 405))
        if answer.status == 200:
            self.armed.pop(int(raw), None)  # a 200 for what int() cannot read fails here
        self.check_faults()

    @rule(
        document=st.one_of(
            valid_fixture_documents.map(lambda doc: (doc, True)),
            invalid_fixture_documents().map(lambda doc: (doc, False)),
        ),
        as_yaml=st.booleans(),
        merge=st.sampled_from(("", "?merge=true", "?merge=1", "?merge=false", "?merge=maybe")),
    )
    def set_fixtures(self, document: tuple[object, bool], as_yaml: bool, merge: str) -> None:
        doc, valid = document
        text = yaml.safe_dump(doc) if as_yaml and not has_deep(doc) else None
        as_yaml = text is not None and yaml.safe_load(text) == doc  # what PyYAML round-trips
        body = text.encode() if as_yaml and text is not None else encode(doc)
        content_type = "application/yaml" if as_yaml else "application/json"
        answer = self.stub.send(
            "POST", "/_test/fixtures" + merge, body, (("Content-Type", content_type),)
        )
        what = f"POST /_test/fixtures{merge} {doc!r}"
        event(f"fixtures {'YAML' if as_yaml else 'JSON'} {answer.status}")
        if not valid or merge == "?merge=maybe":
            self.json_answer(answer, what, (400,))
        else:
            # hundreds of levels deep: serving it or refusing it (400) are both consistent
            reply = self.json_answer(answer, what, (200, 400) if has_deep(doc) else (200,))
            if answer.status == 200:
                assert isinstance(doc, dict)
                keys = frozenset(doc["flags"])
                if merge in ("?merge=true", "?merge=1"):
                    keys |= self.served
                assert frozenset(reply["flags"]) == keys
                self.served = keys
        self.check_served()  # after a 400, the previous fixtures

    @rule(flags=yaml_flags, merge=st.booleans())
    def set_fixtures_yaml_text(
        self, flags: list[tuple[str, str, str, tuple[str, str] | None]], merge: bool
    ) -> None:
        text = yaml_text(flags)
        answer = self.stub.send(
            "POST",
            "/_test/fixtures" + ("?merge=true" if merge else ""),
            text.encode(),
            (("Content-Type", "application/yaml"),),
        )
        event(f"fixtures YAML text {answer.status}")
        reply = self.json_answer(answer, f"POST /_test/fixtures (YAML)\n{text}", (200, 400))
        if answer.status == 200:
            keys = frozenset(reply["flags"])
            assert keys == frozenset(key for key, *_ in flags) | (self.served if merge else set())
            self.served = keys
        self.check_served()

    @rule(
        document=st.one_of(
            vendor_bodies.map(lambda doc: (doc, True)),
            invalid_vendor_bodies.map(lambda doc: (doc, False)),
        )
    )
    def set_vendor_flags(self, document: tuple[dict[str, Any], bool]) -> None:
        doc, valid = document
        answer = self.stub.send("POST", "/_test/flags", encode(doc))
        what = f"POST /_test/flags {doc!r}"
        event(f"vendor flags {answer.status}")
        if valid:
            reply = self.json_answer(answer, what, (200, 400) if has_deep(doc) else (200,))
            if answer.status == 200:
                assert frozenset(reply["flags"]) == frozenset(doc["flags"])
                self.served = frozenset(doc["flags"])
        else:
            self.json_answer(answer, what, (400,))
        self.check_served()  # after a 400, the previous flags

    @rule(query=wait_query(("minEvents", "minSvcEvents", "minTargets")))
    def read_events(self, query: list[tuple[str, str]]) -> None:
        path = "/_test/events" + ("?" + quoted_query(query) if query else "")
        body = self.json_answer(self.stub.send("GET", path), f"GET {path}", (200, 400))
        if "events" in body:
            assert {name: len(body[name]) for name in self.counts} == self.counts

    @rule(
        query=wait_query(("min",)),
        route=st.one_of(st.none(), st.sampled_from(SELECTORS), junk_words),
    )
    def read_requests(self, query: list[tuple[str, str]], route: str | None) -> None:
        pairs = [*query, *([("route", route)] if route is not None else [])]
        path = "/_test/requests" + ("?" + quoted_query(pairs) if pairs else "")
        body = self.json_answer(self.stub.send("GET", path), f"GET {path}", (200, 400))
        route = route or None  # `?route=`, empty, is every route, as no `route` is
        if "requests" in body:
            assert all(entry["route"] == route for entry in body["requests"] if route is not None)
            if route is None:
                assert [entry["status"] for entry in body["requests"]] == self.statuses

    # -- client traffic --------------------------------------------------------------------

    @rule(calls=st.lists(st.one_of(well_formed_calls, client_calls), min_size=1, max_size=4))
    def client_requests(self, calls: list[ClientCall]) -> None:
        for call in calls:
            self.client(call)

    def client(self, call: ClientCall) -> None:
        """Send it; no 5xx but an armed fault's, JSON unless invalid_json is armed, and what
        the answer says was accepted is counted as recorded."""
        if call.document is None:
            answer = self.stub.send(call.method, call.path, b"", call.headers)
        else:
            answer = self.stub.send(
                call.method,
                call.path,
                encode(call.document),
                (("Content-Type", "application/json"), *call.headers),
            )
        self.statuses.append(answer.status)
        event(f"{call.selector} {answer.status}")
        faults = [fault for fault in self.armed.values() if call.selector in fault.routes]
        intended = set[int]().union(*(fault.statuses for fault in faults))
        what = f"{call.method} {call.path} {call.document!r}"
        assert answer.status < 500 or answer.status in intended, self.stub.why(
            answer, f"{what}: an unintended 5xx"
        )
        assert is_json_type(answer), self.stub.why(answer, f"{what}: not application/json")
        if not answer.parses():
            assert any(fault.invalid_json for fault in faults), self.stub.why(
                answer, f"{what}: not JSON"
            )
            return
        body = answer.json()
        if answer.status != 200 or not isinstance(body, dict):
            return
        sent = call.document if isinstance(call.document, dict) else {}
        if call.selector == "capture" and body.get("ok") is True:
            assert body["accepted"] == len(sent["events"])
            self.counts["svcEvents"] += body["accepted"]
        elif call.selector == "batch" and body == {"status": 1}:
            self.counts["events"] += len(sent["batch"])
        elif call.selector == "register" and body.get("ok") is True:
            self.counts["targets"] += 1

    @rule(path=unknown_paths.filter(is_unclaimed))
    def unknown_path(self, path: str) -> None:
        answer = self.stub.send("POST", path, b"{}", (AUTH,))
        self.statuses.append(answer.status)
        self.json_answer(answer, f"POST {path}", (404, 405))

    @rule()
    def audit(self) -> None:
        """Everything the control plane reports agrees with the model."""
        self.check_faults()
        self.check_recorded()
        self.check_served()

    # -- what must hold after every step ---------------------------------------------------

    @invariant()
    def health_answers(self) -> None:
        health = self.stub.send("GET", "/health")
        assert self.json_answer(health, "/health", (200,)) == {"ok": True}


class TestControlSequences:
    def test_state_stays_consistent(self, stub: Stub) -> None:
        """Reset, arm, clear, disarm, set fixtures and vendor flags, read what was recorded,
        and client requests, in any order: no unintended 5xx, JSON, /health answers, and the
        control plane agrees with the model (after a reset nothing is armed or recorded; after
        a 400 the previous fixtures are still served)."""

        class Bound(ControlSequence):
            target = stub

        run_state_machine_as_test(
            Bound,
            settings=settings(PROPERTIES, max_examples=100, stateful_step_count=10),
        )
