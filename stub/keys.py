"""Key families, recognised by prefix, and the plane each belongs to: one place for both planes.

The spec calls a key sent to the wrong plane "the most common integration error", so every
answer that refuses one says which plane the key belongs to, and never echoes the key.
"""

from __future__ import annotations

from enum import StrEnum


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


def not_for_management(key: str) -> str | None:
    """Why a key cannot be used on the management plane, or None when its family may be."""
    family = family_of(key)
    if family in (Family.ORGANISATION, Family.OTHER):
        return None
    return f"{describe(family)} belongs to {home_of(family)}, not here; {MANAGEMENT_KEY_HINT}"
