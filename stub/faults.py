"""The fault vocabulary and the arming document: what can break, where, and for how long."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .http import invalid_body, json_type


class FaultMode(StrEnum):
    """Each mode is named by what the client observes."""

    DELAY = "delay"
    UNAUTHORIZED = "401"
    RATE_LIMITED = "429"
    SERVER_ERROR = "500"
    INVALID_JSON = "invalid_json"
    TRUNCATED = "truncated"
    QUOTA_LIMITED = "quota_limited"


_MODES = tuple(mode.value for mode in FaultMode)

SELECTORS = ("evaluate", "capture", "register", "flags", "definitions", "batch")
"""Route names a fault can target; `all` stands for every one of them."""

DEFAULT_DELAY_MS = 10_000  # longer than every client's 3000 ms timeout, so `delay` times out
DEFAULT_RETRY_AFTER_S = 1
_ARMING_KEYS = ("mode", "applyTo", "delayMs", "ttlRequests", "status", "body", "retryAfter")


@dataclass(frozen=True, slots=True)
class FaultSpec:
    mode: FaultMode
    routes: frozenset[str]
    delay_ms: int = DEFAULT_DELAY_MS
    ttl_requests: int | None = None
    status: int | None = None
    body: Any = None
    retry_after_s: int = DEFAULT_RETRY_AFTER_S

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode.value,
            "applyTo": sorted(self.routes),
            "delayMs": self.delay_ms,
            "ttlRequests": self.ttl_requests,
            "status": self.status,
            "body": self.body,
            "retryAfter": self.retry_after_s,
        }


def parse_arming(document: Mapping[str, Any]) -> FaultSpec | None:
    """Validate a `POST /_test/fault` body; None means `{"mode": "none"}` (clear)."""
    unknown = sorted(set(document) - set(_ARMING_KEYS))
    if unknown:
        raise invalid_body(
            f"{unknown[0]}: unknown field (expected one of {', '.join(_ARMING_KEYS)})"
        )
    mode = document.get("mode")
    if mode == "none":
        return None
    return FaultSpec(
        mode=parse_mode(mode),
        routes=_parse_selectors(document.get("applyTo", "all")),
        delay_ms=_count(document, "delayMs", DEFAULT_DELAY_MS),
        ttl_requests=_optional_positive(document, "ttlRequests"),
        status=_optional_status(document),
        body=document.get("body"),
        retry_after_s=_count(document, "retryAfter", DEFAULT_RETRY_AFTER_S),
    )


def parse_mode(raw: object) -> FaultMode:
    if isinstance(raw, str) and raw in _MODES:
        return FaultMode(raw)
    valid = ", ".join(["none", *_MODES])
    shown = repr(raw) if isinstance(raw, str) else json_type(raw)
    raise invalid_body(f"mode: unknown fault mode {shown} (valid: {valid})")


def _parse_selectors(raw: object) -> frozenset[str]:
    names = [raw] if isinstance(raw, str) else raw
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise invalid_body(
            f"applyTo: expected a selector or a non-empty list of selectors, got {json_type(raw)}"
        )
    routes: set[str] = set()
    for name in names:
        if name == "all":
            routes.update(SELECTORS)
        elif name in SELECTORS:
            routes.add(name)
        else:
            raise invalid_body(
                f"applyTo: unknown selector {name!r} (valid: all, {', '.join(SELECTORS)})"
            )
    return frozenset(routes)


def _count(document: Mapping[str, Any], name: str, default: int) -> int:
    raw = document.get(name, default)
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        raise invalid_body(f"{name}: expected a non-negative integer, got {json_type(raw)} {raw!r}")
    return raw


def _optional_positive(document: Mapping[str, Any], name: str) -> int | None:
    raw = document.get(name)
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise invalid_body(f"{name}: expected a positive integer, got {json_type(raw)} {raw!r}")
    return raw


def _optional_status(document: Mapping[str, Any]) -> int | None:
    raw = document.get("status")
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or not 100 <= raw <= 599:
        raise invalid_body(f"status: expected an HTTP status from 100 to 599, got {raw!r}")
    return raw
