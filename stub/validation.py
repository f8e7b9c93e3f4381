"""Walking a parsed fixture document: key paths in errors, JSON-only values, typed fields."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple, TypeAlias

import orjson

JsonValue: TypeAlias = Any
"""A value made only of dict (str keys), list, str, int, float, bool and None."""


class FixtureError(ValueError):
    """A fixture document is not valid; the message names the source, key path and problem."""


class FixtureTooLarge(FixtureError):
    """A fixture document is over a size bound (a 413, not a 400, over HTTP)."""


MAX_EXPANDED_VALUES = 1_000_000
"""YAML aliases can make a small file expand enormously ("billion laughs"); this bounds it."""

MAX_DOCUMENT_DEPTH = 260
"""Levels a fixture document may nest: a value in it may nest 254, as deep as JSON is written
back, under the few levels that name it (`flags`, the flag, `value`)."""
ALIAS_FACTOR = 16
ALIAS_FLOOR_BYTES = 64 * 1024
"""Aliases may repeat values, not amplify them: a document, expanded and written as JSON, may
be at most ALIAS_FACTOR times its text, or ALIAS_FLOOR_BYTES, whichever is larger. So what a
document costs (its answers, each flag's JSON made once) follows the size of its text, which
`--max-body-bytes` bounds for every document a test posts."""


def check_document_size(document: object, source: str, text_bytes: int) -> None:
    """Refuse a parsed document that nests too deep or that its aliases expand past the
    bound, before anything walks or writes it expanded (the walk meets each container once,
    so it costs what the text does)."""
    limit = max(ALIAS_FLOOR_BYTES, ALIAS_FACTOR * text_bytes)
    measured: dict[int, tuple[int, int]] = {}
    """id of a container -> (its size written as JSON, its height): an alias costs a lookup."""
    inside: set[int] = set()  # a container met again within itself is a cycle, refused later
    stack: list[tuple[object, int, bool]] = [(document, 1, False)]
    while stack:
        item, depth, leaving = stack.pop()
        if not isinstance(item, dict | list):
            continue
        if leaving:
            inside.discard(id(item))
            measured[id(item)] = size_and_height = _measure(item, measured)
            if size_and_height[0] > limit:
                raise FixtureTooLarge(_too_large(source, size_and_height[0], text_bytes, limit))
            continue
        known = measured.get(id(item))
        if depth + (known[1] - 1 if known else 0) > MAX_DOCUMENT_DEPTH:
            raise FixtureError(f"{source}: nested more than {MAX_DOCUMENT_DEPTH} levels deep")
        if known is None and id(item) not in inside:
            inside.add(id(item))
            stack.append((item, depth, True))
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1, False) for child in children)


def _measure(
    item: dict[Any, Any] | list[Any], measured: dict[int, tuple[int, int]]
) -> tuple[int, int]:
    """A container's size as JSON (near enough: every character one byte) and its height,
    from its children's, already measured."""
    size, height = 2 + max(len(item) - 1, 0), 0
    if isinstance(item, dict):
        size += sum(len(str(key)) + 3 for key in item)
    for child in item.values() if isinstance(item, dict) else item:
        child_size, child_height = measured.get(id(child)) or (_scalar_size(child), 0)
        size += child_size
        height = max(height, child_height)
    return size, height + 1


def _scalar_size(value: object) -> int:
    if isinstance(value, str):
        return len(value) + 2
    if value is None or isinstance(value, bool):
        return 5
    return len(str(value)) if isinstance(value, int | float) else 16


def _too_large(source: str, size: int, text_bytes: int, limit: int) -> str:
    return (
        f"{source}: its aliases expand it to about {size:,} bytes of JSON from {text_bytes:,} "
        f"bytes of text, over the bound of {limit:,} ({ALIAS_FACTOR} times the text, at "
        f"least {ALIAS_FLOOR_BYTES // 1024} KiB): write the repeated values out "
        "rather than alias them (the bound grows with the text)"
    )


def check_json_value(value: object, source: str, path: str = "") -> JsonValue:
    """Ensure a value holds only JSON types (YAML can also make dates, sets, NaN and cycles)
    and can be written back as JSON (no integer past 64 bits, no lone surrogate, no deeper
    than orjson writes)."""
    where = Where(source, path)
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

    def check(self, root: object, where: Where) -> None:
        stack: list[tuple[object, Where, bool]] = [(root, where, False)]
        while stack:
            item, at, leaving = stack.pop()
            if leaving:
                self._close(item, at)
            elif isinstance(item, dict | list):
                self._open(item, at, stack)
            else:
                _check_scalar(item, at)

    def _open(self, item: dict[object, object] | list[object], at: Where, stack: list[Any]) -> None:
        if id(item) in self.open:
            raise FixtureError(at.says("expected a JSON value, got a value that contains itself"))
        if id(item) in self.sizes:
            return
        self.open.add(id(item))
        stack.append((item, at, True))
        for key, child in _children(item, at):
            stack.append((child, at / key, False))

    def _close(self, item: object, at: Where) -> None:
        self.open.discard(id(item))
        children = item.values() if isinstance(item, dict) else item
        assert isinstance(children, Iterable)
        size = 1 + sum(self.sizes.get(id(child), 1) for child in children)
        if size > MAX_EXPANDED_VALUES:
            raise FixtureError(
                at.says(f"expands to more than {MAX_EXPANDED_VALUES:,} values (YAML aliases?)")
            )
        self.sizes[id(item)] = size


def _children(item: dict[object, object] | list[object], at: Where) -> list[tuple[str, object]]:
    if isinstance(item, list):
        return [(str(index), child) for index, child in enumerate(item)]
    for key in item:
        if not isinstance(key, str):
            raise FixtureError(at.says(f"expected string keys, got {describe(key)}"))
    return [(str(key), child) for key, child in item.items()]


def _check_scalar(item: object, at: Where) -> None:
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


class Where(NamedTuple):
    """A source and key path, rendered as `source: flags.checkout-v2.value`."""

    source: str
    path: str = ""

    def __truediv__(self, key: str) -> Where:
        return Where(self.source, f"{self.path}.{key}" if self.path else key)

    def says(self, problem: str) -> str:
        return (
            f"{self.source}: {self.path}: {problem}" if self.path else f"{self.source}: {problem}"
        )


def mapping(raw: object, where: Where, allowed: Iterable[str] | None = None) -> dict[str, object]:
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


def typed(raw: object, kind: type, name: str, where: Where) -> Any:
    if isinstance(raw, kind):
        return raw
    raise FixtureError(where.says(f"expected {name}, got {describe(raw)}"))


def optional_str(raw: object, where: Where, *, non_empty: bool = False) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str) or (non_empty and not raw):
        wanted = "a non-empty string" if non_empty else "string"
        raise FixtureError(where.says(f"expected {wanted}, got {describe(raw)}"))
    return raw


def optional_int(raw: object, where: Where) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    raise FixtureError(where.says(f"expected integer, got {describe(raw)}"))


def optional_json_object(raw: object, where: Where) -> Mapping[str, JsonValue] | None:
    if raw is None:
        return None
    body = mapping(raw, where)
    check_json_value(body, where.source, where.path)
    return MappingProxyType(body)


def or_empty(section: object) -> object:
    """`flags:` with every flag commented out parses as null: an empty section, not an error."""
    return {} if section is None else section
