"""Key families, recognised by prefix, and the plane each belongs to: one place for both planes.

The spec calls a key sent to the wrong plane "the most common integration error", so every
answer that refuses one says which plane the key belongs to, and never echoes the key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Literal, NamedTuple

from stub import validation
from stub.rate_limit import Limits, is_rate
from stub.validation import FixtureError, Where, mapping, or_empty


class Family(StrEnum):
    SERVER = "server"
    BROWSER = "browser"
    ORGANISATION = "organisation"
    VENDOR = "vendor"
    OTHER = "other"
    """No known prefix: a CLI session token, or any key the stub rule accepts at run time."""


_PREFIXES: tuple[tuple[str, Family], ...] = (
    ("project-api-key_", Family.SERVER),
    ("svc_public_", Family.BROWSER),
    ("svc_org_", Family.ORGANISATION),
    ("phc_", Family.VENDOR),
    ("phs_", Family.VENDOR),
    ("phx_", Family.VENDOR),
)

_DESCRIBED = {
    Family.SERVER: "a server runtime key (project-api-key_...)",
    Family.BROWSER: "a browser key (svc_public_...)",
    Family.ORGANISATION: "an organisation key (svc_org_...)",
    Family.VENDOR: "an analytics-vendor key (phc_/phs_/phx_...)",
    Family.OTHER: "a key of no known family",
}

_HOME = {
    Family.SERVER: "the runtime plane (/v1/flags/evaluate, /v1/capture, /v1/targets/register)",
    Family.BROWSER: "the runtime plane (/v1/flags/evaluate, /v1/capture, /v1/targets/register)",
    Family.ORGANISATION: "the management plane (/v1/projects, /v1/whoami)",
    Family.VENDOR: "the legacy vendor routes (/flags, the definitions poll, /batch)",
    Family.OTHER: "no particular plane",
}


def family_of(key: str) -> Family:
    for prefix, family in _PREFIXES:
        if key.startswith(prefix):
            return family
    return Family.OTHER


REDACTED = "[redacted]"

KEY_PREFIXES = tuple(prefix for prefix, _ in _PREFIXES)
"""How every key of a known family begins: what a redaction looks for in free text."""


NOT_IN_A_WORD = r"(?<![A-Za-z0-9_])"
"""Before a key's prefix: a word's own `phs_` (`graphs_count`) is no key."""
PREFIX_GROUP = "(" + "|".join(re.escape(prefix) for prefix in KEY_PREFIXES) + ")"
KEY_IN_TEXT = NOT_IN_A_WORD + PREFIX_GROUP + r"[A-Za-z0-9._~+/=_-]+"
"""A key of a known family in free text (group 1: its prefix), for every redaction to compile
as it needs (bytes or text, any case)."""
_KEY_IN_PATH = re.compile(NOT_IN_A_WORD + PREFIX_GROUP + r"[^/?#]+")
"""A key of a known family in a path, ending with its segment."""


def without_keys(text: str, keys: Iterable[str]) -> str:
    """`text` with each of `keys` (given, not found: a request's own) reduced to its family."""
    for key in keys:
        if key:
            text = text.replace(key, redacted(key))
    return text


def redacted_path(path: str, presented: Iterable[str] = ()) -> str:
    """A path with the keys in it reduced to their family: of a known family, or one of
    `presented` (the request's own, which a client may have put in its URL)."""
    path = without_keys(path, presented)
    return _KEY_IN_PATH.sub(lambda m: m[1] + REDACTED, path) if "_" in path else path


def redacted(key: str) -> str:
    """A key with only its family's prefix left (`phc_[redacted]`), so a reader can tell which
    key went where without ever seeing one."""
    for prefix, _ in _PREFIXES:
        if key.startswith(prefix):
            return prefix + REDACTED
    return REDACTED


def describe(family: Family) -> str:
    """`a browser key (svc_public_...)`: the family in words, never the key."""
    return _DESCRIBED[family]


def home_of(family: Family) -> str:
    """Where keys of this family belong, in words a user can act on."""
    return _HOME[family]


MANAGEMENT_KEY_HINT = (
    "the management plane takes 'Authorization: Bearer <organisation key (svc_org_...) "
    "or CLI session token>'"
)


def not_for_management(family: Family) -> str | None:
    """Why keys of this family cannot be used on the management plane, or None if they may."""
    if family in (Family.ORGANISATION, Family.OTHER):
        return None
    return f"{describe(family)} belongs to {home_of(family)}, not here; {MANAGEMENT_KEY_HINT}"


ClientPlane = Literal["runtime", "vendor"]
Kind = Literal["server", "browser"]
"""What a configured runtime key is: a server key, or a browser key held to its scope."""

_BROWSER_SCOPE = (
    "a browser key (svc_public_...) may call only /v1/flags/evaluate, /v1/capture and "
    "/v1/targets/register"
)


class Misuse(NamedTuple):
    """A key used where the service would refuse it: `status` under --strict-keys, else a
    warning on a served request. `message` names the family and the plane, never the key."""

    status: int
    message: str


def misuse(family: Family, plane: ClientPlane) -> Misuse | None:
    """Whether a key of this family may call a route of this plane, as the service decides."""
    if family is Family.BROWSER and plane == "vendor":
        return Misuse(403, _BROWSER_SCOPE)
    wrong = (Family.ORGANISATION, Family.VENDOR) if plane == "runtime" else (Family.ORGANISATION,)
    if family in wrong:
        return Misuse(401, f"{describe(family)} belongs to {home_of(family)}, not here")
    return None


class KeyRules(NamedTuple):
    """The `keys:` fixture section: strictness, accepted keys with their kind, rate limits."""

    strict: bool | None = None
    """None: as the command line says (--strict-keys)."""
    accepted: Mapping[str, Kind] = MappingProxyType({})
    limits: Limits | None = None
    """None: as the command line says (--rate-limit)."""

    def overlaid_with(self, later: KeyRules) -> KeyRules:
        return KeyRules(
            later.strict if later.strict is not None else self.strict,
            MappingProxyType({**self.accepted, **later.accepted}),
            later.limits if later.limits is not None else self.limits,
        )


_SECTION_KEYS = ("strict", "accepted", "rateLimit")
_ACCEPTED_KEYS = ("key", "kind")
_LIMIT_KEYS = ("perSecond", "perKey")


def parse_keys_section(raw: object, where: Where) -> KeyRules:
    section = mapping(or_empty(raw), where, _SECTION_KEYS)
    strict = section.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise FixtureError(
            (where / "strict").says(f"expected true or false, got {validation.describe(strict)}")
        )
    accepted: dict[str, Kind] = {}
    listed = section.get("accepted") or []
    if not isinstance(listed, list):
        raise FixtureError(
            (where / "accepted").says(f"expected a list, got {validation.describe(listed)}")
        )
    for index, item in enumerate(listed):
        at = where / "accepted" / str(index)
        entry = mapping(item, at, _ACCEPTED_KEYS)
        key, kind = entry.get("key"), entry.get("kind", "server")
        if not isinstance(key, str) or not key.strip():
            raise FixtureError(
                (at / "key").says(f"expected a non-empty key, got {validation.describe(key)}")
            )
        if kind not in ("server", "browser"):
            raise FixtureError(
                (at / "kind").says(f"expected server or browser, got {validation.describe(kind)}")
            )
        accepted[key.strip()] = "browser" if kind == "browser" else "server"
    limits = None
    if section.get("rateLimit") is not None:
        limits = parse_limits(section["rateLimit"], where / "rateLimit")
    return KeyRules(strict, MappingProxyType(accepted), limits)


def parse_limits(raw: object, where: Where) -> Limits:
    """`{perSecond: N, perKey: {key: N}}`; a rate is a number above 0 (requests a second)."""
    body = mapping(raw, where, _LIMIT_KEYS)
    per_second = body.get("perSecond")
    if per_second is not None:
        per_second = _rate(per_second, where / "perSecond")
    per_key = mapping(or_empty(body.get("perKey")), where / "perKey")
    rates = {key: _rate(rate, where / "perKey" / key) for key, rate in per_key.items()}
    return Limits(per_second, MappingProxyType(rates))


def _rate(raw: object, where: Where) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not is_rate(raw):
        raise FixtureError(
            where.says(f"expected requests a second above 0, got {validation.describe(raw)}")
        )
    return float(raw)


class KeyPolicy:
    """What one stub accepts: keys (none listed: any non-empty key, the spec's stub rule), each
    one's family (a configured kind wins over the prefix), and whether misuse is refused."""

    __slots__ = ("_verdicts", "accepted", "strict")

    def __init__(self, strict: bool, accepted: Mapping[str, Kind | None]) -> None:
        self.strict = strict
        self.accepted = accepted
        self._verdicts: dict[ClientPlane, dict[str, Misuse | None]] = {"runtime": {}, "vendor": {}}

    @classmethod
    def of(cls, strict: bool, api_keys: frozenset[str], rules: KeyRules | None) -> KeyPolicy:
        """The command line's keys and strictness, and a fixture `keys:` section over them."""
        accepted: dict[str, Kind | None] = dict.fromkeys(api_keys)
        if rules is not None:
            accepted.update(rules.accepted)
            strict = rules.strict if rules.strict is not None else strict
        return cls(strict, MappingProxyType(accepted))

    def family(self, key: str) -> Family:
        kind = self.accepted.get(key)
        return _KINDS[kind] if kind is not None else family_of(key)

    def misuse(self, key: str, plane: ClientPlane) -> Misuse | None:
        """Whether this key may call this plane; cached per key, since a client sends the same
        key on every request and this runs on every one."""
        verdicts = self._verdicts[plane]
        verdict = verdicts.get(key, _UNJUDGED)
        if verdict is _UNJUDGED:
            verdict = misuse(self.family(key), plane)
            if len(verdicts) < _MAX_CACHED:
                verdicts[key] = verdict
        return verdict


_MAX_CACHED = 10_000
_UNJUDGED = Misuse(0, "")
_KINDS: Mapping[Kind, Family] = {"server": Family.SERVER, "browser": Family.BROWSER}
