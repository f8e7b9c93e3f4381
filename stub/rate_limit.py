"""Per-key rate limits: a fixed window per key, decided without an await (so a count is exact
however many requests arrive at once), bounded in keys."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

MAX_RATE = 1e9


def is_rate(value: float) -> bool:
    """Requests a second a limit may be: above 0, and finite enough to count."""
    return 0 < value < MAX_RATE


MAX_TRACKED_KEYS = 10_000
"""Windows kept at once; the least recently used key's goes first (it starts afresh)."""


class Limits(NamedTuple):
    """Requests per second a key may make: `per_key` overrides `per_second` (None: no limit)."""

    per_second: float | None = None
    per_key: Mapping[str, float] = MappingProxyType({})

    def of(self, key: str) -> float | None:
        return self.per_key.get(key, self.per_second)

    @property
    def active(self) -> bool:
        return self.per_second is not None or bool(self.per_key)

    def to_json(self) -> dict[str, Any]:
        return {"perSecond": self.per_second, "perKey": dict(self.per_key)}


class RateLimiter:
    """A fixed window per key: `rate` requests a second, counted from the key's first request
    in the window (a window lasts a second, or 1/rate seconds for less than one a second), so
    200 requests at once at a limit of 50 serve exactly 50, however long the burst takes."""

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._windows: dict[str, tuple[float, int]] = {}
        """key -> (when its window ends, requests left in it)"""
        self.limits = limits
        self.active = limits.active
        """False: no key is limited, and callers need not ask (it is on every request)."""

    def configure(self, limits: Limits) -> None:
        """New limits; every key starts again with a fresh window."""
        self.limits = limits
        self.active = limits.active
        self._windows.clear()

    def reset(self) -> None:
        self._windows.clear()

    def take(self, key: str) -> int | None:
        """None when the key may call now (and it is counted); else the whole seconds, at
        least 1, until it may call again (the `Retry-After`)."""
        rate = self.limits.of(key)
        if rate is None:
            return None
        now = self._clock()
        ends, left = self._windows.pop(key, (0.0, 0))
        if now >= ends:
            length = max(1.0, 1 / rate)
            ends, left = now + length, max(1, math.floor(rate * length))
        if left > 0:
            self._keep(key, ends, left - 1)
            return None
        self._keep(key, ends, 0)
        return max(1, math.ceil(ends - now))

    def _keep(self, key: str, ends: float, left: int) -> None:
        self._windows[key] = (ends, left)  # re-inserted: the dict's order is recency
        if len(self._windows) > MAX_TRACKED_KEYS:
            del self._windows[next(iter(self._windows))]
