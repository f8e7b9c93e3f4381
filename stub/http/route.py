"""What each client route declares once, as data: where its keys are and what an accepted
request leaves in its namespace, read alike by the pipeline's admission, the direct lane and
the forwarder (proxy mode), so a route cannot be served one way and proxied another."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal, NamedTuple, Protocol

from aiohttp import web

from stub.state import Json, StubState
from stub.wire import RUNTIME_KEY_HINT, object_list

DECLARED = "declared"
"""The `RouteDef` keyword that carries a route's declaration (see `RouteDeclaration.route`)."""


class _Log(Protocol):
    """A namespace's recorded list (a bounded log, as `StubState` keeps them)."""

    def extend(self, items: Iterable[Json]) -> None: ...


class KeySource(NamedTuple):
    """Where a route finds a key it checks (admission.py reads it there)."""

    where: Literal["header", "body", "token"]
    """`Authorization: Bearer` or `x-api-key`; the body's `api_key` or `token`; `?token=`."""
    hint: str
    """How to send it, for the 401 that says it is missing."""

    @property
    def in_body(self) -> bool:
        """The body must be parsed to find it (the forwarder parses it only then)."""
        return self.where == "body"


HEADER_KEY = KeySource("header", RUNTIME_KEY_HINT)
BODY_KEY = KeySource("body", "send the project key as body 'api_key' or 'token'")
TOKEN_KEY = KeySource("token", "send the project key as the 'token' query parameter")
SECRET_KEY = KeySource("header", "send the secret key as 'Authorization: Bearer <key>'")


class Records(NamedTuple):
    """What an accepted request leaves in its namespace besides itself: the objects of one
    body member (`member`), or the body itself (None), kept in the log `log` picks."""

    log: Callable[[StubState], _Log]
    member: str | None = None
    described: str = "objects"
    """What the member's items are, for the 400 that names one that is not an object."""


Direct = tuple[Callable[[int], bytes], list[Json] | None]
"""A plain request's answer, made by the direct lane from its body alone: the answer's body,
from the request's number; and what the request leaves in its namespace's log (`records`;
None: nothing), kept once that answer was sent. A plain tuple: it is made on every lane
request."""
DirectAnswer = Callable[[StubState, bytes], Direct]
"""How a route answers a plain request directly (see `RouteDeclaration.direct`)."""


class RouteDeclaration(NamedTuple):
    """One client route, as its handler serves it, the forwarder relays it and the direct lane
    (lane.py) answers it."""

    name: str
    """What `/_test/requests` calls it (`evaluate`, `flags`, ...)."""
    key: KeySource = HEADER_KEY
    """The key it checks and charges to the rate limit."""
    also: tuple[KeySource, ...] = ()
    """Keys checked before `key`, and never charged (the definitions poll's secret key)."""
    records: Records | None = None
    direct: DirectAnswer | None = None
    """How the direct lane answers a plain request to it, from its namespace's state and its
    body, as the handler would: the body checked (raising as the handler would), then the
    answer's body and what to keep once it is sent. Nothing is kept before: an answer the
    lane cannot send goes to the route, which must find the namespace as it was. None: only
    the handler answers it. Only a runtime route keyed by its headers (the lane admits its key
    as the runtime plane's)."""

    @property
    def route(self) -> dict[str, Any]:
        """The keywords of its `RouteTableDef` entry: `@routes.post(path, **CAPTURE.route)`;
        ValueError for a direct answer on a route not keyed by its headers."""
        if self.direct is not None and (self.key is not HEADER_KEY or self.also):
            raise ValueError(f"{self.name}: only a route keyed by its headers is answered directly")
        return {"name": self.name, DECLARED: self}

    def keep(self, state: StubState, body: dict[str, Any]) -> list[Json]:
        """What a served request records, all checked before any is kept (else a 400)."""
        items = self.checked(body)
        if items:
            self.kept_in(state).extend(items)
        return items

    def checked(self, body: dict[str, Any]) -> list[Json]:
        """What a request with `body` would record, checked whole (else a 400), not kept."""
        records = self.records
        if records is None:
            return []
        if records.member is None:
            return [body]
        return object_list(body, records.member, records.described)

    def kept_in(self, state: StubState) -> _Log:
        """The log its records go to, in `state` (only for a route that records)."""
        assert self.records is not None
        return self.records.log(state)

    def keep_accepted(self, state: StubState, body: dict[str, Any]) -> None:
        """What a forwarded request records once the upstream accepted it: the upstream
        judged the body, so whatever can be kept is, and nothing is refused here."""
        records = self.records
        if records is None or not body:
            return
        if records.member is None:
            records.log(state).extend([body])
            return
        items = body.get(records.member)
        if isinstance(items, list):
            records.log(state).extend(item for item in items if isinstance(item, dict))


def declaration_of(route: web.RouteDef) -> RouteDeclaration:
    """A route's declaration; one that declares none (the management plane) takes its key
    from the headers and records nothing but itself."""
    declared = route.kwargs.get(DECLARED)
    if isinstance(declared, RouteDeclaration):
        return declared
    return RouteDeclaration(route.kwargs["name"])
