"""The legacy vendor `/flags` body, read as fixtures (for `POST /_test/flags`)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import orjson

from stub.fixtures import FixtureSet, Flag
from stub.http import invalid_body, json_type


def fixtures_from_vendor_flags(body: Mapping[str, Any], current: FixtureSet) -> FixtureSet:
    """The body becomes the verbatim `/flags` answer, and evaluate answers from its records.

    The derivation is the upstream stub's: value is the variant when it is a string, else
    `enabled`; reason SPLIT with a variant, TARGETING_MATCH when enabled, DISABLED otherwise.
    """
    records = body.get("flags")
    if not isinstance(records, dict):
        raise invalid_body(f"flags: expected an object of flag records, got {json_type(records)}")
    flags = {key: _flag_from_record(key, record) for key, record in records.items()}
    return FixtureSet(
        flags=MappingProxyType(flags),
        vendor_flags=MappingProxyType(dict(body)),
        vendor_definitions=current.vendor_definitions,
    )


def _flag_from_record(key: str, record: object) -> Flag:
    where = f"flags.{key}"
    if not isinstance(record, dict):
        raise invalid_body(f"{where}: expected an object, got {json_type(record)}")
    enabled = _field(record, "enabled", bool, where, default=False)
    variant = _field(record, "variant", str, where, default=None)
    metadata = _field(record, "metadata", dict, where, default={})
    version = _field(metadata, "version", int, f"{where}.metadata", default=None)
    flag_id = _field(metadata, "id", int, f"{where}.metadata", default=None)
    return Flag(
        key=key,
        type="string" if variant is not None else "boolean",
        value=variant if variant is not None else enabled,
        enabled=enabled,
        variant=variant,
        payload=_payload(metadata.get("payload"), f"{where}.metadata.payload"),
        version=version,
        id=flag_id,
        reason_override=_upstream_reason(enabled, variant),
    )


def _upstream_reason(enabled: bool, variant: str | None) -> str:
    if variant is not None:
        return "SPLIT"
    return "TARGETING_MATCH" if enabled else "DISABLED"


def _field(record: Mapping[str, Any], name: str, kind: type, where: str, default: Any) -> Any:
    value = record.get(name)
    if value is None:
        return default
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise invalid_body(f"{where}.{name}: expected {kind.__name__}, got {json_type(value)}")
    return value


def _payload(raw: object, where: str) -> Any:
    """The vendor carries payloads as JSON-encoded strings; the runtime route parses them."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise invalid_body(f"{where}: expected a JSON-encoded string, got {json_type(raw)}")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise invalid_body(f"{where}: not a JSON-encoded string") from None
