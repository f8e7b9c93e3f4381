"""Fixture documents (YAML or JSON) become frozen, validated flags; every error says where."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

import orjson
import yaml

JsonValue: TypeAlias = Any
"""A value made only of dict (str keys), list, str, int, float, bool and None."""

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

FIXTURE_SUFFIXES = (".yaml", ".yml", ".json")
_TOP_LEVEL_KEYS = ("flags", "vendor")
_VENDOR_KEYS = ("flags", "definitions")
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


class FixtureError(ValueError):
    """A fixture document is not valid; the message names the source, key path and problem."""


@dataclass(frozen=True, slots=True)
class Flag:
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
    match_attribute: Mapping[str, JsonValue] = field(default_factory=lambda: _EMPTY)
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


@dataclass(frozen=True, slots=True)
class FixtureSet:
    """Everything a fixture document can say: the flags and optional verbatim vendor bodies."""

    flags: Mapping[str, Flag] = field(default_factory=lambda: _EMPTY)
    vendor_flags: Mapping[str, JsonValue] | None = None
    vendor_definitions: Mapping[str, JsonValue] | None = None

    def overlaid_with(self, later: FixtureSet) -> FixtureSet:
        """The later set wins per flag key and per vendor body."""
        return FixtureSet(
            flags=MappingProxyType({**self.flags, **later.flags}),
            vendor_flags=later.vendor_flags
            if later.vendor_flags is not None
            else self.vendor_flags,
            vendor_definitions=(
                later.vendor_definitions
                if later.vendor_definitions is not None
                else self.vendor_definitions
            ),
        )


def default_fixture_dir() -> Path:
    """The default set: inside the installed wheel, or at the repository top in a checkout."""
    packaged = Path(__file__).resolve().parent / "fixtures"
    if packaged.is_dir():
        return packaged
    # Editable installs and plain checkouts: the wheel's force-include has not run.
    return Path(__file__).resolve().parent.parent / "fixtures"


def load_fixture_paths(paths: Sequence[Path]) -> FixtureSet:
    """Load files and directories in order; a later file wins per key."""
    combined = FixtureSet()
    for path in _expand(paths):
        combined = combined.overlaid_with(load_fixture_file(path))
    return combined


def load_fixture_file(path: Path) -> FixtureSet:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FixtureError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise FixtureError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise FixtureError(f"{path}: cannot read ({exc.strerror})") from None
    return parse_fixture_document(parse_yaml(text, str(path)), str(path))


def parse_yaml(text: str, source: str) -> object:
    """YAML (and so JSON) text to plain values, with a one-line error that names the source."""
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise FixtureError(f"{source}: invalid YAML{where}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise FixtureError(f"{source}: invalid YAML: {exc}") from None
    except RecursionError:
        raise FixtureError(f"{source}: invalid YAML: nested too deeply") from None
    except (ValueError, OverflowError) as exc:  # a timestamp like 2001-13-01 fails to construct
        raise FixtureError(f"{source}: invalid YAML: {exc}") from None


def parse_fixture_document(document: object, source: str) -> FixtureSet:
    """Validate one parsed document; raise FixtureError naming `source` and the key path."""
    if document is None:  # an empty file is an empty fixture set
        return FixtureSet()
    where = _Where(source)
    top = _mapping(document, where, _TOP_LEVEL_KEYS)
    flags_doc = _mapping(_or_empty(top.get("flags")), where / "flags")
    flags = {key: _parse_flag(key, body, where / "flags" / key) for key, body in flags_doc.items()}
    vendor = _mapping(_or_empty(top.get("vendor")), where / "vendor", _VENDOR_KEYS)
    return FixtureSet(
        flags=MappingProxyType(flags),
        vendor_flags=_optional_json_object(vendor.get("flags"), where / "vendor" / "flags"),
        vendor_definitions=_optional_json_object(
            vendor.get("definitions"), where / "vendor" / "definitions"
        ),
    )


MAX_EXPANDED_VALUES = 1_000_000
"""YAML aliases can make a small file expand enormously ("billion laughs"); this bounds it."""


def check_json_value(value: object, source: str, path: str = "") -> JsonValue:
    """Ensure a value holds only JSON types (YAML can also make dates, sets, NaN and cycles)
    and can be written back as JSON (no integer past 64 bits, no lone surrogate, no deeper
    than orjson writes)."""
    where = _Where(source, path)
    _JsonWalk(source).check(value, where)
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError as exc:
        message = f"expected a JSON value that can be written back ({exc})"
        raise FixtureError(where.says(message)) from None
    return value


class _JsonWalk:
    """An iterative depth-first walk: JSON from a request may nest deeper than Python recurses.

    YAML aliases share containers, so each container is checked once (`sizes` remembers its
    expanded size), and a container met again while inside itself is a cycle.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.sizes: dict[int, int] = {}
        self.open: set[int] = set()

    def check(self, root: object, where: _Where) -> None:
        stack: list[tuple[object, _Where, bool]] = [(root, where, False)]
        while stack:
            item, at, leaving = stack.pop()
            if leaving:
                self._close(item, at)
            elif isinstance(item, dict | list):
                self._open(item, at, stack)
            else:
                _check_scalar(item, at)

    def _open(
        self, item: dict[object, object] | list[object], at: _Where, stack: list[Any]
    ) -> None:
        if id(item) in self.open:
            raise FixtureError(at.says("expected a JSON value, got a value that contains itself"))
        if id(item) in self.sizes:
            return
        self.open.add(id(item))
        stack.append((item, at, True))
        for key, child in _children(item, at):
            stack.append((child, at / key, False))

    def _close(self, item: object, at: _Where) -> None:
        self.open.discard(id(item))
        children = item.values() if isinstance(item, dict) else item
        assert isinstance(children, Iterable)
        size = 1 + sum(self.sizes.get(id(child), 1) for child in children)
        if size > MAX_EXPANDED_VALUES:
            raise FixtureError(
                at.says(f"expands to more than {MAX_EXPANDED_VALUES:,} values (YAML aliases?)")
            )
        self.sizes[id(item)] = size


def _children(item: dict[object, object] | list[object], at: _Where) -> list[tuple[str, object]]:
    if isinstance(item, list):
        return [(str(index), child) for index, child in enumerate(item)]
    for key in item:
        if not isinstance(key, str):
            raise FixtureError(at.says(f"expected string keys, got {describe(key)}"))
    return [(str(key), child) for key, child in item.items()]


def _check_scalar(item: object, at: _Where) -> None:
    if isinstance(item, float) and not math.isfinite(item):
        raise FixtureError(at.says(f"expected a finite number (JSON has no {item}), got {item}"))
    if not (item is None or isinstance(item, str | int | float | bool)):
        raise FixtureError(at.says(f"expected a JSON value, got {describe(item)}"))


def describe(value: object) -> str:
    """A short, JSON-flavoured description of a value for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f'"{shown}"'
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}"


@dataclass(frozen=True, slots=True)
class _Where:
    """A source and key path, rendered as `source: flags.checkout-v2.value`."""

    source: str
    path: str = ""

    def __truediv__(self, key: str) -> _Where:
        return _Where(self.source, f"{self.path}.{key}" if self.path else key)

    def says(self, problem: str) -> str:
        return (
            f"{self.source}: {self.path}: {problem}" if self.path else f"{self.source}: {problem}"
        )


def _parse_flag(key: str, body: object, where: _Where) -> Flag:
    spec = _mapping(body, where, _FLAG_KEYS)
    for required in ("type", "value"):
        if required not in spec:
            raise FixtureError((where / required).says("required"))
    flag_type = _flag_type(spec["type"], where / "type")
    value = _value_of_type(spec["type"], flag_type, spec["value"], where / "value")
    metadata = _mapping(spec.get("metadata", {}), where / "metadata", _METADATA_KEYS)
    return Flag(
        key=key,
        type=flag_type,
        value=value,
        enabled=_typed(spec.get("enabled", True), bool, "boolean", where / "enabled"),
        variant=_optional_str(spec.get("variant"), where / "variant"),
        payload=check_json_value(spec.get("payload"), where.source, (where / "payload").path),
        version=_optional_int(metadata.get("version"), where / "metadata" / "version"),
        id=_optional_int(metadata.get("id"), where / "metadata" / "id"),
        reason_override=_optional_str(spec.get("reason"), where / "reason", non_empty=True),
        match_attribute=_match_attribute(spec.get("matchAttribute", {}), where / "matchAttribute"),
        match_targeting_key=_optional_str(
            spec.get("matchTargetingKey"), where / "matchTargetingKey", non_empty=True
        ),
    )


def _flag_type(raw: object, where: _Where) -> FlagType:
    if isinstance(raw, str) and raw in TYPE_NAMES:
        return TYPE_NAMES[raw]
    raise FixtureError(where.says(f"expected one of {', '.join(TYPE_NAMES)}, got {describe(raw)}"))


def _value_of_type(
    declared: object, flag_type: FlagType, value: object, where: _Where
) -> JsonValue:
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


def _match_attribute(raw: object, where: _Where) -> Mapping[str, JsonValue]:
    conditions = _mapping(raw, where)
    for name, wanted in conditions.items():
        check_json_value(wanted, where.source, (where / name).path)
    return MappingProxyType(dict(conditions))


def _mapping(raw: object, where: _Where, allowed: Iterable[str] | None = None) -> dict[str, object]:
    if not isinstance(raw, dict):
        raise FixtureError(where.says(f"expected a mapping, got {describe(raw)}"))
    for key in raw:
        if not isinstance(key, str):
            raise FixtureError(where.says(f"expected string keys, got {describe(key)}"))
    if allowed is not None:
        known = tuple(allowed)
        unknown = [key for key in raw if key not in known]
        if unknown:
            raise FixtureError(
                (where / unknown[0]).says(f"unknown key (expected one of {', '.join(known)})")
            )
    return raw


def _typed(raw: object, kind: type, name: str, where: _Where) -> Any:
    if isinstance(raw, kind):
        return raw
    raise FixtureError(where.says(f"expected {name}, got {describe(raw)}"))


def _optional_str(raw: object, where: _Where, *, non_empty: bool = False) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str) or (non_empty and not raw):
        wanted = "a non-empty string" if non_empty else "string"
        raise FixtureError(where.says(f"expected {wanted}, got {describe(raw)}"))
    return raw


def _optional_int(raw: object, where: _Where) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    raise FixtureError(where.says(f"expected integer, got {describe(raw)}"))


def _optional_json_object(raw: object, where: _Where) -> Mapping[str, JsonValue] | None:
    if raw is None:
        return None
    body = _mapping(raw, where)
    check_json_value(body, where.source, where.path)
    return MappingProxyType(body)


def _or_empty(section: object) -> object:
    """`flags:` with every flag commented out parses as null: an empty section, not an error."""
    return {} if section is None else section


def _json_equal(left: object, right: object) -> bool:
    """JSON equality, all the way down: 1 == 1.0, but true is not 1 (Python says it is)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return left is right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(_json_equal, left, right))
    return left == right


def _expand(paths: Sequence[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(
                p for p in path.iterdir() if p.suffix in FIXTURE_SUFFIXES and p.is_file()
            )
            if not found:
                raise FixtureError(f"{path}: no *.yaml, *.yml or *.json files in this directory")
            files.extend(found)
        else:
            files.append(path)
    return files
