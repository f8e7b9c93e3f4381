"""Running cases: each in a namespace of its own on the stub (so they run in parallel, and no
reset can cut off another case's request), through the adapter, judged on both sides: what the
library returned, and what the stub recorded."""

from __future__ import annotations

import itertools
import json
import socket
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

from stub.client.calls import recorded_requests
from stub.conformance.cases import Case
from stub.conformance.protocol import ERROR_CODES, Adapter, AdapterError, AdapterInfo
from stub.conformance.stub_driver import Control, case_stub
from stub.keys import REDACTED

Json = dict[str, Any]

API_KEY = "project-api-key_conformance-SECRET-5f1c"
"""The key every case's client is given: no message the library returns may contain it."""
BROWSER_KEY = "svc_public_conformance-SECRET-5f1c"
"""What a browser client (capability `browser`) is given instead: a key of the browser family."""
SECRET = "SECRET-5f1c"
WIRE_WAIT_MS = 5000
"""The longest a case waits for requests it expects to be recorded."""
DELAY_MARGIN_MS = 500
"""Beyond a delay fault's delay: time for a request it held back to end and be recorded."""


class Result(NamedTuple):
    case: Case
    verdict: str
    """PASS, FAIL, WARN (only `measured` differed), SKIP, XFAIL (failed as the adapter
    declares), XPASS (passed though declared to fail: a failure, so the list stays true)."""
    problems: tuple[str, ...]
    duration_s: float
    notes: tuple[str, ...] = ()
    """What the case measured, whatever the verdict (how a client spaced its retries)."""

    @property
    def failed(self) -> bool:
        return self.verdict in ("FAIL", "XPASS")

    def line(self) -> str:
        said = self.problems + self.notes
        detail = f": {self.case.description}: " + "; ".join(said) if said else ""
        detail = safe_text(detail, limit=2000)
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
    judged = _Judged()
    try:
        _judge(run, case, judged)
    except AdapterError as exc:
        judged.hard.append(f"adapter error: {exc}")
    result = _verdict(run, case, judged, time.perf_counter() - started)
    return result._replace(notes=tuple(judged.notes))


class _Judged:
    """What a case found: field mismatches (`problems`), open questions answered otherwise
    (`warnings`), and `hard` failures no declared expected failure may absorb: a throw, a
    leaked key, the adapter or the stub failing."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.warnings: list[str] = []
        self.hard: list[str] = []
        self.notes: list[str] = []


def _verdict(run: Run, case: Case, judged: _Judged, duration_s: float) -> Result:
    problems, warnings = judged.problems, judged.warnings
    if run.strict:
        problems, warnings = problems + warnings, []
    declared = run.info.expected_failures.get(case.id)
    if judged.hard:
        return Result(case, "FAIL", tuple(judged.hard + problems + warnings), duration_s)
    if declared is not None:
        if problems:
            return Result(case, "XFAIL", (declared, *problems), duration_s)
        return Result(case, "XPASS", (f"declared to fail ({declared}) but passed",), duration_s)
    if problems:
        return Result(case, "FAIL", tuple(problems + warnings), duration_s)
    return Result(case, "WARN" if warnings else "PASS", tuple(warnings), duration_s)


def _judge(run: Run, case: Case, judged: _Judged) -> None:
    problems = judged.problems
    with case_stub(run.stub_url, case, namespaces=run.namespaces) as control:
        api_url = case.client.get("apiUrl") or (_nowhere() if case.offline else control.url)
        default_key = BROWSER_KEY if "browser" in run.info.capabilities else API_KEY
        api_key = case.client.get("apiKey", default_key)
        created = run.adapter.create_client(api_url, api_key, case.client.get("options", {}))
        answers: list[Json] = [created]
        if "error" not in created and "id" not in created:
            raise AdapterError(f"POST /clients: answered neither an id nor an error: {created}")
        if "error" in created:
            if case.create is None:
                problems.append(f"create: the client could not be made: {created['error']}")
            else:
                problems += _compare("create", created["error"], case.create)
        else:
            client_id = str(created["id"])
            adapter_failed = False
            try:
                if case.create is not None:
                    wanted = json.dumps(case.create)
                    problems.append(
                        f"create: expected a refusal with {wanted}, the client was made"
                    )
                else:
                    _steps(run.adapter, client_id, case, answers, judged)
                    problems += _wire(control, case)
                    if case.timing is not None:
                        _timing(control, case.timing, judged)
                    judged.hard += _no_secret_sent(control, api_key, case.plane)
            except AdapterError:
                adapter_failed = True  # (a hung adapter would hang the shutdown call too)
                raise
            finally:
                _close(run.adapter, client_id, case, skip_shutdown=adapter_failed)
        judged.hard += _no_secret(answers, api_key)
        judged.problems += _no_host(answers, api_url)


def _steps(
    adapter: Adapter, client_id: str, case: Case, answers: list[Json], judged: _Judged
) -> None:
    for index, step in enumerate(case.steps):
        answer = adapter.command(client_id, step.call, step.args)
        answers.append(answer)
        if step.call == "evaluate":
            answer = _derived(answer)
        label = f"steps[{index}] {step.call}"
        judged.hard += _never_raises(label, answer)
        judged.problems += _compare(label, answer, step.expect)
        judged.warnings += _compare(label, answer, step.measured, measured=True)


VOLATILE = ("requestId", "durationMs", "timestamp", "traceId", "spanId")
"""Metadata that differs on every call: never compared."""


def _derived(answer: Json) -> Json:
    """An evaluate answer with what follows from it: the OpenFeature `errorCode` of its error
    kind (unless the library gave one), and its metadata without volatile keys."""
    derived = dict(answer)
    if derived.get("errorCode") is None:
        derived["errorCode"] = ERROR_CODES.get(str(answer.get("errorKind")))
    metadata = answer.get("metadata")
    if isinstance(metadata, dict):  # volatile keys, and the stub's own alias of the version
        derived["metadata"] = {
            key: value
            for key, value in metadata.items()
            if not key.endswith(VOLATILE) and not key.startswith("svc.")
        }
    return derived


def _never_raises(label: str, answer: Json) -> list[str]:
    """No call of the surface throws: reads return the default, register returns ok=false,
    shutdown swallows its errors."""
    raised = answer.get("raised")
    return [f"{label}: raised {safe_text(raised)} (it must return, never throw)"] if raised else []


def _compare(label: str, got: Json, wanted: Json, *, measured: bool = False) -> list[str]:
    word = "the published clients give" if measured else "expected"
    found = []
    for key, value in wanted.items():
        if key == "errorMessageMustNotContain":  # a directive, not a field
            message = str(got.get("errorMessage") or "")
            found += [f"{label}.errorMessage: holds {part!r}" for part in value if part in message]
            continue
        if key == "reasonOrCode":  # the spec's reason, or OpenFeature's ERROR plus that code
            reason = got.get("reason")
            if reason != value and (reason, got.get("errorCode")) != ("ERROR", value):
                found.append(
                    f'{label}: {word} reason {_shown(value)}, or reason "ERROR" with '
                    f"errorCode {_shown(value)}; got reason {_shown(got.get('reason'))} and "
                    f"errorCode {_shown(got.get('errorCode'))}"
                )
            continue
        actual = got.get(key)
        if not _equal(actual, value):
            found.append(f"{label}.{key}: {word} {_shown(value)}, got {_shown(actual)}")
    return found


def _equal(actual: Any, wanted: Any) -> bool:
    """JSON equality: true is not 1, but 1 is 1.0 (JSON has one number type); with
    `{"oneOf": [...]}` for any of several values and `{"notNull": true}` for any value."""
    if isinstance(wanted, dict) and set(wanted) == {"oneOf"}:
        return any(_equal(actual, one) for one in wanted["oneOf"])
    if isinstance(wanted, dict) and set(wanted) == {"notNull"}:
        return actual is not None
    if isinstance(wanted, dict) and isinstance(actual, dict):
        return wanted.keys() == actual.keys() and all(_equal(actual[k], wanted[k]) for k in wanted)
    if isinstance(wanted, list) and isinstance(actual, list):
        return len(wanted) == len(actual) and all(map(_equal, actual, wanted))
    if _is_number(wanted) and _is_number(actual):
        return bool(actual == wanted)
    return type(actual) is type(wanted) and bool(actual == wanted)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _shown(value: Any) -> str:
    if isinstance(value, dict) and set(value) == {"oneOf"}:
        return "one of " + ", ".join(_shown(one) for one in value["oneOf"])
    if isinstance(value, dict) and set(value) == {"notNull"}:
        return "a value (not null)"
    return safe_text(json.dumps(value))


def safe_text(value: Any, limit: int = 300) -> str:
    """Adapter text made safe for one line of output and for XML: no control characters,
    at most `limit` characters."""
    cleaned = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(value))
    return cleaned if len(cleaned) <= limit else cleaned[:limit] + "..."


def _no_secret_sent(control: Control, api_key: str | None, plane: str) -> list[str]:
    """Nor may any event or target the client sent, nor on the runtime plane any URL it
    called: the key belongs in a header only (the journal shows a key-bearing query parameter
    as `<family>[redacted]`; the vendor's definitions poll carries its token there by design)."""
    recorded = control.get("/_test/events")
    sent = [recorded["events"], recorded["svcEvents"], recorded["targets"]]
    found = []
    if _holds_key(sent, api_key):
        found.append("an event or target the client sent contains the API key")
    journal = control.get("/_test/requests")["requests"] if plane == "runtime" else []
    for entry in journal:
        url = [entry["path"], entry["query"]]
        if _holds_key(url, api_key) or REDACTED in json.dumps(entry["query"]):
            found.append(
                f"the API key travelled in the URL of {entry['method']} {entry['path']} "
                "(it belongs in the Authorization header)"
            )
            break
    return found


def _no_secret(answers: list[Json], api_key: str | None) -> list[str]:
    return (
        ["a message the library returned contains the API key"]
        if _holds_key(answers, api_key)
        else []
    )


def _no_host(answers: list[Json], api_url: str) -> list[str]:
    """The spec: "Error messages and logs never echo the host, key or bearer tokens"."""
    host = urllib.parse.urlsplit(api_url).hostname
    if not host:
        return []
    return [
        f"{label}: holds the host {host!r} (messages never echo the host)"
        for label, message in _messages(answers)
        if host.lower() in message.lower()
    ]


def _messages(answers: list[Json]) -> Iterator[tuple[str, str]]:
    """Every message the library gave: a refusal's, an error's, what it raised."""
    for index, answer in enumerate(answers):
        label = "create" if index == 0 else f"steps[{index - 1}]"
        refusal = answer.get("error")
        if isinstance(refusal, dict) and refusal.get("message"):
            yield f"{label}.error.message", str(refusal["message"])
        for field in ("errorMessage", "raised"):
            if answer.get(field):
                yield f"{label}.{field}", str(answer[field])


def _holds_key(values: object, api_key: str | None) -> bool:
    text = json.dumps(values)
    return (api_key or API_KEY) in text or SECRET in text


def _wire(control: Control, case: Case) -> list[str]:
    """What the stub recorded in the case's namespace against what the case says."""
    wanted = case.wire
    problems = []
    # The stub records a request when it ends: under a delay fault, a client that gave up (and
    # perhaps retried) has moved on while its requests are still being delayed. Wait until
    # every one of them can have ended, or for one more than expected, whichever is first.
    delay_ms = int((case.fault or {}).get("delayMs", 0)) if _delays(case) else 0
    for route, count in wanted.get("requests", {}).items():
        if delay_ms:
            query = f"?route={route}&min={count + 1}&waitMs={delay_ms + DELAY_MARGIN_MS}"
        elif count:
            query = f"?route={route}&min={count}&waitMs={WIRE_WAIT_MS}"
        else:
            query = f"?route={route}"
        sent = len(control.get("/_test/requests" + query)["requests"])
        if sent != count:
            problems.append(f"wire: {count} {route} request(s) expected, {sent} sent")
    for entry in control.get("/_test/requests")["requests"]:  # the key checks' verdict
        if entry.get("warning"):
            problems.append(f"wire: {entry['method']} {entry['path']}: {entry['warning']}")
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


def _timing(control: Control, route: str, judged: _Judged) -> None:
    """How the client spaced its requests to `route` (a note), and whether it waited as long
    as each `Retry-After` asked (a warning if not: the spec is silent on timing)."""
    sent = recorded_requests(control.get(f"/_test/requests?route={route}"))
    for before, after in itertools.pairwise(sent):
        waited = after.arrived_ms - (before.arrived_ms + before.duration_ms)
        asked = "" if before.retry_after is None else f" with Retry-After: {before.retry_after}"
        judged.notes.append(f"{route} sent again {waited:.0f} ms after a {before.status}{asked}")
    verdict = control.get(f"/_test/checks/retry-after?route={route}")  # the stub's words
    if not verdict["passed"]:
        judged.warnings.append(f"timing: {verdict['message']}")


def _delays(case: Case) -> bool:
    return case.fault is not None and case.fault.get("mode") in ("delay", "slow_body")


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


def _close(adapter: Adapter, client_id: str, case: Case, *, skip_shutdown: bool = False) -> None:
    """Shut the client down (unless a step did, or `skip_shutdown`) and forget it; failures
    here are not the case's."""
    try:
        if not skip_shutdown and not any(step.call == "shutdown" for step in case.steps):
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
