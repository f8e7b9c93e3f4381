"""Evaluate semantics: fixtures plus an evaluation context give decisions in the runtime shape.

The answer for a flag cannot vary except by its match conditions, so every possible decision
is encoded once when fixtures are loaded and requests only join bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import orjson

from stub.runtime.flags import Flag
from stub.validation import JsonValue

# Published clients read the version under the upstream name; ours is the service's own.
VERSION_KEYS = ("svc.flagVersion", "fireweave.flagVersion")


def matched_decision(flag: Flag) -> dict[str, Any]:
    """`payload` only when the flag has one: the spec makes it optional, and a client that reads
    `"payload": null` may keep it (the Node client put the text "null" in every flag's metadata)."""
    metadata = dict.fromkeys(VERSION_KEYS, flag.version) if flag.version is not None else {}
    decision = {
        "flagKey": flag.key,
        "found": True,
        "enabled": flag.enabled,
        "value": flag.value,
        "variant": flag.variant,
        "reason": flag.reason,
        "flagMetadata": metadata,
    }
    if flag.payload is not None:
        decision["payload"] = flag.payload
    return decision


def unmatched_decision(key: str) -> dict[str, Any]:
    """Known but its conditions fail: clients serve the caller's default."""
    return {"flagKey": key, "found": False, "value": None, "reason": "DEFAULT"}


def missing_decision(key: str) -> dict[str, Any]:
    return {"flagKey": key, "found": False, "value": None, "reason": "ERROR"}


MAX_REMEMBERED = 1024
MAX_REMEMBERED_BODY_BYTES = 4096
MAX_REMEMBERED_ANSWER_BYTES = 64 * 1024
"""What a table remembers of the bodies it answered: at most 1,024 answers (then it starts
afresh), of bodies up to 4 KiB and answers up to 64 KiB: 70 MB at the very worst, a few
hundred KB for a test suite's handful of contexts."""


Decided = tuple[bytes, Collection[str]]
"""An evaluate body's decisions, encoded, and the fixture flags they answered (for coverage):
a tuple, so the request path unpacks it without a call."""


class DecisionTable:
    """Pre-encoded decisions for one fixture set, and the answers it gave by request body: a
    body's decisions are a pure function of the fixtures and the body, so a client that asks
    the same question again (as every poll and every test does) is answered without parsing
    it. A new fixture set is a new table, so nothing remembered outlives what it was read
    from."""

    __slots__ = ("_answered", "_conditional", "_matched", "_unmatched", "all_keys", "answered")

    def __init__(self, flags: Mapping[str, Flag]) -> None:
        self.all_keys = tuple(flags)
        """Every served flag, once: what a request for all of them reads (one collection, so
        coverage sees a repeat by identity)."""
        self._matched = {key: orjson.dumps(matched_decision(f)) for key, f in flags.items()}
        self._unmatched = {key: orjson.dumps(unmatched_decision(key)) for key in flags}
        self._conditional = {key: f for key, f in flags.items() if f.is_conditional}
        self._answered: dict[bytes, Decided] = {}
        self.answered: Callable[[bytes], Decided | None] = self._answered.get
        """The decisions already given for this very body, if remembered: the dict's own
        `get`, so the request path asks without a Python call."""

    def remember(self, body: bytes, decided: Decided) -> None:
        """Remember the decisions a valid `body` got (see MAX_REMEMBERED)."""
        if len(body) > MAX_REMEMBERED_BODY_BYTES or len(decided[0]) > MAX_REMEMBERED_ANSWER_BYTES:
            return
        if len(self._answered) >= MAX_REMEMBERED:
            self._answered.clear()
        self._answered[body] = decided

    def encode(
        self,
        flag_keys: Sequence[str],
        targeting_key: str,
        attributes: Mapping[str, JsonValue],
    ) -> Decided:
        """A JSON array of decisions, and the fixture flags it answered; no keys means every
        served flag."""
        keys = flag_keys or self.all_keys
        read = self.all_keys if keys is self.all_keys else self._matched.keys() & keys
        encoded = b"[" + b",".join(self._one(k, targeting_key, attributes) for k in keys) + b"]"
        return encoded, read

    def _one(self, key: str, targeting_key: str, attributes: Mapping[str, JsonValue]) -> bytes:
        encoded = self._matched.get(key)
        if encoded is None:
            return orjson.dumps(missing_decision(key))
        conditional = self._conditional.get(key)
        if conditional is not None and not conditional.matches(targeting_key, attributes):
            return self._unmatched[key]
        return encoded
