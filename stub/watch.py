"""`--watch`: serve the fixture files anew when they change on disk.

A poll of the files' `stat` (a few files, every POLL_S) runs beside the server, never in a
request: a request costs the same with or without `--watch`. A change is loaded once it has
settled (two polls alike), so a file caught half-written is not read; a valid set replaces the
start-up one in a single assignment per namespace (see `Namespaces.reload`), an invalid one
leaves it served and logs one line. Files are watched by path, not by open handle, so an
editor that saves by writing a new file and renaming it over the old one is seen like any write.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

from aiohttp import web

from stub.fixtures import FIXTURE_SUFFIXES, built_off_loop, load_fixture_paths
from stub.state import Served
from stub.validation import FixtureError

POLL_S = 0.25
log = logging.getLogger("stub")

Stamp = tuple[str, int, int, int]
"""path, inode, size, modification time in ns: what changes when a file is written or replaced."""


def stamps(paths: Sequence[Path]) -> tuple[Stamp, ...]:
    """What the watched paths look like now; a directory counts its fixture files (one added
    or removed is a change too), a missing path stamps as all zeros."""
    found: list[Stamp] = []
    for path in paths:
        try:
            listed = sorted(os.scandir(path), key=lambda entry: entry.name)
        except NotADirectoryError:
            found.append(_stamp(str(path)))
        except OSError:  # missing, or unreadable: loading will say which
            found.append((str(path), 0, 0, 0))
        else:
            found.extend(_stamp(entry.path) for entry in listed if _loaded(entry))
    return tuple(found)


def _loaded(entry: os.DirEntry[str]) -> bool:
    """What the loader reads of a directory (see fixtures._expand)."""
    return Path(entry.name).suffix in FIXTURE_SUFFIXES and entry.is_file()


def _stamp(path: str) -> Stamp:
    try:
        seen = os.stat(path)
    except OSError:
        return (path, 0, 0, 0)
    return (path, seen.st_ino, seen.st_size, seen.st_mtime_ns)


def watching(
    paths: Sequence[Path],
    reload: Callable[[Served], None],
    failed: Callable[[str], None],
    poll_s: float = POLL_S,
) -> Callable[[web.Application], AsyncIterator[None]]:
    """An app cleanup context that polls `paths` while the app runs: `reload(served)` with
    every valid change, `failed(message)` with every invalid one. The files as they are now
    are the baseline: called as the app is built, just after they were loaded."""
    baseline = stamps(paths)

    async def context(app: web.Application) -> AsyncIterator[None]:
        task = asyncio.create_task(_poll(paths, baseline, reload, failed, poll_s))
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    return context


async def _poll(
    paths: Sequence[Path],
    loaded: tuple[Stamp, ...],
    reload: Callable[[Served], None],
    failed: Callable[[str], None],
    poll_s: float,
) -> None:
    seen = loaded
    while True:
        await asyncio.sleep(poll_s)
        now = stamps(paths)
        if now != seen:  # still being written: look again once it has settled
            seen = now
            continue
        if now == loaded:
            continue
        try:
            # read and derived off the event loop: a large file must not stall requests
            served = await built_off_loop(lambda: Served.of(load_fixture_paths(paths)))
            if stamps(paths) != now:  # written again while being read: maybe half of it
                continue
            reload(served)
        except FixtureError as exc:
            _refused(failed, str(exc))
        except Exception as exc:  # the watcher outlives any surprise, and says what it was
            _refused(failed, f"{type(exc).__name__}: {exc}")
        else:
            names = ", ".join(str(path) for path in paths)
            log.info("fixtures reloaded from %s: %d flag(s)", names, len(served.fixtures.flags))
        loaded = now


def _refused(failed: Callable[[str], None], problem: str) -> None:
    message = " ".join(problem.split())  # one log line, whatever the parser said
    log.error("fixtures not reloaded, the previous set is still served: %s", message)
    failed(message)
