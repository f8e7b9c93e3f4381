"""Running cases: each in a namespace of its own on the stub (so they run in parallel, and no
reset can cut off another case's request), through the adapter, judged on both sides: what the
library returned, and what the stub recorded."""

from __future__ import annotations

import json
import secrets
import socket
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, NamedTuple
from xml.etree import ElementTree

from stub.conformance.cases import Case, Step
from stub.conformance.protocol import ERROR_CODES, Adapter, AdapterError, AdapterInfo

Json = dict[str, Any]

API_KEY = "project-api-key_conformance-SECRET-5f1c"
"""The key every case's client is given: no message the library returns may contain it."""
BROWSER_KEY = "svc_public_conformance-SECRET-5f1c"
"""What a browser client (capability `browser`) is given instead: a key of the browser family."""
SECRET = "SECRET-5f1c"
WIRE_WAIT_MS = 5000
"""The longest a case waits for the stub to finish requests its client stopped waiting for."""


class Result(NamedTuple):
    case: Case
    verdict: str
    """PASS, FAIL, WARN (only `measured` differed), SKIP, XFAIL (failed as the adapter
    declares), XPASS (passed though declared to fail: a failure, so the list stays true)."""
    problems: tuple[str, ...]
    duration_s: float

    @property
    def failed(self) -> bool:
        return self.verdict in ("FAIL", "XPASS")

    def line(self) -> str:
        detail = f": {self.case.description}: " + "; ".join(self.problems) if self.problems else ""
        return f"{self.verdict:<5} {self.case.id} ({self.duration_s:.2f} s){detail}"


class Run(NamedTuple):
    """Where the cases run: the stub, the adapter, and how strict the verdicts are."""

    stub_url: str
    adapter: Adapter
    info: AdapterInfo
    strict: bool = False
    namespaces: bool = True
    """False: an older stub without namespaces; cases then run one at a time, after a reset."""


def run_cases(
    run: Run, cases: Sequence[Case], parallel: int, report: Callable[[Result], None]
) -> list[Result]:
    workers = parallel if run.namespaces else 1
    with ThreadPoolExecutor(max(1, workers)) as pool:
        results = []
        for result in pool.map(lambda case: run_case(run, case), cases):
            report(result)
            results.append(result)
    return results


def run_case(run: Run, case: Case) -> Result:
    started = time.perf_counter()
    missing = sorted(case.needs - run.info.capabilities)
    if missing:
        return Result(case, "SKIP", (f"the adapter lacks {', '.join(missing)}",), 0.0)
    try:
        problems, warnings = _judge(run, case)
    except AdapterError as exc:
        problems, warnings = [f"adapter error: {exc}"], []
    return _verdict(run, case, problems, warnings, time.perf_counter() - started)


def _verdict(
    run: Run, case: Case, problems: list[str], warnings: list[str], duration_s: float
) -> Result:
    if run.strict:
        problems, warnings = problems + warnings, []
    declared = run.info.expected_failures.get(case.id)
    if declared is not None:
        if problems:
            return Result(case, "XFAIL", (declared, *problems), duration_s)
        return Result(case, "XPASS", (f"declared to fail ({declared}) but passed",), duration_s)
    if problems:
        return Result(case, "FAIL", tuple(problems + warnings), duration_s)
    return Result(case, "WARN" if warnings else "PASS", tuple(warnings), duration_s)


def _judge(run: Run, case: Case) -> tuple[list[str], list[str]]:
    problems: list[str] = []
    warnings: list[str] = []
    with _case_stub(run, case) as control:
        api_url = case.client.get("apiUrl") or (_nowhere() if case.offline else control.url)
        default_key = BROWSER_KEY if "browser" in run.info.capabilities else API_KEY
        api_key = case.client.get("apiKey", default_key)
        created = run.adapter.create_client(api_url, api_key, case.client.get("options", {}))
        answers: list[Json] = [created]
        if "error" in created:
            if case.create is None:
                problems.append(f"create: the client could not be made: {created['error']}")
            else:
                problems += _compare("create", created["error"], case.create)
        else:
            client_id = str(created["id"])
            try:
                if case.create is not None:
                    wanted = json.dumps(case.create)
                    problems.append(
                        f"create: expected a refusal with {wanted}, the client was made"
                    )
                else:
                    problems += _steps(run.adapter, client_id, case, answers, warnings)
                    problems += _wire(control, case.wire)
            finally:
                _close(run.adapter, client_id, case)
        problems += _no_secret(answers, api_key)
    return problems, warnings


def _steps(
    adapter: Adapter, client_id: str, case: Case, answers: list[Json], warnings: list[str]
) -> list[str]:
    problems = []
    for index, step in enumerate(case.steps):
        answer = adapter.command(client_id, step.call, step.args)
        answers.append(answer)
        if step.call == "evaluate":
            answer = _derived(answer)
        label = f"steps[{index}] {step.call}"
        problems += _never_raises(label, step, answer)
        problems += _compare(label, answer, step.expect)
        warnings += _compare(label, answer, step.measured, measured=True)
    return problems


VOLATILE = ("requestId", "durationMs", "timestamp", "traceId", "spanId")
"""Metadata that differs on every call: never compared."""


def _derived(answer: Json) -> Json:
    """An evaluate answer with what follows from it: the OpenFeature `errorCode` of its error
    kind (unless the adapter gave one), and its metadata without volatile keys."""
    derived = dict(answer)
    if "errorCode" not in derived:
        derived["errorCode"] = ERROR_CODES.get(str(answer.get("errorKind")))
    metadata = answer.get("metadata")
    if isinstance(metadata, dict):
        derived["metadata"] = {
            key: value for key, value in metadata.items() if not key.endswith(VOLATILE)
        }
    return derived


def _never_raises(label: str, step: Step, answer: Json) -> list[str]:
    """No call of the surface throws: reads return the default, register returns ok=false,
    shutdown swallows its errors."""
    raised = answer.get("raised")
    return [f"{label}: raised {raised} (it must return, never throw)"] if raised else []


def _compare(label: str, got: Json, wanted: Json, *, measured: bool = False) -> list[str]:
    word = "the published clients give" if measured else "expected"
    found = []
    for key, value in wanted.items():
        if key == "errorMessageMustNotContain":  # a directive, not a field
            message = str(got.get("errorMessage") or "")
            found += [f"{label}.errorMessage: holds {part!r}" for part in value if part in message]
            continue
        actual = got.get(key)
        if not _equal(actual, value):
            found.append(f"{label}.{key}: {word} {_shown(value)}, got {_shown(actual)}")
    return found


def _equal(actual: Any, wanted: Any) -> bool:
    """JSON equality (true is not 1), with `{"oneOf": [...]}` for any of several values."""
    if isinstance(wanted, dict) and set(wanted) == {"oneOf"}:
        return any(_equal(actual, one) for one in wanted["oneOf"])
    return json.dumps(actual, sort_keys=True) == json.dumps(wanted, sort_keys=True)


def _shown(value: Any) -> str:
    if isinstance(value, dict) and set(value) == {"oneOf"}:
        return "one of " + ", ".join(_shown(one) for one in value["oneOf"])
    return json.dumps(value)


def _no_secret(answers: list[Json], api_key: str | None) -> list[str]:
    secret = api_key or API_KEY
    text = json.dumps(answers)
    leaked = secret in text or SECRET in text
    return ["a message the library returned contains the API key"] if leaked else []


def _wire(control: _Control, wanted: Json) -> list[str]:
    """What the stub recorded in the case's namespace against what the case says."""
    problems = []
    recorded = control.get("/_test/requests")["requests"]
    for entry in recorded:  # the key checks' verdict, as the service would give it
        if entry.get("warning"):
            problems.append(f"wire: {entry['method']} {entry['path']}: {entry['warning']}")
    for route, count in wanted.get("requests", {}).items():
        # A client that gave up on a slow answer has moved on; the stub records the request
        # when it ends: wait for as many as the case expects (a few seconds at most).
        query = f"?route={route}&min={count}&waitMs={WIRE_WAIT_MS}" if count else f"?route={route}"
        sent = len(control.get("/_test/requests" + query)["requests"])
        if sent != count:
            problems.append(f"wire: {count} {route} request(s) expected, {sent} sent")
    events = control.get("/_test/events")
    sent = events["svcEvents"]
    for kind in ("exposures", "signals"):
        if kind in wanted:
            of_kind = [event for event in sent if event.get("type") == kind[:-1]]
            problems += _wire_list(kind, of_kind, wanted[kind])
    if "targets" in wanted:
        problems += _wire_list("targets", events["targets"], wanted["targets"])
    if "events" in wanted:
        problems += _wire_list("events", events["events"], wanted["events"])
    return problems


def _wire_list(kind: str, sent: list[Json], wanted: int | list[Json]) -> list[str]:
    """A count, or records matched on the fields the case names (in any order)."""
    if isinstance(wanted, int):
        if len(sent) != wanted:
            return [f"wire: {wanted} {kind} expected on the wire, {len(sent)} sent"]
        return []
    remaining = list(sent)
    for record in wanted:
        match = next(
            (s for s in remaining if all(_equal(s.get(k), v) for k, v in record.items())), None
        )
        if match is None:
            return [f"wire: no {kind[:-1]} with {json.dumps(record)} among {json.dumps(sent)}"]
        remaining.remove(match)
    if remaining:
        return [f"wire: {len(wanted)} {kind} expected, {len(sent)} sent: {json.dumps(sent)}"]
    return []


def _close(adapter: Adapter, client_id: str, case: Case) -> None:
    """Shut the client down (if no step did) and forget it; failures here are not the case's."""
    try:
        if not any(step.call == "shutdown" for step in case.steps):
            adapter.command(client_id, "shutdown", {})
        adapter.delete_client(client_id)
    except AdapterError:
        pass


def _nowhere() -> str:
    """A loopback address where nothing listens (a port just released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class _Control:
    """The test-control plane of one case's namespace (or the whole stub, without them)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def get(self, path: str) -> Json:
        return self._send("GET", path)

    def post(self, path: str, body: object) -> Json:
        return self._send("POST", path, body)

    def delete(self, path: str) -> Json:
        return self._send("DELETE", path)

    def _send(self, method: str, path: str, body: object = None) -> Json:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                parsed: Json = json.load(answer)
                return parsed
        except urllib.error.HTTPError as exc:
            with exc:
                said = exc.read().decode(errors="replace")[:300]
            raise AdapterError(f"the stub refused {method} {path}: {exc.code} {said}") from None


@contextmanager
def _case_stub(run: Run, case: Case) -> Iterator[_Control]:
    """The case's namespace, with its fixtures served and its fault armed; deleted after."""
    if not run.namespaces:
        control = _Control(run.stub_url)
        control.post("/_test/reset", {})
        if case.fixtures is not None:
            control.post("/_test/fixtures", case.fixtures)
        if case.fault is not None:
            control.post("/_test/fault", case.fault)
        yield control
        return
    name = f"conformance-{case.area}-{secrets.token_hex(4)}"
    stub = _Control(run.stub_url)
    created: Json = {"name": name}
    if case.fixtures is not None:
        created["fixtures"] = case.fixtures
    stub.post("/_test/namespaces", created)
    control = _Control(f"{run.stub_url}/ns/{name}")
    try:
        if case.fault is not None:
            control.post("/_test/fault", case.fault)
        yield control
    finally:
        stub.delete(f"/_test/namespaces/{name}")


def has_namespaces(stub_url: str) -> bool:
    try:
        _Control(stub_url).get("/_test/namespaces")
    except AdapterError:
        return False
    return True


def junit_xml(results: Sequence[Result], adapter_name: str) -> bytes:
    suite = ElementTree.Element(
        "testsuite",
        name=f"svc-stub conformance: {adapter_name}",
        tests=str(len(results)),
        failures=str(sum(result.failed for result in results)),
        skipped=str(sum(result.verdict in ("SKIP", "XFAIL") for result in results)),
        time=f"{sum(result.duration_s for result in results):.3f}",
    )
    for result in results:
        case = ElementTree.SubElement(
            suite,
            "testcase",
            classname=result.case.area,
            name=result.case.name,
            time=f"{result.duration_s:.3f}",
        )
        message = "; ".join(result.problems)
        if result.failed:
            ElementTree.SubElement(case, "failure", message=result.case.description).text = message
        elif result.verdict in ("SKIP", "XFAIL"):
            ElementTree.SubElement(case, "skipped", message=f"{result.verdict}: {message}")
        elif result.verdict == "WARN":
            ElementTree.SubElement(case, "system-out").text = message
    written: bytes = ElementTree.tostring(suite, encoding="utf-8", xml_declaration=True)
    return written


def summary(results: Sequence[Result]) -> str:
    counts = Counter(result.verdict for result in results)
    failed = counts["FAIL"] + counts["XPASS"]
    parts = [f"{counts['PASS'] + counts['WARN']} passed", f"{failed} failed"]
    for verdict, label in (
        ("WARN", "with warnings"),
        ("XFAIL", "expected failures"),
        ("SKIP", "skipped"),
    ):
        if counts[verdict]:
            parts.append(f"{counts[verdict]} {label}")
    return ", ".join(parts)
