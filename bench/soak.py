"""Soak svc-stub: mixed traffic from 32 connections while faults are armed and cleared every
0.5 s, on loopback only. Not part of the test suite; it stops by itself.

The traffic is what real clients send (evaluate one, several and every key, capture, register,
/flags, the definitions poll, /batch, some gzip) plus bad input that must get a 4xx; a share of
requests ask for a fault themselves (`X-Svc-Test-Fault` or `?fault=`). A controller arms a
random fault (a mode, a sequence, a TTL or a probability, on some routes) and clears it, every
0.5 s, and now and then resets the stub. Every outcome is judged against the faults that could
have fired on that request: a per-request fault exactly, an armed one by when it was armed and
cleared. Choices come from a seeded generator, so a run is reproducible up to timing.

Fails (exit 1) on any 5xx no fault explains (or that does not say it comes from one), any
answer outside a fault that is not JSON, any other outcome no fault explains, a normal answer of
the wrong shape, a control-plane error, an error in the stub's log, RSS growth beyond the first
5 s (the stub runs with `--max-recorded 1000`, so its lists are full by then), or a stub that
does not stop cleanly.
The stub is pinned to CPU 0 and this script to CPU 1 (`taskset`) when there are two CPUs, and
stopped by PID.

    python bench/soak.py                  # 20 s
    python bench/soak.py --seconds 60 --seed 7
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import math
import os
import random
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson

HERE = Path(__file__).resolve().parent
READY = "svc-stub listening on "
SERVER_CPU, LOAD_CPU = 0, 1
CONNECTIONS = 32
CYCLE_S = 0.5
CLIENT_TIMEOUT_S = 2.0
"""A hang, reset or empty answer just counts as "no answer" once this runs out."""
START_TIMEOUT_S = 15.0
MAX_RECORDED = 1000
"""The stub's --max-recorded: its lists reach this bound in the first seconds, so growth after
that is not recording. (The default, 10,000, takes longer than 20 s to fill; bench/run.py's
million-request run covers it.)"""
RSS_BASELINE_S = 5.0
"""Growth is measured from the highest RSS up to here: by then every kind of traffic and fault
has been through and the recorded lists are at their bound."""
MAX_GROWTH_MB = 5.0

TIMEOUT, DISCONNECTED = "timeout", "disconnected"
Outcome = int | str
"""An HTTP status, or TIMEOUT / DISCONNECTED when no complete answer came."""

SELECTORS = ("evaluate", "capture", "register", "flags", "definitions", "batch")
FLAG_KEYS = (
    "new-checkout",
    "dark-mode",
    "legacy-banner",
    "checkout-v2",
    "pricing-page",
    "max-items",
    "discount-rate",
    "ui-config",
    "enterprise-dashboard",
    "no-such-flag",
)
RUNTIME_KEY, PROJECT_KEY, SECRET_KEY = "sk-soak", "phc_soak", "phs_soak"
JSON_HEADERS = {"Content-Type": "application/json"}
GZIP_BOMB = gzip.compress(b"0" * (2 << 20))  # 2 MiB of zeros: a 413 under the 1 MiB default

# Per-request faults, weighted: a hang holds a connection for the whole client timeout.
REQUEST_MODES = {
    "401": 3.0,
    "429": 3.0,
    "500": 3.0,
    "status": 3.0,
    "invalid_json": 3.0,
    "truncated": 2.0,
    "quota_limited": 3.0,
    "delay": 3.0,
    "reset": 2.0,
    "empty_response": 2.0,
    "slow_body": 3.0,
    "hang": 0.1,
}
ARMED_MODES = {**REQUEST_MODES, "hang": 0.5}


@dataclass(frozen=True, slots=True)
class Fault:
    """A fault as a client sees it; mode `none` lets the request through, `bogus` is refused."""

    mode: str
    status: int | None = None

    def outcomes(self, call: Call) -> frozenset[Outcome]:
        if self.mode in ("none", "delay", "slow_body"):  # the normal answer (late or slowly)
            return frozenset({call.expect})
        if self.mode == "status":
            assert self.status is not None
            return frozenset({self.status})
        if self.mode == "invalid_json":
            return frozenset({200})
        if self.mode in ("truncated", "reset", "empty_response"):
            return frozenset({DISCONNECTED})
        if self.mode == "hang":
            return frozenset({TIMEOUT})
        if self.mode == "quota_limited":
            return frozenset({200 if call.route in ("evaluate", "flags") else 402})
        if self.mode == "bogus":
            return frozenset({400})
        return frozenset({int(self.mode)})  # 401, 429, 500


@dataclass(slots=True)
class Call:
    """One request, and what it must get when no fault fires."""

    kind: str
    method: str
    path: str
    route: str | None
    """Its fault selector; None for paths that are never faulted (404, 405)."""
    expect: int
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    check: Callable[[Any], bool] | None = None
    """The shape of its normal answer."""
    fault: Fault | None = None
    """Asked for by the request itself: armed faults do not apply then."""


@dataclass(slots=True)
class Window:
    """An armed fault, from just before it was armed until its clearing was acknowledged."""

    armed_id: int | None
    routes: frozenset[str]
    faults: tuple[Fault, ...]
    start: float
    end: float = math.inf


class ArmedLog:
    """Which armed faults could have fired on a request that ran from t0 to t1."""

    def __init__(self) -> None:
        self.windows: list[Window] = []

    def open(self, routes: frozenset[str], faults: tuple[Fault, ...]) -> Window:
        window = Window(None, routes, faults, time.monotonic())
        self.windows.append(window)
        return window

    def close(self, window: Window | None = None) -> None:
        """One window, or (None) every open one."""
        now = time.monotonic()
        for each in self.windows if window is None else [window]:
            each.end = min(each.end, now)
        # nothing still running can have started before the client timeout
        horizon = now - CLIENT_TIMEOUT_S - 5
        self.windows = [w for w in self.windows if w.end >= horizon]

    def possible(self, route: str, t0: float, t1: float) -> list[Fault]:
        return [
            fault
            for w in self.windows
            if route in w.routes and w.start <= t1 and w.end >= t0
            for fault in w.faults
        ]


@dataclass
class Tally:
    """Outcomes, and every one that no fault explains."""

    outcomes: Counter[Outcome] = field(default_factory=Counter)
    requests: int = 0
    asked_fault: int = 0
    under_armed: int = 0
    unintended_5xx: int = 0
    unexpected: int = 0
    non_json: int = 0
    wrong_shape: int = 0
    control_errors: int = 0
    armings: int = 0
    resets: int = 0
    armed_fired: int = 0
    examples: list[str] = field(default_factory=list)

    def example(self, text: str) -> None:
        if len(self.examples) < 12:
            self.examples.append(text)

    def record(
        self, call: Call, outcome: Outcome, body: bytes, content_type: str, armed: list[Fault]
    ) -> None:
        self.requests += 1
        self.outcomes[outcome] += 1
        if call.route is None:  # never faulted, whatever is armed or asked for
            candidates: list[Fault] = []
            allowed: set[Outcome] = {call.expect}
        elif call.fault is not None:  # header or query wins over anything armed
            self.asked_fault += 1
            candidates = [call.fault]
            allowed = set(call.fault.outcomes(call))
        else:
            self.under_armed += bool(armed)
            candidates = armed
            allowed = {call.expect}
            for fault in armed:
                allowed |= fault.outcomes(call)
        modes = sorted({f.mode if f.status is None else f"status {f.status}" for f in candidates})
        where = f"{call.kind}: {call.method} {call.path} (faults possible: {modes or 'none'})"
        answered = isinstance(outcome, int) and not (outcome == 304 and not body)
        answer = _json(body) if answered and content_type == "application/json" else _NOT_JSON
        if isinstance(outcome, int) and outcome >= 500 and not _from_fault(answer):
            # a fault's 5xx says so; anything else is the stub failing, whatever was armed
            self.unintended_5xx += 1
            self.example(f"{outcome} not from a fault, {body[:120]!r}: {where}")
        elif outcome not in allowed:
            if isinstance(outcome, int) and outcome >= 500:
                self.unintended_5xx += 1
            else:
                self.unexpected += 1
            self.example(f"{outcome} where {sorted(map(str, allowed))} was due: {where}")
        if not answered:
            return
        if answer is _NOT_JSON:
            if not any(f.mode == "invalid_json" for f in candidates):
                self.non_json += 1
                self.example(f"non-JSON {outcome} ({content_type}) {body[:80]!r}: {where}")
            return
        if outcome == call.expect == 200 and call.check is not None and not _holds(call, answer):
            self.wrong_shape += 1
            self.example(f"unexpected answer {body[:120]!r}: {where}")


def _from_fault(answer: Any) -> bool:
    """A fault's error answer names the fault: `"message": "svc-stub fault: 500"`."""
    return isinstance(answer, dict) and str(answer.get("message")).startswith("svc-stub fault: ")


_NOT_JSON = object()


def _json(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return _NOT_JSON


def _holds(call: Call, answer: Any) -> bool:
    assert call.check is not None
    try:
        return call.check(answer)
    except (AttributeError, KeyError, TypeError):
        return False


class Traffic:
    """A realistic mix, drawn from a seeded generator: most of it well-formed, some of it bad
    input that must get a 4xx, and a share that asks for a fault itself."""

    def __init__(
        self, rng: random.Random, etag: str, flag_count: int, without: tuple[str, ...] = ()
    ) -> None:
        self.rng = rng
        self.without = without
        self.etag = etag
        self.flag_count = flag_count
        mix: dict[Callable[[], Call], float] = {
            self.evaluate_one: 20,
            self.evaluate_some: 14,
            self.evaluate_all: 8,
            self.capture: 12,
            self.register: 6,
            self.flags: 10,
            self.definitions: 8,
            self.batch: 9,
            self.bad: 13,
        }
        self.builders, self.weights = list(mix), list(mix.values())

    def next(self) -> Call:
        rng = self.rng
        while True:  # --without leaves some kinds out
            build: Callable[[], Call] = rng.choices(self.builders, self.weights)[0]
            call = build()
            if not any(left_out in call.kind for left_out in self.without):
                break
        if call.fault is None:
            draw = rng.random()
            if draw < 0.08:
                self._ask_fault(call, query=False)
            elif draw < 0.11:
                self._ask_fault(call, query=True)
            elif draw < 0.14:
                call.headers["X-Svc-Test-Fault"] = "none"
                call.fault = Fault("none")
        return call

    def _ask_fault(self, call: Call, *, query: bool) -> None:
        rng = self.rng
        mode = rng.choices(list(REQUEST_MODES), list(REQUEST_MODES.values()))[0]
        params: dict[str, str] = {}
        status = None
        if mode in ("delay", "slow_body"):
            params["Delay-Ms"] = str(rng.randint(50, 200))
        elif mode == "status":
            status = rng.choice((500, 502, 503, 504))
            params["Status"] = str(status)
        elif mode == "429":
            params["Retry-After"] = str(rng.randint(0, 3))
        call.fault = Fault(mode, status)
        if query:
            names = {"Delay-Ms": "delayMs", "Status": "status", "Retry-After": "retryAfter"}
            pairs = [f"fault={mode}", *(f"{names[k]}={v}" for k, v in params.items())]
            call.path += ("&" if "?" in call.path else "?") + "&".join(pairs)
        else:
            call.headers["X-Svc-Test-Fault"] = mode
            call.headers.update((f"X-Svc-Test-{k}", v) for k, v in params.items())

    # -- well-formed traffic

    def user(self) -> str:
        return f"user-{self.rng.randint(1, 500)}"

    def runtime_auth(self) -> dict[str, str]:
        choice = self.rng.choice(("Bearer", "bearer", "x-api-key"))
        key = {"x-api-key": RUNTIME_KEY} if choice == "x-api-key" else {}
        auth = {} if key else {"Authorization": f"{choice} {RUNTIME_KEY}"}
        return {**JSON_HEADERS, **key, **auth}

    def _evaluate(self, kind: str, document: dict[str, Any], count: int) -> Call:
        path = "/v1/flags/evaluate" + ("/" if self.rng.random() < 0.1 else "")

        def check(answer: Any) -> bool:
            return len(answer["decisions"]) == count and isinstance(answer["requestId"], str)

        return Call(
            kind, "POST", path, "evaluate", 200, orjson.dumps(document), self.runtime_auth(), check
        )

    def evaluate_one(self) -> Call:
        keys = [self.rng.choice(FLAG_KEYS)]
        return self._evaluate(
            "evaluate one key", {"targetingKey": self.user(), "flagKeys": keys}, 1
        )

    def evaluate_some(self) -> Call:
        keys = self.rng.sample(FLAG_KEYS, self.rng.randint(2, 5))
        document: dict[str, Any] = {"targetingKey": self.user(), "flagKeys": keys}
        if self.rng.random() < 0.5:
            document["attributes"] = {"plan": self.rng.choice(("free", "enterprise")), "age": 3}
        return self._evaluate("evaluate several keys", document, len(keys))

    def evaluate_all(self) -> Call:
        document = {
            "targetingKey": self.user(),
            "attributes": {"plan": "enterprise"},
            "groups": {"company": "acme"},
            "groupProperties": {"company": {"size": 40}},
        }
        return self._evaluate("evaluate every key", document, self.flag_count)

    def capture(self) -> Call:
        events: list[dict[str, Any]] = []
        for _ in range(self.rng.randint(1, 10)):
            user, key = self.user(), self.rng.choice(FLAG_KEYS)
            if self.rng.random() < 0.6:
                events.append(
                    {"type": "exposure", "targetingKey": user, "flagKey": key, "variant": None}
                )
            else:
                events.append(
                    {"type": "signal", "targetingKey": user, "name": "purchase", "value": 12.5}
                )
        body = orjson.dumps({"events": events})

        def check(answer: Any) -> bool:
            return bool(answer == {"ok": True, "accepted": len(events)})

        return Call(
            "capture", "POST", "/v1/capture", "capture", 200, body, self.runtime_auth(), check
        )

    def register(self) -> Call:
        user = self.user()
        document = {
            "targetingKey": user,
            "kind": "user",
            "environment": "soak",
            "properties": {"plan": self.rng.choice(("free", "enterprise"))},
        }

        def check(answer: Any) -> bool:
            return bool(answer == {"ok": True, "targetingKey": user})

        path = "/v1/targets/register"
        body = orjson.dumps(document)
        return Call("register", "POST", path, "register", 200, body, self.runtime_auth(), check)

    def flags(self) -> Call:
        rng = self.rng
        document: dict[str, Any] = {
            rng.choice(("api_key", "token")): PROJECT_KEY,
            "distinct_id": self.user(),
        }
        if rng.random() < 0.5:
            document["flag_keys_to_evaluate"] = rng.sample(FLAG_KEYS, rng.randint(1, 4))
        if rng.random() < 0.5:
            document["person_properties"] = {"plan": rng.choice(("free", "enterprise"))}
        path = rng.choice(("/flags", "/flags/")) + rng.choice(("", "?v=2", "?v=4"))

        def check(answer: Any) -> bool:
            return isinstance(answer["flags"], dict) and isinstance(answer["requestId"], str)

        body = orjson.dumps(document)
        return Call("/flags", "POST", path, "flags", 200, body, dict(JSON_HEADERS), check)

    def definitions(self) -> Call:
        rng = self.rng
        path = rng.choice(("/flags/definitions", "/api/feature_flag/local_evaluation"))
        path += rng.choice(("", "/")) + f"?token={PROJECT_KEY}"
        if rng.random() < 0.3:
            path += "&send_cohorts"
        headers = {"Authorization": f"Bearer {SECRET_KEY}"}
        if rng.random() < 0.3:
            headers["If-None-Match"] = self.etag
            return Call("definitions (ETag)", "GET", path, "definitions", 304, None, headers)

        def check(answer: Any) -> bool:
            return isinstance(answer["flags"], list) and len(answer["flags"]) == self.flag_count

        return Call("definitions", "GET", path, "definitions", 200, None, headers, check)

    def batch(self) -> Call:
        items = [
            {
                "event": "$feature_flag_called",
                "distinct_id": self.user(),
                "properties": {"$feature_flag": self.rng.choice(FLAG_KEYS)},
            }
            for _ in range(self.rng.randint(1, 10))
        ]
        body = orjson.dumps({"api_key": PROJECT_KEY, "batch": items})
        headers = dict(JSON_HEADERS)
        kind = "batch"
        if self.rng.random() < 0.4:
            body, kind = gzip.compress(body), "batch (gzip)"
            headers["Content-Encoding"] = "gzip"

        def check(answer: Any) -> bool:
            return bool(answer == {"status": 1})

        return Call(kind, "POST", "/batch", "batch", 200, body, headers, check)

    # -- bad input: each must get exactly its 4xx when no fault fires

    def bad(self) -> Call:
        kind, method, path, route, expect, body, headers = self.rng.choice(BAD)
        call = Call(f"bad: {kind}", method, path, route, expect, body)
        if headers == "runtime":
            call.headers = self.runtime_auth()
        elif headers == "secret":
            call.headers = {"Authorization": f"Bearer {SECRET_KEY}"}
        elif headers == "gzip":
            call.headers = {**JSON_HEADERS, "Content-Encoding": "gzip"}
        else:
            call.headers = dict(JSON_HEADERS)
        if kind == "unknown fault mode":
            call.headers["X-Svc-Test-Fault"] = "bogus"
            call.fault = Fault("bogus")
        return call


EVALUATE, REGISTER, DEFINITIONS = "/v1/flags/evaluate", "/v1/targets/register", "/flags/definitions"
TARGETED = b'{"targetingKey": "u"}'
# fmt: off
BAD: tuple[tuple[str, str, str, str | None, int, bytes | None, str], ...] = (
    # what, method, path, fault selector (None: never faulted), status, body, headers
    ("invalid JSON", "POST", EVALUATE, "evaluate", 400, b"{", "runtime"),
    ("a flag key a number", "POST", EVALUATE, "evaluate", 400, b'{"targetingKey": "u", '
     b'"flagKeys": ["checkout-v2", 1]}', "runtime"),
    ("no targetingKey", "POST", EVALUATE, "evaluate", 400, b'{"flagKeys": []}', "runtime"),
    ("unknown fault mode", "POST", EVALUATE, "evaluate", 400, TARGETED, "runtime"),
    ("no API key", "POST", EVALUATE, "evaluate", 401, TARGETED, "json"),
    ("a JSON array", "POST", REGISTER, "register", 400, b"[1, 2]", "runtime"),
    ("kind a number", "POST", REGISTER, "register", 400, b'{"targetingKey": "u", "kind": 5}',
     "runtime"),
    ("events not a list", "POST", "/v1/capture", "capture", 400, b'{"events": "x"}', "runtime"),
    ("/flags without a key", "POST", "/flags?v=2", "flags", 401, b'{"distinct_id": "u"}', "json"),
    ("definitions without token", "GET", DEFINITIONS, "definitions", 401, None, "secret"),
    ("definitions without Bearer", "GET", f"{DEFINITIONS}?token={PROJECT_KEY}", "definitions",
     401, None, "json"),
    ("batch not a list", "POST", "/batch", "batch", 400, b'{"api_key": "k", "batch": {}}', "json"),
    ("gzip that is not", "POST", "/batch", "batch", 400, b'{"api_key": "k", "batch": []}', "gzip"),
    ("gzip bomb", "POST", "/batch", "batch", 413, GZIP_BOMB, "gzip"),
    ("unknown path", "POST", "/v1/nope", None, 404, b"{}", "runtime"),
    ("wrong method", "GET", EVALUATE, None, 405, None, "runtime"),
)
# fmt: on


# -- the controller: arm, wait, clear, every 0.5 s


def armed_step(rng: random.Random) -> tuple[dict[str, Any], Fault]:
    mode = rng.choices(list(ARMED_MODES), list(ARMED_MODES.values()))[0]
    document: dict[str, Any] = {"mode": mode}
    status = None
    if mode in ("delay", "slow_body"):
        document["delayMs"] = rng.randint(50, 200)
    elif mode == "status":
        status = document["status"] = rng.choice((502, 503, 504))
    elif mode == "429":
        document["retryAfter"] = rng.randint(0, 3)
    return document, Fault(mode, status)


def arming(rng: random.Random) -> tuple[dict[str, Any], frozenset[str], tuple[Fault, ...]]:
    """A random `POST /_test/fault` body, the routes it applies to, and what it can do."""
    draw = rng.random()
    if draw < 0.15:
        steps = [armed_step(rng) if rng.random() < 0.7 else ({"mode": "none"}, None)]
        steps += [armed_step(rng) for _ in range(rng.randint(1, 3))]
        document: dict[str, Any] = {"sequence": [step for step, _ in steps]}
        faults = tuple(fault for _, fault in steps if fault is not None)
    else:
        document, fault = armed_step(rng)
        faults = (fault,)
        if draw < 0.35:
            document["ttlRequests"] = rng.randint(1, 50)
        elif draw < 0.55:
            document["probability"] = round(rng.uniform(0.2, 1.0), 2)
            document["seed"] = rng.randint(0, 1000)
    where = rng.random()
    routes: frozenset[str] = frozenset(SELECTORS)
    if where < 0.25:
        pass  # applyTo defaults to all
    elif where < 0.4:
        document["applyTo"] = "all"
    elif where < 0.75:
        document["applyTo"] = rng.choice(SELECTORS)
        routes = frozenset({document["applyTo"]})
    else:
        document["applyTo"] = rng.sample(SELECTORS, rng.randint(2, 3))
        routes = frozenset(document["applyTo"])
    return document, routes, faults


class Controller:
    def __init__(self, session: aiohttp.ClientSession, url: str, tally: Tally) -> None:
        self.session = session
        self.url = url
        self.tally = tally

    async def call(
        self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = (200,)
    ) -> Any:
        """A control-plane call; anything but `ok` and a JSON answer is an error."""
        try:
            async with self.session.request(method, self.url + path, json=body) as response:
                status, raw = response.status, await response.read()
        except (TimeoutError, aiohttp.ClientError) as exc:
            status, raw = 0, repr(exc).encode()
        answer = _json(raw)
        if status not in ok or answer is _NOT_JSON:
            self.tally.control_errors += 1
            self.tally.example(f"control {method} {path} {body!r}: {status} {raw[:120]!r}")
            return None
        return answer

    async def run(self, rng: random.Random, armed: ArmedLog, began: float, end: float) -> None:
        cycle = 0
        while began + (cycle + 1) * CYCLE_S <= end:
            await _sleep_until(began + cycle * CYCLE_S)
            if cycle and rng.random() < 0.08:
                await self.call("POST", "/_test/reset")
                armed.close()
                self.tally.resets += 1
            windows = []
            for _ in range(1 if rng.random() < 0.7 else 2):
                document, routes, faults = arming(rng)
                window = armed.open(routes, faults)  # before the request: it may fire at once
                answer = await self.call("POST", "/_test/fault", document)
                self.tally.armings += 1
                if answer is not None:
                    window.armed_id = answer["fault"]["id"]
                windows.append(window)
            await asyncio.sleep(rng.uniform(0.1, 0.35))
            listed = await self.call("GET", "/_test/fault")  # not those that ran out already
            if listed is not None:
                self.tally.armed_fired += sum(fault["fired"] for fault in listed["armed"])
            how = rng.random()
            if how < 0.5:
                await self.call("DELETE", "/_test/fault")
                armed.close()
            elif how < 0.7:
                await self.call("POST", "/_test/fault", {"mode": "none"})
                armed.close()
            else:  # one by one; a fault that ran out (ttlRequests, sequence) is a 404
                for window in windows:
                    if window.armed_id is not None:
                        await self.call("DELETE", f"/_test/fault/{window.armed_id}", ok=(200, 404))
                    armed.close(window)
            if cycle % 4 == 3:
                route = rng.choice(SELECTORS)
                await self.call("GET", f"/_test/requests?route={route}")
                await self.call("GET", "/_test/events")
            cycle += 1


async def _sleep_until(moment: float) -> None:
    await asyncio.sleep(max(0.0, moment - time.monotonic()))


# -- load, memory and the stub process


async def send(session: aiohttp.ClientSession, url: str, call: Call) -> tuple[Outcome, bytes, str]:
    try:
        async with session.request(
            call.method, url + call.path, data=call.body, headers=call.headers
        ) as response:
            return response.status, await response.read(), response.content_type
    except TimeoutError:
        return TIMEOUT, b"", ""
    except aiohttp.ClientError:
        return DISCONNECTED, b"", ""


async def worker(
    session: aiohttp.ClientSession,
    url: str,
    traffic: Traffic,
    armed: ArmedLog,
    tally: Tally,
    end: float,
) -> None:
    while time.monotonic() < end:
        call = traffic.next()
        t0 = time.monotonic()
        outcome, body, content_type = await send(session, url, call)
        possible = armed.possible(call.route, t0, time.monotonic()) if call.route else []
        tally.record(call, outcome, body, content_type, possible)


@dataclass
class Stub:
    process: subprocess.Popen[str]
    url: str = ""
    log: str = ""
    """Its stderr, once stopped."""
    exit_code: int | None = None
    killed: bool = False

    @property
    def rss_mb(self) -> float:
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:  # it is gone: the checks that follow say so
            return float("nan")
        match = re.search(r"VmRSS:\s+(\d+) kB", status)
        return int(match.group(1)) / 1024 if match else float("nan")


def pinned() -> bool:
    return (os.cpu_count() or 1) >= 2 and shutil.which("taskset") is not None


@contextmanager
def started(args: list[str]) -> Iterator[Stub]:
    """`python -m stub --port 0`, its log in a private file; stopped by PID, SIGTERM first."""
    command = [sys.executable, "-m", "stub", "--port", "0", *args]
    if pinned():
        command = ["taskset", "-c", str(SERVER_CPU), *command]
    with tempfile.TemporaryFile(mode="w+") as log:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=log, text=True, cwd=HERE.parent
        )
        stub = Stub(process)
        try:
            assert process.stdout is not None
            readable, _, _ = select.select([process.stdout], [], [], START_TIMEOUT_S)
            line = process.stdout.readline() if readable else ""
            if not line.startswith(READY):
                log.seek(0)
                raise RuntimeError(f"the stub did not start: {line!r} {log.read()[-2000:]}")
            stub.url = line[len(READY) :].strip()
            yield stub
        finally:
            process.terminate()
            try:
                stub.exit_code = process.wait(5)
            except subprocess.TimeoutExpired:
                stub.killed = True
                process.kill()
                stub.exit_code = process.wait()
            log.seek(0)
            stub.log = log.read()


async def sample_rss(
    stub: Stub, samples: list[tuple[float, float]], began: float, end: float
) -> None:
    while time.monotonic() < end:
        samples.append((time.monotonic() - began, stub.rss_mb))
        await asyncio.sleep(1.0)


@dataclass
class Result:
    seconds: float
    tally: Tally
    rss: list[tuple[float, float]]
    rss_start: float
    health_after: int
    recorded: dict[str, Any]


async def soak(stub: Stub, seconds: float, seed: int, without: tuple[str, ...]) -> Result:
    tally = Tally()
    timeout = aiohttp.ClientTimeout(total=CLIENT_TIMEOUT_S)
    connector = aiohttp.TCPConnector(limit=CONNECTIONS)
    async with (
        aiohttp.ClientSession(connector=connector, timeout=timeout) as session,
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as control_session,
    ):
        control = Controller(control_session, stub.url, tally)
        if await control.call("GET", "/health") is None:
            raise RuntimeError(f"/health failed: {tally.examples}")
        async with session.post(
            stub.url + "/v1/flags/evaluate",
            json={"targetingKey": "probe"},
            headers={"Authorization": f"Bearer {RUNTIME_KEY}"},
        ) as response:
            flag_count = len((await response.json())["decisions"])  # every served key
        async with session.get(
            stub.url + f"/flags/definitions?token={PROJECT_KEY}",
            headers={"Authorization": f"Bearer {SECRET_KEY}"},
        ) as response:
            etag = response.headers["ETag"]
        await control.call("POST", "/_test/reset")
        rss_start = stub.rss_mb

        rng = random.Random(seed)
        armed = ArmedLog()
        began = time.monotonic()
        end = began + seconds
        rss: list[tuple[float, float]] = []
        tasks = [
            worker(
                session,
                stub.url,
                Traffic(random.Random(seed * 1000 + n), etag, flag_count, without),
                armed,
                tally,
                end,
            )
            for n in range(CONNECTIONS)
        ]
        await asyncio.gather(
            *tasks,
            Controller(control_session, stub.url, tally).run(rng, armed, began, end),
            sample_rss(stub, rss, began, end),
        )
        elapsed = time.monotonic() - began
        rss.append((elapsed, stub.rss_mb))
        await control.call("DELETE", "/_test/fault")
        async with control_session.get(stub.url + "/health") as response:
            health_after = response.status
        requests = await control.call("GET", "/_test/requests") or {}
        events = await control.call("GET", "/_test/events") or {}
        recorded = {
            "requests": (len(requests.get("requests", ())), requests.get("dropped")),
            **{
                name: (len(events.get(name, ())), events.get("dropped", {}).get(name))
                for name in ("svcEvents", "events", "targets")
            },
        }
    return Result(elapsed, tally, rss, rss_start, health_after, recorded)


def log_errors(log: str) -> tuple[Counter[str], Counter[str]]:
    """ERROR and CRITICAL entries (and any traceback) by message, and the exception each
    traceback ends in."""
    errors: Counter[str] = Counter()
    raised: Counter[str] = Counter()
    for entry in re.split(r"^(?=svc-stub )", log, flags=re.MULTILINE):
        first, *rest = entry.splitlines() or [""]
        error = re.match(r"svc-stub (?:ERROR|CRITICAL) (.*)", first)
        if error is None and "Traceback" not in entry:
            continue
        errors[error.group(1) if error else first] += 1
        tops = [i for i, line in enumerate(rest) if line and not line[0].isspace()]
        if tops:
            raised[" ".join(line.strip() for line in rest[tops[-1] :])] += 1
    return errors, raised


def report(result: Result, stub: Stub, seconds: float, seed: int, without: tuple[str, ...]) -> bool:
    t = result.tally
    errors, raised = log_errors(stub.log)
    at_baseline = min(result.rss, key=lambda sample: abs(sample[0] - RSS_BASELINE_S))[1]
    early_peak = max(mb for at, mb in result.rss if at <= RSS_BASELINE_S + 0.1)
    rss_end = result.rss[-1][1]
    peak = max(mb for _, mb in result.rss)
    growth = rss_end - early_peak
    stopped = stub.exit_code == 0 and not stub.killed

    checks = [
        ("unintended 5xx", f"{t.unintended_5xx}", t.unintended_5xx == 0),
        ("non-JSON answers outside faults", f"{t.non_json}", t.non_json == 0),
        ("other outcomes no fault explains", f"{t.unexpected}", t.unexpected == 0),
        ("normal answers of the wrong shape", f"{t.wrong_shape}", t.wrong_shape == 0),
        ("control-plane errors", f"{t.control_errors}", t.control_errors == 0),
        ("errors in the stub's log", f"{sum(errors.values())}", not errors),
        (
            f"RSS start / {RSS_BASELINE_S:.0f} s / end (peak)",
            f"{result.rss_start:.1f} / {at_baseline:.1f} / {rss_end:.1f} MB ({peak:.1f}); "
            f"end {growth:+.1f} MB on the first {RSS_BASELINE_S:.0f} s' highest "
            f"(limit +{MAX_GROWTH_MB:.0f})",
            growth <= MAX_GROWTH_MB,
        ),
        (
            "/health after, stop on SIGTERM",
            f"{result.health_after}, exit {stub.exit_code}{' (killed)' if stub.killed else ''}",
            result.health_after == 200 and stopped,
        ),
    ]
    outcomes = sorted(t.outcomes.items(), key=lambda item: (isinstance(item[0], str), item[0]))
    print(
        f"# svc-stub soak, {time.strftime('%Y-%m-%d')}: {seconds:g} s, {CONNECTIONS} "
        f"connections, faults armed and cleared every {CYCLE_S} s, seed {seed}\n"
    )
    where = "stub on CPU 0, load on CPU 1" if pinned() else "not pinned"
    print(f"- {os.cpu_count()} CPUs ({where}), Python {sys.version.split()[0]}")
    if without:
        print(f"- left out: traffic whose kind contains {', '.join(map(repr, without))}")
    print(
        f"- {t.requests:,} requests in {seconds:g} s (the last answered "
        f"{result.seconds - seconds:.1f} s later), {t.requests / seconds:,.0f} req/s; "
        f"{t.asked_fault:,} asked for a fault "
        f"themselves, {t.under_armed:,} ran while an armed fault could fire"
    )
    print(
        f"- {t.armings} faults armed, armed faults fired on at least {t.armed_fired:,} "
        f"requests, {t.resets} resets"
    )
    print("- outcomes: " + ", ".join(f"{o}: {n:,}" for o, n in outcomes))
    print(
        "- recorded at the end (kept, dropped): "
        + ", ".join(
            f"{name} {kept:,}, {dropped}" for name, (kept, dropped) in result.recorded.items()
        )
    )
    print("- RSS each second, MB: " + ", ".join(f"{mb:.1f}" for _, mb in result.rss))
    print("\n| check | result | verdict |\n|---|---|---|")
    for name, value, ok in checks:
        print(f"| {name} | {value} | {'pass' if ok else '**FAIL**'} |")
    if t.examples:
        print("\nFirst problems:\n")
        print("\n".join(f"- {example}" for example in t.examples))
    if errors:
        print("\nThe stub's log, errors by message (and the exceptions their tracebacks end in):\n")
        print("\n".join(f"- {n}: `{message}`" for message, n in errors.most_common()))
        print("\n".join(f"- {n}: `{exception}`" for exception, n in raised.most_common()))
    return all(ok for _, _, ok in checks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the soak")
    parser.add_argument("--seed", type=int, default=1, help="seed of every random choice")
    parser.add_argument(
        "--max-recorded",
        type=int,
        default=MAX_RECORDED,
        metavar="N",
        help=f"the stub's bound per recorded list (default {MAX_RECORDED}; the stub's own: 10000)",
    )
    parser.add_argument(
        "--without",
        action="append",
        default=[],
        metavar="KIND",
        help="leave out traffic whose kind contains KIND (repeatable), to isolate a problem",
    )
    args = parser.parse_args()
    if args.seconds < 1:
        parser.error("--seconds: at least 1")
    without = tuple(args.without)
    if any(not kind for kind in without):
        parser.error("--without: an empty KIND would leave everything out")
    if pinned():
        os.sched_setaffinity(0, {LOAD_CPU})
    with started(["--max-recorded", str(args.max_recorded)]) as stub:
        # bounded: the traffic ends at the deadline, every request within the client timeout
        result = asyncio.run(
            asyncio.wait_for(soak(stub, args.seconds, args.seed, without), args.seconds + 60)
        )
    return 0 if report(result, stub, args.seconds, args.seed, without) else 1


if __name__ == "__main__":
    sys.exit(main())
