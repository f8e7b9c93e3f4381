"""Evaluate semantics: fixtures plus an evaluation context give decisions in the runtime shape.

The answer for a flag cannot vary except by its match conditions, so every possible decision
is encoded once when fixtures are loaded and requests only join bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


class DecisionTable:
    """Pre-encoded decisions for one fixture set."""

    __slots__ = ("_all_keys", "_conditional", "_matched", "_unmatched")

    def __init__(self, flags: Mapping[str, Flag]) -> None:
        self._all_keys = tuple(flags)
        self._matched = {key: orjson.dumps(matched_decision(f)) for key, f in flags.items()}
        self._unmatched = {key: orjson.dumps(unmatched_decision(key)) for key in flags}
        self._conditional = {key: f for key, f in flags.items() if f.is_conditional}

    def encode(
        self,
        flag_keys: Sequence[str],
        targeting_key: str,
        attributes: Mapping[str, JsonValue],
    ) -> bytes:
        """A JSON array of decisions; no keys means every served flag."""
        keys = flag_keys or self._all_keys
        return b"[" + b",".join(self._one(k, targeting_key, attributes) for k in keys) + b"]"

    def _one(self, key: str, targeting_key: str, attributes: Mapping[str, JsonValue]) -> bytes:
        encoded = self._matched.get(key)
        if encoded is None:
            return orjson.dumps(missing_decision(key))
        conditional = self._conditional.get(key)
        if conditional is not None and not conditional.matches(targeting_key, attributes):
            return self._unmatched[key]
        return encoded
