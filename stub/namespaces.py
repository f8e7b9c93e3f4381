"""Namespaces: whole, independent stub states on one server, so tests sharing a stub never see
each other. A request picks its namespace by a path prefix (`/ns/{name}/...`), else the
`X-Svc-Test-Namespace` header, else a key bound to a namespace, else it gets the default one
(the stub as it is without namespaces)."""

from __future__ import annotations

import itertools
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

from aiohttp import hdrs, web

from stub.config import StubConfig
from stub.coverage import Coverage
from stub.fixtures import FixtureSet
from stub.recording import Tally
from stub.state import Served, StubState
from stub.wire import ApiError, presented_key_in, read_json_object, request_value

log = logging.getLogger("stub")

DEFAULT = "default"
"""The namespace of requests that name none; `/ns/default/...` reaches it too."""
HEADER = "X-Svc-Test-Namespace"
PREFIX = "/ns/"
NAME_RULE = "1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")

PREFIXED = web.RequestKey("namespace", str)
"""The namespace named by the request's path prefix, which has been taken off its path."""

NAMED_SHARE = 8
"""A named namespace keeps at most 1/NAMED_SHARE of `--max-recorded-bytes` of bodies."""

MAX_REMEMBERED_EVICTIONS = 10_000
"""Evicted names remembered (so a late use is a clear 410, not a fresh, empty namespace)."""


def is_name(name: str) -> bool:
    return _NAME.fullmatch(name) is not None


def check_name(name: str, where: str) -> str:
    if not is_name(name):
        message = f"{where}: {name!r} is not a namespace name ({NAME_RULE})"
        raise ApiError(400, "INVALID_NAMESPACE", message)
    return name


class Namespaces:
    """The default namespace and up to `max_count` named ones, least recently used evicted
    first; keys bound to a namespace route requests that name none."""

    def __init__(self, config: StubConfig, fixtures: FixtureSet) -> None:
        self.config = config
        self.started = time.perf_counter()
        """The origin of every request's `arrivedMs`: one monotonic clock for the process."""
        self.started_at = time.time()
        """The same moment on the wall clock, so a page can show when a request arrived."""
        self._seq = itertools.count(1)
        self.retired = Coverage()
        """What the requests of namespaces gone met (and counts cleared by a test)."""
        # Parsed and derived once: every namespace created from the start-up fixtures shares it.
        self._startup = Served.of(fixtures)
        self.default = self._new(self._startup, config.max_recorded)  # not in the tally
        self._named: OrderedDict[str, StubState] = OrderedDict()
        self._owners: dict[str, str] = {}
        """key -> the name of the namespace it is bound to"""
        self._keys: dict[str, tuple[str, ...]] = {}
        """name -> the keys bound to it"""
        self._evicted: OrderedDict[str, None] = OrderedDict()
        self._evicted_keys: OrderedDict[str, str] = OrderedDict()
        """key -> the evicted namespace it was bound to: its requests get the same 410."""
        self.evictions = 0
        self._tally = Tally()
        """What every named namespace records, together."""
        self.reloads = 0
        self.reload_error: str | None = None
        """Why the last change to the watched fixture files was refused (None: it was not)."""

    def reload(self, served: Served) -> None:
        """New start-up fixtures (`--watch`): every namespace made from the old ones moves on."""
        previous, self._startup = self._startup, served
        for state in (self.default, *self._named.values()):
            state.restart_from(previous, self._startup)
        self.reloads += 1
        self.reload_error = None

    def reload_failed(self, message: str) -> None:
        self.reload_error = message

    def resolve(
        self,
        prefixed: str | None,
        headers: Mapping[str, str],
        client: web.BaseRequest | None = None,
        *,
        create: bool = True,
    ) -> StubState | None:
        """The one namespace resolver, for both lanes, the control routes and proxy mode: the
        name the path prefix gave (`prefixed`, taken off before routing: http/target.py) or the
        header gives; else, for a `client` request, the namespace a key in its headers (or the
        definitions poll's `?token=`) is bound to; else the default one. Not `create`: only
        one that exists (a 404, or an evicted one's 410). None: keys are bound and only the
        client's body can say which (`resolve_by_body`)."""
        name = named_in(prefixed, headers)
        if name is not None:
            return self.named(name, create=create)
        if client is None or not (self._owners or self._evicted_keys):  # keyed, inlined
            return self.default
        keys = (presented_key_in(headers), client.query.get("token", "").strip())
        for key in keys:
            owned = self._owned_by(key) if key else None
            if owned is not None:
                return owned
        return self.default if any(keys) or not client.body_exists else None

    async def resolve_by_body(self, request: web.Request) -> StubState:
        """The namespace of the project key a PostHog request carries in its body, where
        `resolve` could not tell."""
        if request.body_exists:
            try:
                body = await read_json_object(request)  # cached: the admission reads it again
            except ApiError:
                return self.default  # the handler answers the bad body
            for field in ("api_key", "token"):
                key = body.get(field)
                if isinstance(key, str):
                    owned = self._owned_by(key.strip())
                    if owned is not None:
                        return owned
        return self.default

    @property
    def bound_keys(self) -> frozenset[str]:
        """Every key bound to a namespace now (the journal's redaction looks for each)."""
        return frozenset(self._owners)

    @property
    def keyed(self) -> bool:
        """Keys are bound to namespaces (or were, to evicted ones): a key may pick one."""
        return bool(self._owners or self._evicted_keys)

    def resolve_preflight(self, request: web.Request) -> StubState | None:
        """The namespace a browser's preflight belongs to, where it can tell: the one its path
        prefix names, else the default one, unless the request it precedes names another by
        header or by a bound key (a preflight carries neither value: None)."""
        prefixed = request_value(request, PREFIXED)
        announced = request.headers.get(hdrs.ACCESS_CONTROL_REQUEST_HEADERS, "").lower()
        if prefixed is None and (HEADER.lower() in announced or self._owners):
            return None
        return self.resolve(prefixed, {})

    def _owned_by(self, key: str) -> StubState | None:
        """The namespace `key` is bound to (a 410 if that one was evicted), or None."""
        owner = self._owners.get(key) or self._evicted_keys.get(key)
        return None if owner is None else self.named(owner)

    def named(self, name: str, *, create: bool = True) -> StubState:
        """The namespace `name`, created from the start-up fixtures on first use (or, not
        `create`, a 404)."""
        if name == DEFAULT:
            return self.default
        if self._over_bounds():
            self._shed(keep=name)
        state = self._named.get(name)
        if state is not None:
            self._named.move_to_end(name)
            return state
        if name in self._evicted:
            raise ApiError(
                410,
                "NAMESPACE_EVICTED",
                f"namespace {name!r} was evicted: it was the least recently used when "
                f"namespaces went over their bounds ({self.config.max_namespaces} namespaces, "
                f"{self.config.max_recorded_in_namespaces} recorded entries or "
                f"{self.config.max_recorded_bytes} bytes of bodies together); delete "
                "namespaces when done, or raise --max-namespaces, "
                "--max-recorded-in-namespaces or --max-recorded-bytes (creating it again "
                "starts it afresh)",
            )
        if not create:
            message = f"namespace: no namespace {name!r} (not made yet, or deleted)"
            raise ApiError(404, "NOT_FOUND", message)
        return self._add(name, self._startup, ())

    def create(self, name: str, served: Served | None, keys: Iterable[str]) -> StubState:
        """A new namespace, serving its own fixtures (else the start-up ones), with bound keys;
        ApiError 409 if it exists or a key is bound elsewhere."""
        if name == DEFAULT:
            message = "name: 'default' is the default namespace, always there (POST /_test/reset)"
            raise ApiError(409, "NAMESPACE_EXISTS", message)
        if name in self._named:
            message = f"name: namespace {name!r} exists (DELETE /_test/namespaces/{name} first)"
            raise ApiError(409, "NAMESPACE_EXISTS", message)
        keys = tuple(dict.fromkeys(keys))
        for index, key in enumerate(keys):
            owner = self._owners.get(key)
            if owner is not None:
                raise ApiError(
                    409,
                    "KEY_BOUND",
                    f"keys[{index}]: already bound to namespace {owner!r}; a key routes to one "
                    f"namespace at a time (if its test never finished, DELETE "
                    f"/_test/namespaces/{owner})",
                )
        return self._add(name, served or self._startup, keys)

    def delete(self, name: str, how: str = "DELETE /_test/namespaces/{name}") -> bool:
        self._forget_eviction(name)
        state = self._named.pop(name, None)
        if state is None:
            return False
        self._unbind(name)
        state.release(f"namespace {name!r} was deleted ({how.format(name=name)})")
        return True

    def delete_all(self) -> int:
        names = list(self._named)
        for name in names:
            self.delete(name, "DELETE /_test/namespaces")
        return len(names)

    def describe(self, name: str) -> dict[str, Any]:
        state = self.default if name == DEFAULT else self._named.get(name)
        if state is None:
            raise ApiError(404, "NOT_FOUND", f"name: no namespace {name!r}")
        return {"name": name, "boundKeys": len(self._keys.get(name, ())), **state.summary()}

    def run_coverage(self) -> Coverage:
        """What every request of the run met: every namespace's count, gone ones' too."""
        run = Coverage()
        for counted in (
            self.retired,
            self.default.coverage,
            *(s.coverage for s in self._named.values()),
        ):
            run.add(counted)
        return run

    def fixture_flags(self) -> set[str]:
        """Every flag the run's fixtures hold: the start-up fixtures' and each namespace's."""
        flags = set(self._startup.fixtures.flags)
        for state in (self.default, *self._named.values()):
            flags.update(state.served.fixtures.flags)
        return flags

    def to_json(self) -> dict[str, Any]:
        return {
            "namespaces": [self.describe(name) for name in (DEFAULT, *self._named)],
            "count": len(self._named),
            "max": self.config.max_namespaces,
            "evicted": self.evictions,
            "recorded": self._tally.kept,
            "maxRecorded": self.config.max_recorded_in_namespaces,
            "recordedBytes": self._tally.bytes,
            "maxRecordedBytes": self.config.max_recorded_bytes,
        }

    def _add(self, name: str, served: Served, keys: tuple[str, ...]) -> StubState:
        self._forget_eviction(name)
        while len(self._named) >= self.config.max_namespaces:
            idle = self._least_recently_used_idle()
            if idle is None:  # every one is in use: over the bound until one is idle again
                break
            self._evict(idle, "namespaces")
        state = self._named[name] = self._new(
            served, self.config.namespace_max_recorded, self._tally
        )
        if keys:
            self._keys[name] = keys
            self._owners.update(dict.fromkeys(keys, name))
            for key in keys:
                self._evicted_keys.pop(key, None)
        return state

    def _shed(self, keep: str) -> None:
        """Evict the least recently used namespaces until what they record together is back
        within bounds; never `keep`, the one a request is about to use."""
        while self._over_bounds():
            oldest = self._least_recently_used_idle(keep)
            if oldest is None:
                return
            over_bytes = self._tally.bytes > self.config.max_recorded_bytes
            self._evict(oldest, "bytes of recorded bodies" if over_bytes else "recorded entries")

    def _over_bounds(self) -> bool:
        tally, config = self._tally, self.config
        return (
            tally.kept > config.max_recorded_in_namespaces
            or tally.bytes > config.max_recorded_bytes
        )

    def _least_recently_used_idle(self, keep: str | None = None) -> str | None:
        """The namespace a bound may evict: the least recently used with no request in flight
        (a long-poll (`?waitMs=`) is one), other than `keep`."""
        return next(
            (n for n, state in self._named.items() if n != keep and not state.in_flight), None
        )

    def _evict(self, name: str, bound: str) -> None:
        state = self._named.pop(name)
        for key in self._keys.get(name, ()):
            self._evicted_keys[key] = name
        while len(self._evicted_keys) > MAX_REMEMBERED_EVICTIONS:
            self._evicted_keys.popitem(last=False)
        self._unbind(name)
        state.release(f"namespace {name!r} was evicted (over the bound on {bound})")
        self.evictions += 1
        self._evicted[name] = None
        if len(self._evicted) > MAX_REMEMBERED_EVICTIONS:
            self._evicted.popitem(last=False)
        log.warning(
            "namespace %r evicted: the least recently used, over the bound on %s", name, bound
        )

    def _forget_eviction(self, name: str) -> None:
        """Deleted or created afresh: its name and its old keys no longer answer 410."""
        if name in self._evicted:
            del self._evicted[name]
            for key in [key for key, owner in self._evicted_keys.items() if owner == name]:
                del self._evicted_keys[key]

    def _unbind(self, name: str) -> None:
        for key in self._keys.pop(name, ()):
            del self._owners[key]

    def _new(self, served: Served, max_recorded: int, tally: Tally | None = None) -> StubState:
        """The default namespace may keep all `--max-recorded-bytes` of bodies; a named one an
        eighth, so one heavy test cannot take the whole pool that named ones share."""
        max_bytes = self.config.max_recorded_bytes
        if tally is not None:
            max_bytes = max(1, max_bytes // NAMED_SHARE)
        return StubState(
            self.config,
            served,
            seq=self._seq,
            max_recorded=max_recorded,
            max_recorded_bytes=max_bytes,
            tally=tally,
            run_coverage=self.retired,
        )


def name_of(request: web.Request) -> str:
    """The namespace a control request acts on, by name."""
    return _named_by(request) or DEFAULT


def base_url(request: web.Request) -> str:
    """Where a client reaches the namespace a control request acts on: the stub as the
    request found it, with the namespace's prefix unless it is the default."""
    name = name_of(request)
    origin = f"{request.scheme}://{request.host}"
    return origin if name == DEFAULT else f"{origin}{PREFIX}{name}"


def _named_by(request: web.Request) -> str | None:
    return named_in(request_value(request, PREFIXED), request.headers)


def named_in(prefixed: str | None, headers: Mapping[str, str]) -> str | None:
    """The name the path prefix (`prefixed`) or the header gives, if any (a bad header name is
    a 400)."""
    if prefixed is not None:
        return prefixed
    header = headers.get(HEADER)
    return None if header is None else check_name(header.strip(), HEADER)


NAMESPACES = web.AppKey("namespaces", Namespaces)
