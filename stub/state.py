"""Everything a running stub remembers: each plane's state (served fixtures, the management
store), armed faults and what clients sent; `reset()` returns it to its start-up state."""

from __future__ import annotations

import operator
import secrets
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import orjson
from aiohttp import web

from stub.config import StubConfig
from stub.coverage import Coverage
from stub.faults.arming import ArmedFaults, Fired
from stub.fixtures import FixtureSet
from stub.keys import KeyPolicy, KeyRules
from stub.management.seed import ManagementSeed
from stub.management.store import ManagementStore
from stub.posthog.documents import VendorDocuments
from stub.rate_limit import Limits, RateLimiter
from stub.recording import BoundedLog, Signal, Tally
from stub.runtime.evaluation import DecisionTable
from stub.validation import FixtureError, Where
from stub.wire import MAX_WRITABLE_DEPTH

Json = dict[str, Any]

RawHeaders = tuple[tuple[bytes, bytes], ...]


class Upstreamed(NamedTuple):
    """In proxy mode, what the upstream answered a forwarded request, and how long it took."""

    status: int
    duration_s: float


UPSTREAMED = web.RequestKey("upstreamed", Upstreamed)
"""Set on a request once it was forwarded and answered (proxy mode)."""


class RequestRecord(NamedTuple):
    """One request as the journal keeps it: references to what aiohttp read and what the
    handler answered, never copies, so recording costs one small object on the hot path;
    `/_test/requests` renders (and redacts) it when read (`stub/control/journal.py`)."""

    seq: int
    method: str
    target: str
    """The raw path with its query, as sent (without a namespace prefix)."""
    route: str | None
    """The route's name; None for a path no route claims."""
    status: int | None
    """None: nothing was answered (the client went away first)."""
    fault: Fired | None
    arrived: float
    """`time.perf_counter()` when it arrived."""
    duration_s: float
    warning: str | None
    """A key served where the service would refuse it."""
    headers: RawHeaders
    """As sent, bounded (`bounded_headers`)."""
    client_gone: bool
    """The client went away before its body arrived, or before its answer could be sent."""
    upstreamed: Upstreamed | None
    """In proxy mode, the upstream's answer."""
    body: bytes | None
    """As read; None: none was read."""
    answer_headers: Mapping[str, str] | None
    """The very mapping aiohttp sent; None: no answer was handed to the transport."""
    answer_body: bytes | None
    """None: no answer, or a body the handler streamed."""
    weight: int
    """What `body` and `answer_body` weigh together: what `--max-recorded-bytes` bounds."""


recorded_bytes: Callable[[RequestRecord], int] = operator.attrgetter("weight")


MAX_RECORDED_HEADERS = 64
MAX_RECORDED_HEADER_BYTES = 1024
"""A request's headers as recorded: at most this many, each value cut to this size (aiohttp
admits 8 KB a field, which 10,000 recorded requests could not afford)."""


def bounded_headers(raw: RawHeaders) -> RawHeaders:
    """A request's headers as recorded: the very tuple aiohttp parsed, unless some are over
    the bounds (a loop, not a generator: this runs on every request)."""
    if len(raw) <= MAX_RECORDED_HEADERS:
        for _, value in raw:
            if len(value) > MAX_RECORDED_HEADER_BYTES:
                break
        else:
            return raw
    return tuple(
        pair
        if len(pair[1]) <= MAX_RECORDED_HEADER_BYTES
        else (pair[0], pair[1][:MAX_RECORDED_HEADER_BYTES])
        for pair in raw[:MAX_RECORDED_HEADERS]
    )


class Served(NamedTuple):
    """A fixture set together with everything derived from it once, at load time."""

    fixtures: FixtureSet
    decisions: DecisionTable
    vendor: VendorDocuments

    @classmethod
    def of(cls, fixtures: FixtureSet) -> Served:
        """Every answer encoded once; FixtureError if a value nests too deep to be written
        inside one (each value was checked alone, and an answer wraps it a level or two)."""
        try:
            return cls(fixtures, DecisionTable(fixtures.flags), VendorDocuments(fixtures))
        except orjson.JSONEncodeError as exc:
            raise FixtureError(
                f"fixtures: a value nests too deep to be written inside an answer ({exc}); "
                f"keep values within {MAX_WRITABLE_DEPTH - 4} levels"
            ) from None


class StubState:
    """One namespace's state, mutable only through these attributes; `reset()` returns it to
    the fixtures it started with."""

    def __init__(
        self,
        config: StubConfig,
        startup: Served,
        *,
        seq: Iterator[int],
        max_recorded: int,
        max_recorded_bytes: int,
        tally: Tally | None = None,
        run_coverage: Coverage | None = None,
    ) -> None:
        self.config = config
        self.coverage = Coverage()
        """What this namespace's requests met (stub/coverage.py): kept across `reset`, and
        given to the run's (`run_coverage`) when the namespace goes."""
        self.coverage.retired = run_coverage
        self._startup = startup
        self.served = startup
        self.recorded = Signal()
        """Fired on every recording, so `/_test/...?waitMs=` long-polls need no sleeping."""
        fire = self.recorded.fire
        self.events: BoundedLog[Json] = BoundedLog(max_recorded, fire, tally)
        """Items of vendor `/batch` requests."""
        self.svc_events: BoundedLog[Json] = BoundedLog(max_recorded, fire, tally)
        """Events of runtime `/v1/capture` requests."""
        self.targets: BoundedLog[Json] = BoundedLog(max_recorded, fire, tally)
        self.requests: BoundedLog[RequestRecord] = BoundedLog(
            max_recorded, fire, tally, size=recorded_bytes, max_bytes=max_recorded_bytes
        )
        self.faults = ArmedFaults()
        self._management: ManagementStore | None = None
        self._management_set_by_test = False
        """Seeded by a test since the last reset: a reload of the files (`--watch`) keeps it."""
        self._startup_keys = self._keys = startup.fixtures.keys
        self.key_policy = self._policy(self._keys)
        self.limiter = RateLimiter(self._limits(self._keys))
        self.key_warnings: dict[int, str] = {}
        """By request seq: a key served where the service would refuse it. Set by the key
        checks, taken by the request's wrapper as it ends (so it never grows)."""
        # Shared by every namespace and never reset: a seq is unique for the life of the process.
        self._seq = seq
        self.generation = 0
        """Counts resets, so a request still running at a reset is not logged into the next test."""
        self.in_flight = 0
        """Requests being served in this namespace now, long-polls included: while any are,
        no bound evicts it."""
        self.gone: str | None = None
        """Why the namespace no longer exists (deleted, evicted): its waiters are told so."""
        self.origin = secrets.randbits(31)
        """Tells this namespace from any other that ever had its name, in this process or a
        stub restarted on the same port (a page watching it must start over)."""
        self.version = 0
        """Counts changes made from the control side (fixtures, faults, limits, a seed), so a
        page watching the namespace knows to look again."""

    @property
    def management(self) -> ManagementStore:
        """Built on first use: most namespaces never see a management request."""
        if self._management is None:
            self._management = ManagementStore(self._startup.fixtures.management_seed)
        return self._management

    def next_seq(self) -> int:
        return next(self._seq)

    def changed(self) -> None:
        """Something a test set changed: wake whoever watches (the inspector page)."""
        self.version += 1
        self.recorded.fire()

    @property
    def management_in_use(self) -> bool:
        """Seeded by fixtures or a test, or called: worth showing."""
        return self._management is not None or self.served.fixtures.management is not None

    def serve(
        self, fixtures: FixtureSet, *, merge: bool = False, prepared: Served | None = None
    ) -> None:
        """Serve these fixtures, or with `merge` overlay them (later wins per flag key and per
        organisation). A management section also re-seeds that plane; without one, the plane
        keeps its state. A merge that would reuse a token or id raises FixtureError before
        anything changes. `prepared`: what is to be served, already derived (off the loop)."""
        later = fixtures.management
        merged = None
        if later is not None and merge:  # checked before anything changes
            merged = self.management.merged_seed(later, Where("body") / "management" / "orgs")
        self.served = prepared or Served.of(
            self.served.fixtures.overlaid_with(fixtures) if merge else fixtures
        )
        if later is not None and merged is not None:
            self.management.merge(later, merged)
        elif later is not None:
            self.management.reseed(later)
        self._management_set_by_test |= later is not None
        if fixtures.keys is not None:
            rules = fixtures.keys
            if merge and self._keys is not None:
                rules = self._keys.overlaid_with(rules)
            self._serve_keys(rules)
        self.changed()

    def seed_management(self, seed: ManagementSeed, *, merge: bool, where: Where) -> None:
        """The management plane from this seed until reset (or with `merge`, these
        organisations replaced or added); FixtureError before anything changes."""
        store = self.management
        if merge:
            store.merge(seed, store.merged_seed(seed, where / "orgs"))
        else:
            store.reseed(seed)
        self._management_set_by_test = True
        self.changed()

    def restart_from(self, previous: Served, current: Served) -> None:
        """The start-up fixtures changed on disk (`--watch`). A namespace made from them serves
        the new set (one assignment: a request sees the old set or the new one) and resets to
        it; one serving fixtures a test posted keeps them until its reset. Keys and the
        management seed are served anew only if their sections changed (a reload does not
        restart rate-limit windows, nor wipe management rows, for an edit elsewhere), and
        only where a test has not set its own."""
        if self._startup is not previous:  # made from fixtures of its own
            return
        self._startup = current
        if self.served is previous:
            self.served = current
        keys = current.fixtures.keys
        if keys != previous.fixtures.keys:
            if self._keys is self._startup_keys:  # else a test set its own: kept till reset
                self._serve_keys(keys)
            self._startup_keys = keys
        seed = current.fixtures.management_seed
        changed = seed != previous.fixtures.management_seed
        if changed and self._management is not None and not self._management_set_by_test:
            self._management.reseed(seed)
        self.changed()

    def reset(self) -> None:
        self.generation += 1
        self.served = self._startup
        self._serve_keys(self._startup_keys)
        if self._management is not None:  # else it is still at its seed
            self._management.reseed(self._startup.fixtures.management_seed)
        self._management_set_by_test = False
        self.faults.clear()
        for log in self._logs():
            log.clear()
        self.changed()

    def release(self, why: str) -> None:
        """The namespace is gone: drop what it recorded, stop counting it, and end every wait
        on it at once (`why` is what the waiters are told)."""
        self.gone = why
        self.coverage.retire()
        for log in self._logs():
            log.detach()
        self.recorded.close()

    def _logs(self) -> tuple[BoundedLog[Any], ...]:
        return (self.events, self.svc_events, self.targets, self.requests)

    def summary(self) -> dict[str, Any]:
        """What the namespace holds, for `/_test/namespaces`."""
        return {
            "flags": len(self.served.fixtures.flags),
            "armedFaults": len(self.faults.to_json()),
            "recorded": {
                "requests": len(self.requests),
                "events": len(self.events),
                "svcEvents": len(self.svc_events),
                "targets": len(self.targets),
            },
        }

    def set_limits(self, limits: Limits) -> None:
        """Rate limits from the control plane: kept with the key rules, so a later `keys:`
        section merged without `rateLimit` does not lift them."""
        self._serve_keys((self._keys or KeyRules())._replace(limits=limits))
        self.changed()

    def _serve_keys(self, rules: KeyRules | None) -> None:
        """Key rules and rate limits as the command line and this `keys:` section say; every
        key's window starts afresh."""
        self._keys = rules
        self.key_policy = self._policy(rules)
        self.limiter.configure(self._limits(rules))

    def _policy(self, rules: KeyRules | None) -> KeyPolicy:
        return KeyPolicy.of(self.config.strict_keys, self.config.api_keys, rules)

    def _limits(self, rules: KeyRules | None) -> Limits:
        if rules is not None and rules.limits is not None:
            return rules.limits
        return Limits(self.config.rate_limit)


REQUEST_STATE = web.RequestKey("state", StubState)
"""The state of the namespace a request picked (set by its route's wrapper)."""


def state_of(request: web.Request) -> StubState:
    return request[REQUEST_STATE]
