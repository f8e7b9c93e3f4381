"""Bounded, ordered logs of what clients sent: a deque, a visible `dropped` count, a seq."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class BoundedLog(Generic[T]):
    """Keeps the newest `limit` items; counts what it had to drop so users can see it."""

    __slots__ = ("_items", "dropped")

    def __init__(self, limit: int) -> None:
        self._items: deque[T] = deque(maxlen=limit)
        self.dropped = 0

    def append(self, item: T) -> None:
        if len(self._items) == self._items.maxlen:
            self.dropped += 1
        self._items.append(item)

    def extend(self, items: Iterable[T]) -> None:
        for item in items:
            self.append(item)

    def snapshot(self) -> list[T]:
        return list(self._items)

    def clear(self) -> None:
        self._items.clear()
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._items)
