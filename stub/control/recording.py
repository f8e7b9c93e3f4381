"""Bounded, ordered logs of what clients sent (a deque, a visible `dropped` count), and the
signal that lets a test wait for them instead of sleeping."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class Signal:
    """Wakes every waiter when something is recorded; costs one check when nobody waits."""

    def __init__(self) -> None:
        self._waiters: list[asyncio.Future[None]] = []

    def fire(self) -> None:
        if self._waiters:
            for waiter in self._waiters:
                if not waiter.done():
                    waiter.set_result(None)
            self._waiters.clear()

    async def wait_until(self, ready: Callable[[], bool], timeout_s: float) -> bool:
        """True once `ready()` holds, False if `timeout_s` passes first."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not ready():
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            waiter = loop.create_future()
            self._waiters.append(waiter)
            await asyncio.wait([waiter], timeout=remaining)
        return True


class BoundedLog(Generic[T]):
    """Keeps the newest `limit` items; counts what it had to drop so users can see it."""

    __slots__ = ("_items", "_on_change", "dropped")

    def __init__(self, limit: int, on_change: Callable[[], None] = lambda: None) -> None:
        self._items: deque[T] = deque(maxlen=limit)
        self._on_change = on_change
        self.dropped = 0

    def append(self, item: T) -> None:
        self._add(item)
        self._on_change()

    def extend(self, items: Iterable[T]) -> None:
        for item in items:
            self._add(item)
        self._on_change()

    def snapshot(self) -> list[T]:
        return list(self._items)

    def clear(self) -> None:
        self._items.clear()
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._items)

    def _add(self, item: T) -> None:
        if len(self._items) == self._items.maxlen:
            self.dropped += 1
        self._items.append(item)
