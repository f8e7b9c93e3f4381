"""What the inspector page shows of one namespace, as JSON: what is new since the page's last
look (requests, recorded items), and the small state it redraws whole (armed faults, served
flags, the management plane, the namespaces). The live page and the failed-test snapshot
read the same view; every request in it is rendered by the journal (`control/journal.py`), with
the outcome its coverage cell names (`coverage.py`), and the namespace's coverage comes whole."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from stub.control.redaction import KnownSecrets, redacted_document
from stub.coverage import PROFILES, outcome, report
from stub.http.exchange import coverage_key
from stub.keys import redacted
from stub.namespaces import Namespaces
from stub.recording import BoundedLog
from stub.runtime.flags import Flag
from stub.state import RequestRecord, StubState

MAX_PER_LOOK = 500
"""Requests (and items of each recorded list) one answer carries at most, the newest: a page
that fell behind by more is told how many it missed, never sent the whole backlog. With an
answer at most every 0.2 s, a page costs the stub at most 2,500 summaries a second (about 13 µs
each), however fast requests come; the page draws the newest 500 anyway."""


class Cursor(NamedTuple):
    """How far a page has seen a namespace: which one (a namespace deleted and made again, or
    a stub restarted on the same port, is another), its reset count, how many items each log
    has taken since then, and its control-side version (fixtures, faults, limits). Opaque to
    the page: it sends back the string it was given."""

    origin: int = -1
    generation: int = -1
    requests: int = 0
    events: int = 0
    svc_events: int = 0
    targets: int = 0
    version: int = -1

    @classmethod
    def of(cls, state: StubState) -> Cursor:
        return cls(
            state.origin,
            state.generation,
            state.requests.total(),
            state.events.total(),
            state.svc_events.total(),
            state.targets.total(),
            state.version,
        )

    @classmethod
    def parse(cls, text: str) -> Cursor | None:
        """None for a cursor this stub did not write (the page starts over)."""
        parts = text.split(".")
        if len(parts) != len(cls._fields) or not all(p.isascii() and p.isdigit() for p in parts):
            return None
        return cls(*map(int, parts))

    def __str__(self) -> str:
        return ".".join(map(str, self))

    def leads_to(self, now: Cursor) -> bool:
        """`now` is this same namespace later on: nothing the page holds is stale."""
        same = (self.origin, self.generation) == (now.origin, now.generation)
        return same and all(
            seen <= current for seen, current in zip(self[2:], now[2:], strict=True)
        )


def _kept_before(state: StubState) -> Cursor:
    """A cursor just before everything the namespace keeps: a fresh look sends all of it, and
    what the logs dropped long ago is not counted as skipped."""
    return Cursor(
        state.origin,
        state.generation,
        state.requests.dropped,
        state.events.dropped,
        state.svc_events.dropped,
        state.targets.dropped,
    )


def view(
    state: StubState,
    namespaces: Namespaces,
    name: str,
    since: Cursor | None,
    request_json: Callable[[RequestRecord], object],
    known: KnownSecrets,
    *,
    everything: bool = False,
) -> dict[str, Any]:
    """Everything new since `since` (None: everything kept); `request_json` renders each
    request (a summary for the live page, in full for a snapshot); `known`: the secrets the
    stub knows, out of the recorded items too. At most MAX_PER_LOOK requests, or with
    `everything`, all the journal keeps."""
    now = Cursor.of(state)
    fresh = since is None or not since.leads_to(now)
    seen = _kept_before(state) if since is None or fresh else since
    most = None if everything else MAX_PER_LOOK
    requests, skipped = _newest(state.requests, now.requests - seen.requests, most)
    shown: dict[str, Any] = {
        "cursor": str(now),
        "namespace": name,
        "fresh": fresh,
        "requests": [request_json(record) for record in requests],
        "skipped": skipped,
        "journal": {
            "kept": len(state.requests),
            "dropped": state.requests.dropped,
            "bytes": state.requests.bytes,
        },
        "recorded": {
            "events": _shown(state.events, now.events - seen.events, most, known),
            "svcEvents": _shown(state.svc_events, now.svc_events - seen.svc_events, most, known),
            "targets": _shown(state.targets, now.targets - seen.targets, most, known),
        },
        "faults": state.faults.to_json(),
        "rateLimit": _rate_limit(state),
        "namespaces": namespaces.to_json(),
        "coverage": _coverage(state),
    }
    if fresh or seen.version != now.version:
        shown["flags"] = [_flag(flag) for flag in state.served.fixtures.flags.values()]
    if state.management_in_use:
        shown["management"] = state.management.snapshot()
    return shown


def with_outcome(
    render: Callable[[RequestRecord], dict[str, Any]],
) -> Callable[[RequestRecord], dict[str, Any]]:
    """`render`, each request with its `outcome` added: the words of the coverage cell it
    counted in (`ok`, `401`, `fault 500`, `rate limited`, `no answer`), so that a cell of the
    coverage tab picks out the requests that filled it."""
    return lambda record: render(record) | {"outcome": outcome_of(record)}


def outcome_of(record: RequestRecord) -> str:
    """The outcome of the cell `record` counted in."""
    return outcome(coverage_key(record.route, record.status, record.fault))


def _coverage(state: StubState) -> dict[str, Any]:
    """The namespace's coverage as `GET /_test/coverage` gives it, every profile held: a few
    dozen cells, drawn whole each time, like the faults."""
    return report("namespace", state.coverage, PROFILES.values(), state.served.fixtures.flags)


def _shown(log: BoundedLog[Any], new: int, most: int | None, known: KnownSecrets) -> list[Any]:
    """What clients recorded, keys by family only and the known secrets hidden
    (`/_test/events` gives them verbatim)."""
    return [known.in_document(redacted_document(item)) for item in _newest(log, new, most)[0]]


def _newest(log: BoundedLog[Any], new: int, most: int | None) -> tuple[list[Any], int]:
    """The last `new` items a log took that it still keeps (at most `most` of them), oldest
    first, and how many of those `new` are not among them."""
    kept = log.snapshot()
    wanted = min(new, len(kept), len(kept) if most is None else most)
    return (kept[len(kept) - wanted :] if wanted else []), new - wanted


def _rate_limit(state: StubState) -> dict[str, Any]:
    """The limits, each per-key one's key reduced to its family (with its place in the list,
    to tell two of a family apart)."""
    limits = state.limiter.limits
    per_key = [
        {"key": f"{redacted(key)} #{n}", "perSecond": rate}
        for n, (key, rate) in enumerate(limits.per_key.items(), 1)
    ]
    return {"perSecond": limits.per_second, "perKey": per_key}


def _flag(flag: Flag) -> dict[str, Any]:
    return {
        "key": flag.key,
        "type": flag.type,
        "value": flag.value,
        "variant": flag.variant,
        "enabled": flag.enabled,
        "reason": flag.reason,
        "conditional": flag.is_conditional,
    }
