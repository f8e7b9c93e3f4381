"""The legacy vendor documents: `/flags` answers and definitions derived from fixtures, and a
vendor `/flags` body read back as fixtures (for `POST /_test/flags`)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import orjson

from stub.fixtures import FixtureSet
from stub.runtime.flags import Flag
from stub.wire import MAX_WRITABLE_DEPTH, invalid_body, json_type, writable


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
        payload = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise invalid_body(f"{where}: not a JSON-encoded string") from None
    if not writable(payload):
        raise invalid_body(f"{where}: nested more than {MAX_WRITABLE_DEPTH} levels deep")
    return payload


class VendorDocuments:
    """The `/flags` answer and the definitions document for one fixture set, encoded once.

    Each comes verbatim from the fixture file's `vendor:` section when it has one, else it is
    derived from the flags, so the vendor routes and the runtime plane always agree.
    """

    __slots__ = (
        "_conditional",
        "_matched",
        "_unmatched",
        "_verbatim",
        "_verbatim_encoded",
        "definitions",
        "etag",
    )

    def __init__(self, fixtures: FixtureSet) -> None:
        flags = list(fixtures.flags.values())
        verbatim = fixtures.vendor_flags
        self._verbatim = dict(verbatim) if verbatim is not None else None
        self._verbatim_encoded = orjson.dumps(self._verbatim)
        self._matched = {f.key: orjson.dumps(flag_record(f, i, True)) for i, f in enumerate(flags)}
        self._unmatched = {
            f.key: orjson.dumps(flag_record(f, i, False)) for i, f in enumerate(flags)
        }
        self._conditional = {f.key: f for f in flags if f.is_conditional}
        given = fixtures.vendor_definitions
        document = dict(given) if given is not None else definitions_document(flags)
        self.definitions = orjson.dumps(document)
        self.etag = '"' + hashlib.sha256(self.definitions).hexdigest()[:32] + '"'

    def flags_answer(
        self,
        keys: list[str] | None,
        distinct_id: str,
        person_properties: Mapping[str, Any],
        request_id: str,
    ) -> bytes:
        """The v2 `/flags` body, limited to `keys` when the SDK names them."""
        if self._verbatim is not None:
            return self._verbatim_answer(keys)
        wanted = self._matched.keys() if keys is None else [k for k in keys if k in self._matched]
        records = b",".join(
            b'"%b":%b' % (orjson.dumps(k)[1:-1], self._record(k, distinct_id, person_properties))
            for k in wanted
        )
        return (
            b'{"flags":{%b},"errorsWhileComputingFlags":false,"quotaLimited":null,'
            b'"requestId":"%b"}' % (records, request_id.encode())
        )

    def _record(self, key: str, distinct_id: str, person_properties: Mapping[str, Any]) -> bytes:
        flag = self._conditional.get(key)
        if flag is not None and not flag.matches(distinct_id, person_properties):
            return self._unmatched[key]
        return self._matched[key]

    def _verbatim_answer(self, keys: list[str] | None) -> bytes:
        assert self._verbatim is not None
        if keys is None:
            return self._verbatim_encoded
        records = self._verbatim.get("flags")
        if isinstance(records, dict):
            records = {k: v for k, v in records.items() if k in keys}
        return orjson.dumps({**self._verbatim, "flags": records})


def flag_record(flag: Flag, index: int, matched: bool) -> dict[str, Any]:
    """One flag as a v2 `/flags` record; never with a `value` member (7.91 reads that as v4)."""
    on = matched and flag.enabled
    if flag.type == "boolean":
        enabled, variant, payload = on and bool(flag.value), None, flag.payload
    elif flag.type == "string":
        enabled, variant, payload = on, (flag.value if on else None), flag.payload
    else:  # number and object travel as the payload of an enabled flag
        enabled, variant, payload = on, None, flag.value
    return {
        "key": flag.key,
        "enabled": enabled,
        "variant": variant,
        "reason": _reason(flag, matched, enabled),
        "metadata": {
            "id": flag.id if flag.id is not None else index + 1,
            "version": flag.version if flag.version is not None else 1,
            "payload": None if payload is None or not enabled else _json_string(payload),
        },
    }


def _reason(flag: Flag, matched: bool, enabled: bool) -> dict[str, Any]:
    """The vendor's reason codes: a boolean served as false is a 0 % rollout there."""
    if enabled:
        return {
            "code": "condition_match",
            "condition_index": 0,
            "description": "Condition set 1 matched",
        }
    if matched and flag.enabled:
        return {
            "code": "out_of_rollout_bound",
            "condition_index": 0,
            "description": "Out of rollout bound",
        }
    return {
        "code": "no_condition_match",
        "condition_index": None,
        "description": "No matching condition set",
    }


def definitions_document(flags: list[Flag]) -> dict[str, Any]:
    """The local-evaluation document: 100 % rollouts, conditions as exact person filters."""
    return {
        "flags": [_definition(flag, index) for index, flag in enumerate(flags)],
        "group_type_mapping": {},
        "cohorts": {},
    }


def _definition(flag: Flag, index: int) -> dict[str, Any]:
    properties = [
        {"key": name, "type": "person", "value": [wanted], "operator": "exact"}
        for name, wanted in flag.match_attribute.items()
    ]
    if flag.match_targeting_key is not None:
        properties.append(
            {
                "key": "distinct_id",
                "type": "person",
                "value": [flag.match_targeting_key],
                "operator": "exact",
            }
        )
    group: dict[str, Any] = {"properties": properties, "rollout_percentage": 100}
    multivariate = None
    if flag.type == "string":
        multivariate = {"variants": [{"key": flag.value, "rollout_percentage": 100}]}
        group["variant"] = flag.value
        payloads = {flag.value: _json_string(flag.payload)} if flag.payload is not None else {}
    elif flag.type == "boolean":
        group["rollout_percentage"] = 100 if flag.value else 0
        payloads = {"true": _json_string(flag.payload)} if flag.payload is not None else {}
    else:
        payloads = {"true": _json_string(flag.value)}
    return {
        "id": flag.id if flag.id is not None else index + 1,
        "key": flag.key,
        "name": flag.key,
        "active": flag.enabled,
        "deleted": False,
        "version": flag.version if flag.version is not None else 1,
        "ensure_experience_continuity": False,
        "filters": {"groups": [group], "multivariate": multivariate, "payloads": payloads},
    }


def _json_string(value: Any) -> str:
    """The vendor carries payloads as JSON-encoded strings, not as JSON values."""
    return orjson.dumps(value).decode()
