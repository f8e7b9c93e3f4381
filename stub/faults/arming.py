"""When a fault fires: arming documents, per-request faults (header > query > armed), and the
armed set that applies counts, schedules and seeded probability once, for every fault alike."""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from aiohttp import web

from stub.faults.modes import DEFAULT_DELAY_MS, DEFAULT_RETRY_AFTER_S, FaultMode, FaultSpec
from stub.wire import invalid_body, json_type

RUNTIME_SELECTORS = ("evaluate", "capture", "register")
VENDOR_SELECTORS = ("flags", "definitions", "batch")
MANAGEMENT_SELECTORS = ("whoami", "projects", "environments", "control-points")
SELECTORS = (*RUNTIME_SELECTORS, *VENDOR_SELECTORS, *MANAGEMENT_SELECTORS)
"""What a fault can target: a runtime or vendor route, or a management resource (every route
named `projects.*` answers to `projects`)."""

GROUPS = {
    "all": SELECTORS,
    "runtime": RUNTIME_SELECTORS,
    "vendor": VENDOR_SELECTORS,
    "management": MANAGEMENT_SELECTORS,
}
"""Selectors that stand for several: `all` for every one of them."""

PASS = "none"
"""As a mode: clear, or (per request) bypass armed faults; as a sequence step: let one through."""

MAX_ARMED = 100
MAX_SEQUENCE = 1000
FAULT_HEADER = "X-Svc-Test-Fault"
FAULT_QUERY = "fault"
"""The query parameter that faults one request (`?fault=503`), the header's twin."""

_MODES = tuple(mode.value for mode in FaultMode)
_STEP_KEYS = ("mode", "delayMs", "status", "body", "retryAfter")
_ARMING_KEYS = (*_STEP_KEYS, "sequence", "applyTo", "ttlRequests", "probability", "seed")

Source = Literal["header", "query", "armed", "rate-limit"]


class Fired(NamedTuple):
    """The decision for one request: which fault (None: none) and where it came from."""

    spec: FaultSpec | None
    source: Source
    armed_id: int | None = None
    step: int | None = None

    def to_json(self) -> dict[str, Any]:
        described: dict[str, Any] = {
            "mode": self.spec.mode.value if self.spec else PASS,
            "source": self.source,
        }
        if self.armed_id is not None:
            described["armedId"] = self.armed_id
        if self.step is not None:
            described["step"] = self.step
        return described


@dataclass(slots=True)
class ArmedFault:
    """An armed fault: one mode repeated, or a sequence consumed a matching request at a time."""

    id: int
    routes: frozenset[str]
    steps: tuple[FaultSpec | None, ...]
    is_sequence: bool
    remaining: int | None
    probability: float | None = None
    seed: int = 0
    fired: int = 0
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        # Owned by this fault alone, so a seeded run is reproducible whatever else is armed.
        self.rng = random.Random(self.seed)

    def to_json(self) -> dict[str, Any]:
        described: dict[str, Any] = {"id": self.id, "applyTo": sorted(self.routes)}
        if self.is_sequence:
            described["sequence"] = [_step_json(step) for step in self.steps]
        else:
            assert self.steps[0] is not None
            described.update(self.steps[0].to_json())
        described.update(
            ttlRequests=self.remaining,
            probability=self.probability,
            seed=self.seed if self.probability is not None else None,
            fired=self.fired,
        )
        return described


class ArmedFaults:
    """Every armed fault; the most recently armed one that matches a request wins."""

    def __init__(self) -> None:
        self._armed: list[ArmedFault] = []
        self._ids = itertools.count(1)

    def __bool__(self) -> bool:
        return bool(self._armed)

    def arm(self, document: Mapping[str, Any]) -> ArmedFault | None:
        """Validate and arm; `{"mode": "none"}` clears everything and returns None."""
        if document.get("mode") == PASS and "sequence" not in document:
            self.clear()
            return None
        if len(self._armed) >= MAX_ARMED:
            raise invalid_body(f"at most {MAX_ARMED} faults can be armed at once; clear some first")
        armed = parse_arming(document, 0)
        armed.id = next(self._ids)  # only once valid: a refused arming takes no id
        self._armed.append(armed)
        return armed

    def clear(self) -> None:
        self._armed.clear()

    def disarm(self, armed_id: int) -> bool:
        """Remove one armed fault; False when it is not armed (any more)."""
        kept = [armed for armed in self._armed if armed.id != armed_id]
        found = len(kept) < len(self._armed)
        self._armed[:] = kept
        return found

    def take(self, route: str) -> Fired | None:
        """Decide for one request, synchronously, so `ttlRequests` is exact under concurrency."""
        for armed in reversed(self._armed):
            if route not in armed.routes:
                continue
            if armed.probability is not None and armed.rng.random() >= armed.probability:
                continue
            index = armed.fired % len(armed.steps)
            armed.fired += 1
            if armed.remaining is not None:
                armed.remaining -= 1
                if armed.remaining == 0:
                    self._armed.remove(armed)
            step = index if armed.is_sequence else None
            return Fired(armed.steps[index], "armed", armed.id, step)
        return None

    def to_json(self) -> list[dict[str, Any]]:
        return [armed.to_json() for armed in self._armed]


def parse_arming(document: Mapping[str, Any], armed_id: int) -> ArmedFault:
    """A `POST /_test/fault` body (not `none`) as an armed fault, or a 400 naming the field."""
    unknown = sorted(set(document) - set(_ARMING_KEYS))
    if unknown:
        raise invalid_body(
            f"{unknown[0]}: unknown field (expected one of {', '.join(_ARMING_KEYS)})"
        )
    if "sequence" in document:
        if "mode" in document or "ttlRequests" in document:
            raise invalid_body(
                "sequence: give either mode (with ttlRequests) or sequence, not both"
            )
        steps = _parse_sequence(document)
        remaining: int | None = len(steps)
    elif "mode" not in document:
        raise invalid_body(f"mode: required (valid: {PASS}, {', '.join(_MODES)}), or a sequence")
    else:
        steps = (_parse_step(document, _labels("")),)
        remaining = _optional_int(document, "ttlRequests", minimum=1)
    return ArmedFault(
        id=armed_id,
        routes=_parse_selectors(document.get("applyTo", "all")),
        steps=steps,
        is_sequence="sequence" in document,
        remaining=remaining,
        probability=_parse_probability(document.get("probability")),
        seed=_optional_int(document, "seed", minimum=None) or 0,
    )


def request_fault(request: web.Request) -> Fired | None:
    """The fault a request asks for itself (header, else query), or None to ask the armed set."""
    mode = request.headers.get(FAULT_HEADER)
    if mode is not None:
        return _per_request(mode, "header", request.headers.get)
    if "fault=" in request.raw_path:  # a cheap test first: parsing the query costs more
        mode = request.query.get(FAULT_QUERY)
        if mode is not None:
            return _per_request(mode, "query", request.query.get)
    return None


_PARAMETERS = (("delayMs", "Delay-Ms"), ("status", "Status"), ("retryAfter", "Retry-After"))
FAULT_QUERY_PARAMETERS = (FAULT_QUERY, *(name for name, _ in _PARAMETERS))
"""Every query parameter of a per-request fault (proxy mode forwards none of them)."""


def _per_request(mode: str, source: Source, param: Callable[[str], str | None]) -> Fired:
    """Parameters travel beside the mode: `X-Svc-Test-Delay-Ms` with the header, `delayMs=`
    with the query."""
    if mode.strip() == PASS:
        return Fired(None, source)
    mode_label = FAULT_HEADER if source == "header" else FAULT_QUERY
    document: dict[str, Any] = {"mode": mode.strip()}
    labels = {"mode": mode_label}
    for field_name, header_suffix in _PARAMETERS:
        label = labels[field_name] = (
            f"X-Svc-Test-{header_suffix}" if source == "header" else field_name
        )
        raw = param(label)
        if raw is not None:
            document[field_name] = _integer_text(raw, label)
    return Fired(_parse_step(document, labels), source)


def _parse_sequence(document: Mapping[str, Any]) -> tuple[FaultSpec | None, ...]:
    raw = document["sequence"]
    if not isinstance(raw, list) or not raw:
        raise invalid_body(f"sequence: expected a non-empty array of steps, got {json_type(raw)}")
    if len(raw) > MAX_SEQUENCE:
        raise invalid_body(f"sequence: at most {MAX_SEQUENCE} steps, got {len(raw)}")
    shared = {key: document[key] for key in _STEP_KEYS if key in document and key != "mode"}
    steps = []
    for index, step in enumerate(raw):
        where = f"sequence[{index}]"
        if isinstance(step, str):
            step = {"mode": step}
        if not isinstance(step, dict):
            raise invalid_body(f"{where}: expected a mode or an object, got {json_type(step)}")
        unknown = sorted(set(step) - set(_STEP_KEYS))
        if unknown:
            raise invalid_body(
                f"{where}.{unknown[0]}: unknown field (expected one of {', '.join(_STEP_KEYS)})"
            )
        merged = {**shared, **step}
        steps.append(
            None if merged.get("mode") == PASS else _parse_step(merged, _labels(f"{where}."))
        )
    return tuple(steps)


def _parse_step(document: Mapping[str, Any], labels: Mapping[str, str]) -> FaultSpec:
    """One fault and its parameters; `labels` name each field as the user wrote it."""
    spec = FaultSpec(
        mode=_parse_mode(document.get("mode"), labels["mode"], labels["status"]),
        delay_ms=_int_field(document, "delayMs", labels, DEFAULT_DELAY_MS),
        status=_parse_status(document.get("status"), labels["status"]),
        body=document.get("body"),
        retry_after_s=_int_field(document, "retryAfter", labels, DEFAULT_RETRY_AFTER_S),
    )
    if spec.mode is FaultMode.STATUS and spec.status is None:
        raise invalid_body(f"{labels['status']}: required with mode status (e.g. 503)")
    return spec


def _labels(prefix: str) -> dict[str, str]:
    return {name: prefix + name for name in _STEP_KEYS}


def _int_field(
    document: Mapping[str, Any], name: str, labels: Mapping[str, str], default: int
) -> int:
    value = _optional_int(document, name, minimum=0, label=labels[name])
    return default if value is None else value


def _parse_mode(raw: object, label: str, status_label: str) -> FaultMode:
    if isinstance(raw, str) and raw in _MODES:
        return FaultMode(raw)
    valid = ", ".join([PASS, *_MODES])
    if isinstance(raw, int | float) and not isinstance(raw, bool) and str(raw) in _MODES:
        raise invalid_body(f'{label}: {raw} is a number; send the mode as a string, "{raw}"')
    shown = repr(raw) if isinstance(raw, str) else json_type(raw)
    hint = _status_hint(raw, label, status_label)
    raise invalid_body(f"{label}: unknown fault mode {shown} (valid: {valid}){hint}")


_STATUS_CODE = re.compile(r"[2-5][0-9]{2}")
"""A status a fault can answer with (200 to 599, as `status` takes), in ASCII digits."""


def _status_hint(raw: object, label: str, status_label: str) -> str:
    """For a status guessed as a mode (`?fault=503`), how to ask for it, in the words of the
    channel the mode came by; nothing for anything else."""
    code = str(raw) if isinstance(raw, str | int) and not isinstance(raw, bool) else ""
    if not _STATUS_CODE.fullmatch(code):
        return ""
    if label == FAULT_HEADER:
        how = f"{FAULT_HEADER}: status with {status_label}: {code}"
    elif label == FAULT_QUERY:
        how = f"{FAULT_QUERY}=status&{status_label}={code}"
    else:
        how = f'{{"mode": "status", "status": {code}}}'
    return f"; for a {code}, use {how}"


def _parse_selectors(raw: object) -> frozenset[str]:
    names = [raw] if isinstance(raw, str) else raw
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise invalid_body(
            f"applyTo: expected a selector or a non-empty list of selectors, got {json_type(raw)}"
        )
    routes: set[str] = set()
    for name in names:
        if name in GROUPS:
            routes.update(GROUPS[name])
        elif name in SELECTORS:
            routes.add(name)
        else:
            valid = ", ".join([*GROUPS, *SELECTORS])
            raise invalid_body(f"applyTo: unknown selector {name!r} (valid: {valid})")
    return frozenset(routes)


def _parse_probability(raw: object) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 < raw <= 1:
        raise invalid_body(f"probability: expected a number above 0 and at most 1, got {raw!r}")
    return float(raw)


def _parse_status(raw: object, label: str) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or not 200 <= raw <= 599:
        raise invalid_body(f"{label}: expected an HTTP status from 200 to 599, got {raw!r}")
    return raw


def _optional_int(
    document: Mapping[str, Any], name: str, *, minimum: int | None, label: str | None = None
) -> int | None:
    raw = document.get(name)
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or (minimum is not None and raw < minimum):
        wanted = {None: "an integer", 0: "a non-negative integer", 1: "a positive integer"}[minimum]
        raise invalid_body(f"{label or name}: expected {wanted}, got {json_type(raw)} {raw!r}")
    return raw


def _integer_text(raw: str, label: str) -> int:
    try:
        return int(raw.strip())
    except ValueError:
        raise invalid_body(f"{label}: expected an integer, got {raw!r}") from None


def _step_json(step: FaultSpec | None) -> dict[str, Any]:
    return {"mode": PASS} if step is None else step.to_json()
