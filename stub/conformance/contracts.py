"""The client repositories' contract fixtures (`../shared/contract/client-contracts.md`): each
`evaluate` fixture, and each case of a multi-case file, becomes a kit case run through the
adapter against the stub, with `given.flags` served and `given.fault` armed as the stub's mode.

Strict: a field or mode the stub cannot express makes the fixture a skip that names it, never a
silent drop that could turn a negative case into a pass. Client-side fixtures (context
validation, extensions, operations that are no wire call) are skipped with that reason.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from stub.conformance.cases import Case, Step
from stub.conformance.runner import Result, Run, run_cases

Json = dict[str, Any]

SKIPPED = "skipped-with-documented-limitation"


_TYPES = {"boolean": "boolean", "string": "string", "integer": "number", "float": "number",
          "object": "object"}  # fmt: skip
_FLAG_FIELDS = {"type", "enabled", "variant", "value", "payload", "metadata", "matchAttribute",
                "matchTargetingKey", "reason", "fireweaveReason"}  # fmt: skip
_METADATA_SERVED = {
    "fireweave.flagVersion", "fireweave.errorKind", "fireweave.quotaLimited", "fireweave.payload",
}  # fmt: skip
"""What a runtime client's flag metadata can hold from a stub answer (the rest, such as a vendor
flag id or reason code, only a vendor-shaped backend reports)."""
_CONFIG_OPTIONS = {"featureFlagsRequestTimeoutMs": "timeoutMs",
                   "requireTargetingKey": "requireTargetingKey"}  # fmt: skip
_EXPECT_FIELDS = {"value", "variant", "reason", "errorCode", "errorMessage", "errorKind",
                  "flagMetadata", "errorMessageMustNotContain"}  # fmt: skip
_CLIENT_SIDE_SUITES = {
    "context": "context validation happens in the client, with no wire effect",
    "extensions": (
        "an extension's set-up (release context, exposure queue, global or client context, "
        "domains) is state inside the client that the adapter protocol cannot set; the "
        "exposures and signals it sends reach /v1/capture, where the kit's own exposures "
        "cases check them"
    ),
}


class Unsupported(Exception):
    """What makes a fixture a skip: the field or mode the stub cannot express."""


class Contract(NamedTuple):
    """One fixture (or one case of a multi-case file) and what became of it."""

    id: str
    """`<fixture id>` or, for a case of a multi-case file, `<fixture id>#<case name>`."""
    fixture_id: str
    suite: str
    description: str
    compatibility: Json
    limitations: Json
    case: Case | None
    skipped: str | None
    """Why it is skipped (the field or mode, or 'client-side: ...'); None: it runs."""


def load_contracts(directory: Path) -> list[Contract]:
    if not directory.is_dir():
        raise Unsupported(f"--contracts: {directory} is not a directory")
    contracts: list[Contract] = []
    homes: dict[str, Path] = {}
    for path in sorted(directory.rglob("*.json")):
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise Unsupported(f"{path}: not JSON ({exc})") from None
        if not _is_fixture(document):  # an error table, a schema: not for the kit
            continue
        fixture_id = str(document.get("id", path.stem))
        if fixture_id in homes:
            raise Unsupported(f"{path}: fixture id {fixture_id!r} is also {homes[fixture_id]}")
        homes[fixture_id] = path
        contracts += _contracts(path, document)
    return contracts


def _is_fixture(document: object) -> bool:
    return (
        isinstance(document, dict)
        and "schemaVersion" in document
        and "suite" in document
        and ("when" in document or "cases" in document)
    )


_FIXTURE_KEYS = {"schemaVersion", "id", "suite", "description", "tags", "provisional", "given",
                 "when", "expect", "cases", "compatibility", "limitations"}  # fmt: skip
_CASE_KEYS = {"name", "given", "when", "expect"}


def _contracts(path: Path, document: Json) -> Iterator[Contract]:
    fixture_id = str(document.get("id", path.stem))
    compatibility = dict(document.get("compatibility", {}))
    if "cases" in document:
        names = [case.get("name") for case in document["cases"]]
        if len(set(names)) != len(names):
            raise Unsupported(f"{path}: two cases share a name")
        for case in document["cases"]:
            given = {**document.get("given", {}), **case.get("given", {})}
            yield _contract(
                f"{fixture_id}#{case.get('name', '?')}", document, given, case, compatibility
            )
    else:
        yield _contract(fixture_id, document, document.get("given", {}), document, compatibility)


def _contract(
    contract_id: str, document: Json, given: Json, body: Json, compatibility: Json
) -> Contract:
    description = str(document.get("description", contract_id))
    suite = str(document.get("suite", ""))
    made = partial(
        Contract,
        contract_id,
        str(document.get("id", contract_id.partition("#")[0])),
        suite,
        description,
        compatibility,
        dict(document.get("limitations", {})),
    )
    try:
        return made(_case(contract_id, description, suite, given, body, document), None)
    except Unsupported as exc:
        return made(None, str(exc))


def _case(
    fixture_id: str, description: str, suite: str, given: Json, body: Json, document: Json
) -> Case:
    if document.get("schemaVersion") != 1:
        raise Unsupported(f"schemaVersion: {document.get('schemaVersion')!r} (this kit reads 1)")
    for key in sorted(set(document) - _FIXTURE_KEYS):
        raise Unsupported(f"{key}: not a key of the fixture format")
    for key in sorted(set(body) - _CASE_KEYS) if body is not document else ():
        raise Unsupported(f"cases[].{key}: not a key of the fixture format")
    if suite in _CLIENT_SIDE_SUITES:
        raise Unsupported(f"client-side: {_CLIENT_SIDE_SUITES[suite]}")
    when, expect = body.get("when", {}), body.get("expect", {})
    if when.get("operation") != "evaluate":
        raise Unsupported(f"client-side: operation {when.get('operation')!r} is not a wire call")
    state = given.get("providerState", "READY")
    if state != "READY":
        raise Unsupported(f"given.providerState: {state!r} cannot be set on a remote client")
    for key in sorted(set(given) - {"providerState", "flags", "config", "fault"}):
        raise Unsupported(f"given.{key}: not expressible on the stub")
    client, offline = _client(given.get("config", {}))
    fault, offline_fault = _fault(given.get("fault"))
    return Case(
        area="contracts",
        plane="runtime",
        name=fixture_id,
        description=description,
        needs=frozenset({"evaluate"}),
        fixtures={"flags": _flags(given.get("flags", {}))},
        fault=fault,
        offline=offline or offline_fault,
        client=client,
        create=None,
        steps=(Step("evaluate", _evaluate(when), _expect(expect), {}),),
        wire={},
    )


def _flags(flags: Json) -> Json:
    served = {}
    for key, definition in flags.items():
        unknown = sorted(set(definition) - _FLAG_FIELDS)
        if unknown:
            raise Unsupported(f"given.flags.{key}.{unknown[0]}: the stub cannot serve it")
        flag = {k: v for k, v in definition.items() if k not in ("reason", "fireweaveReason")}
        flag["type"] = _TYPES.get(str(definition.get("type")), str(definition.get("type")))
        flag["reason"] = _served_reason(key, definition)
        served[key] = flag
    return served


def _served_reason(key: str, definition: Json) -> str:
    """The runtime plane's reason for the fixture's decision, as the fixtures' own backends
    give it: their `fireweaveReason`, else DISABLED for a disabled flag, else TARGETING_MATCH
    (the vendor `reason` object only explains a match; the service answers with its own)."""
    reason = definition.get("reason")
    if reason is not None and (
        not isinstance(reason, dict) or set(reason) - {"code", "condition_index", "description"}
    ):
        raise Unsupported(f"given.flags.{key}.reason: the stub cannot serve it")
    if definition.get("fireweaveReason") is not None:
        return str(definition["fireweaveReason"])
    return "DISABLED" if definition.get("enabled") is False else "TARGETING_MATCH"


def _client(config: Json) -> tuple[Json, bool]:
    options = {}
    client: Json = {}
    for key, value in config.items():
        if key in _CONFIG_OPTIONS:
            options[_CONFIG_OPTIONS[key]] = value
        elif key == "projectApiKey":  # the client gets it, so messages are checked against it
            client["apiKey"] = value
        elif key == "localEvaluation" and value is False:
            pass  # remote evaluation, the default: what every adapter's client does
        else:
            raise Unsupported(f"given.config.{key}: not an option the adapter protocol carries")
    client["options"] = options
    return client, False


_FAULT_KEYS = {
    "httpStatus": {"status", "body"},
    "invalidJson": {"body", "status"},
    "delay": {"delayMs"},
    "quotaLimited": {"quotaLimited"},
    "networkError": {"error"},
    "offline": set(),
}
"""What each of the fixtures' fault modes may carry (besides `mode` and `applyTo`): anything
else has no equivalent on the stub, and makes the fixture a skip that names it."""


def _fault(fault: Json | None) -> tuple[Json | None, bool]:
    """The contract page's table, from the fixtures' fault names to the stub's modes."""
    if fault is None:
        return None, False
    mode = fault.get("mode")
    if mode not in _FAULT_KEYS:
        raise Unsupported(f"given.fault.mode: {mode!r} has no equivalent on the stub")
    for key in sorted(set(fault) - _FAULT_KEYS[mode] - {"mode", "applyTo"}):
        raise Unsupported(f"given.fault.{key}: has no equivalent on the stub for {mode!r}")
    if "applyTo" in fault:  # a remote runtime client calls evaluate, never the definitions poll
        raise Unsupported(f"given.fault.applyTo: {fault['applyTo']!r} is not a route it calls")
    if mode == "offline":
        return None, True
    if mode == "networkError" and fault.get("error") != "connection_reset":
        raise Unsupported(f"given.fault.error: {fault.get('error')!r} has no equivalent")
    armed = _armed(mode, fault)
    return {**armed, "applyTo": "evaluate"}, False


def _armed(mode: str, fault: Json) -> Json:
    if mode == "httpStatus":
        status = fault.get("status")
        if "body" in fault:
            return {"mode": "status", "status": status, "body": fault["body"]}
        return {"mode": str(status)} if status in (401, 429, 500) else {
            "mode": "status", "status": status}  # fmt: skip
    if mode == "invalidJson":
        armed: Json = {"mode": "invalid_json"}
        armed.update({key: fault[key] for key in ("body", "status") if key in fault})
        return armed
    if mode == "delay":
        return {"mode": "delay", "delayMs": fault.get("delayMs")}
    if mode == "quotaLimited":
        return {"mode": "quota_limited"}
    return {"mode": "reset"}


_WHEN_KEYS = {"operation", "flagKey", "flagType", "defaultValue", "invocationContext", "options"}


def _evaluate(when: Json) -> Json:
    for key in sorted(set(when) - _WHEN_KEYS):
        raise Unsupported(f"when.{key}: not an argument the protocol carries")
    unknown = sorted(set(when.get("options", {})) - {"includePayload"})
    if unknown:
        raise Unsupported(f"when.options.{unknown[0]}: not an argument the protocol carries")
    return {
        "flagKey": when.get("flagKey"),
        "type": str(when.get("flagType", "")).lower(),
        "default": when.get("defaultValue"),
        "context": _flat_context(when.get("invocationContext") or {}),
        "includePayload": bool(when.get("options", {}).get("includePayload", False)),
    }


def _flat_context(context: Json) -> Json:
    """The protocol's context is flat (`targetingKey` and attributes side by side); fixtures
    may nest the attributes under `attributes`."""
    flat = {key: value for key, value in context.items() if key != "attributes"}
    nested = context.get("attributes") or {}
    if not isinstance(nested, dict):
        raise Unsupported("when.invocationContext.attributes: not a mapping")
    clash = sorted(set(flat) & set(nested))
    if clash:
        raise Unsupported(f"when.invocationContext.attributes.{clash[0]}: also given outside")
    return {**flat, **nested}


def _expect(expect: Json) -> Json:
    unknown = sorted(set(expect) - _EXPECT_FIELDS)
    if unknown:
        raise Unsupported(f"expect.{unknown[0]}: not observable through the adapter protocol")
    wanted = {key: value for key, value in expect.items() if key in _EXPECT_FIELDS}
    if "flagMetadata" in wanted:
        unserved = sorted(set(wanted["flagMetadata"]) - _METADATA_SERVED)
        if unserved:
            raise Unsupported(
                f"expect.flagMetadata.{unserved[0]}: only a vendor-shaped backend reports it"
            )
        wanted["metadata"] = wanted.pop("flagMetadata")
    return wanted


class Verdict(NamedTuple):
    """One fixture's row, in the repositories' own words: its cases' results folded into one
    status (a multi-case fixture passes only when every case does)."""

    fixture_id: str
    suite: str
    status: str
    """`pass`, `fail` or `skipped-with-documented-limitation`."""
    message: str
    declared: str | None
    """What the fixture's `compatibility` says for the adapter's language."""
    limitation: str | None

    @property
    def drifted(self) -> bool:
        """Ran, and came out otherwise than declared (a skip is the kit's limit, not drift)."""
        ran = self.status != SKIPPED
        return ran and self.declared is not None and self.declared != self.status

    @property
    def failed(self) -> bool:
        """A failure the fixture does not declare, or a drift: either fails the run."""
        return self.drifted or (self.status == "fail" and self.declared != "fail")

    def line(self) -> str:
        shown = {"pass": "PASS", "fail": "FAIL", SKIPPED: "SKIP"}[self.status]
        text = f"{shown:<5} {self.fixture_id}"
        if self.message:
            text += f": {self.message}"
        if self.drifted:
            text += f" (DRIFT: declared {self.declared!r} for this language)"
        return text

    def to_json(self, language: str) -> Json:
        return {
            "fixtureId": self.fixture_id,
            "suite": self.suite,
            "language": language,
            "status": self.status,
            "limitation": self.limitation,
            "message": self.message or None,
        }


def fold(contracts: list[Contract], results: dict[str, Result], language: str) -> Verdict:
    """One fixture's row from its cases (or its one body)."""
    first = contracts[0]
    declared = first.compatibility.get(language)
    details = []
    statuses = []
    for contract in contracts:
        result = results.get(contract.id)
        if result is None:
            status, message = SKIPPED, contract.skipped or ""
        else:
            status = "fail" if result.verdict in ("FAIL", "XPASS") else "pass"
            status = SKIPPED if result.verdict == "SKIP" else status
            message = "; ".join(result.problems)
        statuses.append(status)
        if message:
            label = contract.id.partition("#")[2]
            details.append(f"{label}: {message}" if label else message)
    status = "fail" if "fail" in statuses else SKIPPED if SKIPPED in statuses else "pass"
    limitation = first.limitations.get(language) if status == SKIPPED else None
    return Verdict(first.fixture_id, first.suite, status, "; ".join(details), declared, limitation)


def run_contracts(
    run: Run, contracts: list[Contract], parallel: int, report: Callable[[Verdict], None]
) -> list[Verdict]:
    """Every fixture through the adapter (skips reported, not run), one row per fixture, in
    the fixtures' order."""
    plain = run._replace(info=run.info._replace(expected_failures={}))  # theirs, not ours
    runnable = [contract.case for contract in contracts if contract.case is not None]
    results = {result.case.name: result for result in run_cases(plain, runnable, parallel, _quiet)}
    by_fixture: dict[str, list[Contract]] = {}
    for contract in contracts:
        by_fixture.setdefault(contract.fixture_id, []).append(contract)
    verdicts = []
    for group in by_fixture.values():
        one = fold(group, results, run.info.language)
        report(one)
        verdicts.append(one)
    return verdicts


def report_document(verdicts: list[Verdict], language: str) -> Json:
    """The compatibility report those repositories aggregate across languages."""
    statuses = Counter(one.status for one in verdicts)
    return {
        "schemaVersion": 1,
        "generatedAt": "EXCLUDED",
        "results": [one.to_json(language) for one in verdicts],
        "summary": {status: statuses[status] for status in ("pass", "fail", SKIPPED)},
    }


def contracts_summary(verdicts: list[Verdict]) -> str:
    statuses = Counter(one.status for one in verdicts)
    drifted = sum(one.drifted for one in verdicts)
    uncovered = sum(
        one.status == SKIPPED and one.declared not in (None, SKIPPED) for one in verdicts
    )
    return (
        f"{statuses['pass']} passed, {statuses['fail']} failed, {statuses[SKIPPED]} skipped "
        f"({uncovered} of them declared pass or fail here: the kit cannot drive them), "
        f"{drifted} drifted from their declared compatibility"
    )


def _quiet(result: Result) -> None:
    pass
