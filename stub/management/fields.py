"""The fields of projects and environments, checked once for seeds and request bodies alike.

A check raises `FieldError` with the path of the field inside what it was given; the seed
loader renders it as a fixture key path, the routes as the field name a 400 starts with.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, NamedTuple, get_args

from stub.wire import json_type

PathPart = str | int
RefKind = Literal["exact", "prefix", "glob"]
ProjectStatus = Literal["active", "archived"]
REF_KINDS: tuple[str, ...] = get_args(RefKind)
PROJECT_STATUSES: tuple[str, ...] = get_args(ProjectStatus)


class FieldError(ValueError):
    """A field that is missing, of the wrong type or not allowed; `path` says which."""

    def __init__(self, path: tuple[PathPart, ...], problem: str) -> None:
        super().__init__(problem)
        self.path = path
        self.problem = problem

    def inside(self, *prefix: PathPart) -> FieldError:
        return FieldError((*prefix, *self.path), self.problem)

    def field(self) -> str:
        """`branchRules[0].kind`, the way the runtime plane's errors name fields."""
        named = ""
        for part in self.path:
            named += f"[{part}]" if isinstance(part, int) else (f".{part}" if named else part)
        return named or "body"

    def message(self) -> str:
        return f"{self.field()}: {self.problem}"


class RefRule(NamedTuple):
    """How a git ref selects an environment; `repo` None is the same as absent."""

    kind: RefKind
    value: str
    repo: str | None = None

    def to_json(self) -> dict[str, str]:
        rule = {"kind": self.kind, "value": self.value}
        if self.repo is not None:
            rule["repo"] = self.repo
        return rule


def check_known(body: Mapping[Any, Any], allowed: Iterable[str]) -> None:
    """Unknown fields are refused, so a misspelt one never passes silently."""
    known = tuple(allowed)
    for name in body:
        if not isinstance(name, str):  # YAML can make `on: 1` a boolean key
            raise FieldError((), f"expected field names, got the key {name!r}")
        if name not in known:
            raise FieldError((name,), f"unknown field (expected one of {', '.join(known)})")


def required(body: Mapping[str, Any], name: str) -> Any:
    if name not in body or body[name] is None:
        raise FieldError((name,), "required")
    return body[name]


MAX_TEXT = 1_000
"""Characters in one text field (a description may have ten times as many)."""
MAX_ITEMS = 100
"""Ref-rules or aliases in one list."""


def text(raw: object, name: str, *, allow_empty: bool = False, longest: int = MAX_TEXT) -> str:
    if not isinstance(raw, str):
        raise FieldError((name,), f"must be a string, got {json_type(raw)}")
    if not allow_empty and not raw.strip():
        raise FieldError((name,), "must not be empty")
    if len(raw) > longest:
        raise FieldError((name,), f"at most {longest:,} characters, got {len(raw):,}")
    return raw


def optional_text(raw: object, name: str, *, longest: int = MAX_TEXT) -> str | None:
    """A string, or null; `""` stays `""` (infrastructure tools compare what they sent)."""
    return None if raw is None else text(raw, name, allow_empty=True, longest=longest)


def description(raw: object) -> str | None:
    return optional_text(raw, "description", longest=10 * MAX_TEXT)


def boolean(raw: object, name: str) -> bool:
    if not isinstance(raw, bool):
        raise FieldError((name,), f"must be a boolean, got {json_type(raw)}")
    return raw


def integer(raw: object, name: str, *, minimum: int | None = None) -> int:
    """A JSON integer within 64 bits: typed clients decode these into ints (one `2.0` breaks
    them), and JSON writers refuse wider ones."""
    if isinstance(raw, bool) or not isinstance(raw, int):
        shown = repr(raw) if isinstance(raw, float) else json_type(raw)
        raise FieldError((name,), f"must be an integer, got {shown}")
    if not -(2**63) <= raw < 2**63:
        raise FieldError((name,), f"must be an integer within 64 bits, got {raw}")
    if minimum is not None and raw < minimum:
        raise FieldError((name,), f"must be at least {minimum}, got {raw}")
    return raw


def one_of(raw: object, name: str, allowed: tuple[str, ...]) -> Any:
    if not isinstance(raw, str) or raw not in allowed:
        shown = repr(raw) if isinstance(raw, str) else json_type(raw)
        raise FieldError((name,), f"must be one of {', '.join(allowed)}, got {shown}")
    return raw


def project_slug(raw: object) -> str:
    return text(raw, "slug")


def environment_slug(raw: object) -> str:
    """Trimmed and lowercased on create, as the service does."""
    return text(raw, "slug").strip().lower()


def strings(raw: object, name: str) -> tuple[str, ...]:
    if not isinstance(raw, list):
        raise FieldError((name,), f"must be an array of strings, got {json_type(raw)}")
    _check_count(raw, name)
    for index, item in enumerate(raw):
        try:
            text(item, name, allow_empty=True)
        except FieldError as error:
            raise FieldError((name, index), error.problem) from None
    return tuple(raw)


def _check_count(items: list[Any], name: str) -> None:
    if len(items) > MAX_ITEMS:
        raise FieldError((name,), f"at most {MAX_ITEMS} items, got {len(items)}")


_RULE_FIELDS = ("kind", "value", "repo")


def ref_rules(raw: object, name: str) -> tuple[RefRule, ...]:
    """`[{kind: exact|prefix|glob, value: non-empty string, repo?: string}]`."""
    if not isinstance(raw, list):
        raise FieldError((name,), f"must be an array of ref-rules, got {json_type(raw)}")
    _check_count(raw, name)
    return tuple(_ref_rule(item, name, index) for index, item in enumerate(raw))


def _ref_rule(raw: object, name: str, index: int) -> RefRule:
    try:
        if not isinstance(raw, dict):
            raise FieldError((), f"must be an object {{kind, value, repo?}}, got {json_type(raw)}")
        check_known(raw, _RULE_FIELDS)
        kind = one_of(required(raw, "kind"), "kind", REF_KINDS)
        value = text(required(raw, "value"), "value")
        return RefRule(kind, value, optional_text(raw.get("repo"), "repo"))
    except FieldError as error:
        raise error.inside(name, index) from None
