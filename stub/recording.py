"""Bounded, ordered logs of what clients sent (a deque, a visible `dropped` count), and the
signal that lets a test wait for them instead of sleeping."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Signal:
    """Wakes every waiter when something is recorded; costs one check when nobody waits."""

    def __init__(self) -> None:
        self._waiters: list[asyncio.Future[None]] = []
        self.closed = False
        """Nothing more will be recorded: waiting ends at once."""

    def close(self) -> None:
        """Wake every waiter for good (the namespace is gone)."""
        self.closed = True
        self.fire()

    def fire(self) -> None:
        if self._waiters:
            for waiter in self._waiters:
                if not waiter.done():
                    waiter.set_result(None)
            self._waiters.clear()

    async def wait_until(self, ready: Callable[[], bool], timeout_s: float) -> bool:
        """True once `ready()` holds, False if `timeout_s` passes first or the signal closes."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not ready():
            if self.closed:
                return False
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            waiter = loop.create_future()
            self._waiters.append(waiter)
            await asyncio.wait([waiter], timeout=remaining)
            if not waiter.done():  # timed out: a waiter that left costs the next fire nothing
                self._waiters.remove(waiter)
        return True


class Tally:
    """Items (and the bytes of their bodies) kept by many logs together (every named
    namespace's), so their sum can be bounded where no one log's bound would do."""

    __slots__ = ("bytes", "kept")

    def __init__(self) -> None:
        self.kept = 0
        self.bytes = 0


class BoundedLog(Generic[T]):
    """Keeps the newest `limit` items (and, given their `size`, no more than `max_bytes` of
    them, the newest always); counts what it had to drop so users can see it, and what it
    keeps in `tally`, if given."""

    __slots__ = ("_items", "_max_bytes", "_on_change", "_size", "_tally", "bytes", "dropped")

    def __init__(
        self,
        limit: int,
        on_change: Callable[[], None] = lambda: None,
        tally: Tally | None = None,
        *,
        size: Callable[[T], int] | None = None,
        max_bytes: int = 0,
    ) -> None:
        self._items: deque[T] = deque(maxlen=limit)
        self._on_change = on_change
        self._tally = tally
        self._size = size
        self._max_bytes = max_bytes
        self.dropped = 0
        self.bytes = 0
        """What the kept items weigh, by `size` (0 when not sized)."""

    def append(self, item: T) -> None:
        self._add(item)
        self._on_change()

    def extend(self, items: Iterable[T]) -> None:
        for item in items:
            self._add(item)
        self._on_change()

    def snapshot(self) -> list[T]:
        return list(self._items)

    def newest_first(self) -> Iterator[T]:
        """Without a copy: for a search that most often wants a recent item (no await while
        it runs)."""
        return reversed(self._items)

    def total(self) -> int:
        """Items appended since the last clear, dropped ones included: a cursor for readers
        that want only what is new."""
        return self.dropped + len(self._items)

    def clear(self) -> None:
        if self._tally is not None:
            self._tally.kept -= len(self._items)
            self._tally.bytes -= self.bytes
        self._items.clear()
        self.dropped = 0
        self.bytes = 0

    def detach(self) -> None:
        """Empty, and no longer counted: a late request may still append to a log whose
        namespace is gone, and must not count against the ones that remain."""
        self.clear()
        self._tally = None

    def __len__(self) -> int:
        return len(self._items)

    def _add(self, item: T) -> None:
        items, size, tally = self._items, self._size, self._tally
        weight = 0 if size is None else size(item)
        if len(items) == items.maxlen:
            self.dropped += 1
            if size is not None:
                weight -= size(items[0])
        elif tally is not None:
            tally.kept += 1
        items.append(item)
        if weight:  # inline, not a call: every request is recorded here
            self.bytes += weight
            if tally is not None:
                tally.bytes += weight
        if self.bytes > self._max_bytes:  # a light item after a heavy one drops it too
            while self.bytes > self._max_bytes and len(items) > 1:
                self._drop_oldest()

    def _drop_oldest(self) -> None:
        assert self._size is not None
        weight = self._size(self._items.popleft())
        self.dropped += 1
        self.bytes -= weight
        if self._tally is not None:
            self._tally.kept -= 1
            self._tally.bytes -= weight
