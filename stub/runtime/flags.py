"""The `flags:` section: control points as served by the runtime plane (and, in its own shapes,
by the vendor plane)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal, NamedTuple

from stub.validation import (
    FixtureError,
    JsonValue,
    Where,
    check_json_value,
    describe,
    mapping,
    optional_int,
    optional_str,
    typed,
)

FlagType = Literal["boolean", "string", "number", "object"]

# The client libraries' in-memory fixtures use integer/float/json; accepting them lets users
# reuse the fixtures they already have.
TYPE_NAMES: Mapping[str, FlagType] = MappingProxyType(
    {
        "boolean": "boolean",
        "string": "string",
        "number": "number",
        "integer": "number",
        "float": "number",
        "object": "object",
        "json": "object",
    }
)

_FLAG_KEYS = (
    "type",
    "value",
    "enabled",
    "variant",
    "payload",
    "metadata",
    "reason",
    "matchAttribute",
    "matchTargetingKey",
)
_METADATA_KEYS = ("version", "id")
_EMPTY: Mapping[str, JsonValue] = MappingProxyType({})


class Flag(NamedTuple):
    """One control point as served: every field validated and every default resolved."""

    key: str
    type: FlagType
    value: JsonValue
    enabled: bool = True
    variant: str | None = None
    payload: JsonValue = None
    version: int | None = None
    id: int | None = None
    reason_override: str | None = None
    match_attribute: Mapping[str, JsonValue] = _EMPTY
    match_targeting_key: str | None = None

    @property
    def reason(self) -> str:
        if self.reason_override is not None:
            return self.reason_override
        if not self.enabled:
            return "DISABLED"
        return "SPLIT" if self.variant is not None else "TARGETING_MATCH"

    @property
    def is_conditional(self) -> bool:
        return bool(self.match_attribute) or self.match_targeting_key is not None

    def matches(self, targeting_key: str, attributes: Mapping[str, JsonValue]) -> bool:
        """True when the evaluation context satisfies every match condition of the flag."""
        if self.match_targeting_key is not None and targeting_key != self.match_targeting_key:
            return False
        missing = object()
        return all(
            _json_equal(attributes.get(name, missing), wanted)
            for name, wanted in self.match_attribute.items()
        )


def parse_flag(key: str, body: object, where: Where) -> Flag:
    spec = mapping(body, where, _FLAG_KEYS)
    for required in ("type", "value"):
        if required not in spec:
            raise FixtureError((where / required).says("required"))
    flag_type = _flag_type(spec["type"], where / "type")
    value = _value_of_type(spec["type"], flag_type, spec["value"], where / "value")
    metadata = mapping(spec.get("metadata", {}), where / "metadata", _METADATA_KEYS)
    return Flag(
        key=key,
        type=flag_type,
        value=value,
        enabled=typed(spec.get("enabled", True), bool, "boolean", where / "enabled"),
        variant=optional_str(spec.get("variant"), where / "variant"),
        payload=check_json_value(spec.get("payload"), where.source, (where / "payload").path),
        version=optional_int(metadata.get("version"), where / "metadata" / "version"),
        id=optional_int(metadata.get("id"), where / "metadata" / "id"),
        reason_override=optional_str(spec.get("reason"), where / "reason", non_empty=True),
        match_attribute=_match_attribute(spec.get("matchAttribute", {}), where / "matchAttribute"),
        match_targeting_key=optional_str(
            spec.get("matchTargetingKey"), where / "matchTargetingKey", non_empty=True
        ),
    )


def _flag_type(raw: object, where: Where) -> FlagType:
    if isinstance(raw, str) and raw in TYPE_NAMES:
        return TYPE_NAMES[raw]
    raise FixtureError(where.says(f"expected one of {', '.join(TYPE_NAMES)}, got {describe(raw)}"))


def _value_of_type(declared: object, flag_type: FlagType, value: object, where: Where) -> JsonValue:
    if declared == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool)
        expected = "integer"
    elif flag_type == "boolean":
        ok, expected = isinstance(value, bool), "boolean"
    elif flag_type == "string":
        ok, expected = isinstance(value, str), "string"
    elif flag_type == "number":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        expected = "number"
    else:
        ok, expected = isinstance(value, dict | list), "object or list"
    if not ok:
        raise FixtureError(
            where.says(f"expected {expected} (type {declared}), got {describe(value)}")
        )
    return check_json_value(value, where.source, where.path)


def _match_attribute(raw: object, where: Where) -> Mapping[str, JsonValue]:
    conditions = mapping(raw, where)
    for name, wanted in conditions.items():
        check_json_value(wanted, where.source, (where / name).path)
    return MappingProxyType(dict(conditions))


def _json_equal(left: object, right: object) -> bool:
    """JSON equality, all the way down: 1 == 1.0, but true is not 1 (Python says it is)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return left is right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(_json_equal, left, right))
    return left == right
