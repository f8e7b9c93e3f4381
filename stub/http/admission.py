"""Admission: whether a client request's key lets it in (401; 403 or a warning for a key used
where its family may not be; 429 over its rate limit), decided by one function that both
lanes call; a management request's token and scope; and the stage that runs them before a
route's answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from aiohttp import web
from aiohttp.typedefs import Handler

from stub.faults.arming import Fired
from stub.faults.modes import FaultMode, FaultSpec
from stub.http.route import KeySource, RouteDeclaration
from stub.keys import MANAGEMENT_KEY_HINT, ClientPlane, not_for_management
from stub.management import scopes
from stub.management.seed import DEFAULT_KEY, Principal
from stub.state import REQUEST_STATE, StubState
from stub.wire import (
    REQUEST_SEQ,
    RUNTIME_KEY_HINT,
    ApiError,
    bearer_token,
    check_api_key,
    presented_key_in,
    read_json_object,
)

ADMITTED_BODY = web.RequestKey("admitted_body", dict[str, Any])
"""The JSON object a route keyed by its body was admitted with, for its answer to read."""
PRINCIPAL = web.RequestKey("principal", Principal)
"""Who a management request was admitted as, for its answer to read."""
Admits = ClientPlane | Literal["management"]
"""Whose keys a plane's routes admit: a client plane's, or the management plane's tokens."""


class RateLimited(ApiError):
    """The key is over its rate limit: 429 with the real wait in `Retry-After`."""

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(
            429,
            "RATE_LIMITED",
            f"rate limit exceeded for this key: retry in {retry_after_s} s",
            {"Retry-After": str(retry_after_s)},
        )
        spec = FaultSpec(FaultMode.RATE_LIMITED, retry_after_s=retry_after_s)
        self.fired = Fired(spec, "rate-limit")


def admit(
    state: StubState, key: str, plane: ClientPlane, hint: str = RUNTIME_KEY_HINT
) -> str | None:
    """The key checks of a runtime or PostHog request, in the service's order: present and
    accepted (401), then used where its family may be: refused under --strict-keys, else
    served with the warning returned. Changes nothing, whatever it decides."""
    policy = state.key_policy
    check_api_key(key, policy.accepted, hint)
    wrong = policy.misuse(key, plane)
    if wrong is None:
        return None
    if policy.strict:
        code = "FORBIDDEN" if wrong.status == 403 else "UNAUTHORIZED"
        raise ApiError(wrong.status, code, f"{wrong.message} (refused: strict keys)")
    return wrong.message


def key_in(source: KeySource, request: web.Request, body: Mapping[str, Any] | None) -> str:
    """The key a request carries where `source` says (`body`: its body parsed, for a key
    there)."""
    where = source.where
    if where == "header":
        return presented_key_in(request.headers)
    if where == "token":
        return request.query.get("token", "").strip()
    for name in ("api_key", "token"):  # posthog-python sends `api_key`, posthog-node `token`
        key = body.get(name) if body is not None else None
        if isinstance(key, str) and key.strip():
            return key.strip()
    return ""


def charge(state: StubState, key: str) -> None:
    """One request charged to `key`'s rate limit, if there is one: 429 once it is spent."""
    if state.limiter.active and key:
        retry_after_s = state.limiter.take(key)
        if retry_after_s is not None:
            raise RateLimited(retry_after_s)


def admit_organisation(state: StubState, token: str, route: str) -> Principal:
    """The management plane's admission: the principal a bearer token is (401, saying what
    the token is when it is another plane's key), allowed by its scope to call the route named
    `route` (403)."""
    if not token:
        raise ApiError(401, "UNAUTHORIZED", f"missing bearer token: {MANAGEMENT_KEY_HINT}")
    principal = state.management.principal(token)
    if principal is None:  # only seeded tokens pass: say what the others are
        wrong_plane = not_for_management(state.key_policy.family(token))
        if wrong_plane is not None:
            raise ApiError(401, "UNAUTHORIZED", wrong_plane)
        default = state.management.principal(DEFAULT_KEY) is not None
        raise ApiError(
            401,
            "UNAUTHORIZED",
            "organisation key or session token not recognised: seed it in the fixture "
            "file's management section"
            + (f" (the default organisation's key is {DEFAULT_KEY})" if default else ""),
        )
    refused = scopes.refusal(principal.scope, route)
    if refused is not None:
        raise ApiError(403, "FORBIDDEN", refused)
    return principal


def admitting(answer: Handler, route: RouteDeclaration, plane: Admits) -> Handler:
    """`answer`, behind the keys `route` declares, each admitted in turn (`also`, then `key`,
    the one charged): a route keyed by its body has that body read as a JSON object first (a
    400 before the 401), and its answer reads it under `ADMITTED_BODY`; any other is admitted
    before its body is read (a 401 before a 400, as the service answers). A warning goes to
    the pipeline, which says it on the answer. The management plane's routes are admitted by
    their organisation token instead, and read its principal under `PRINCIPAL`."""
    if plane == "management":
        return _admitting_organisation(answer, route.name)
    checks = (*((source, False) for source in route.also), (route.key, True))
    in_body = any(source.in_body for source, _ in checks)

    async def admitted(request: web.Request) -> web.StreamResponse:
        body = None
        if in_body:
            body = request[ADMITTED_BODY] = await read_json_object(request)
        state = request[REQUEST_STATE]
        for source, charged in checks:
            key = key_in(source, request, body)
            warning = admit(state, key, plane, source.hint)
            if warning is not None:  # said on the answer, a 429 included
                state.key_warnings[request[REQUEST_SEQ]] = warning
            if charged:
                charge(state, key)
        return await answer(request)

    return admitted


def _admitting_organisation(answer: Handler, route: str) -> Handler:
    """`answer`, behind a management token allowed to call the route named `route`."""

    async def admitted(request: web.Request) -> web.StreamResponse:
        state = request[REQUEST_STATE]
        request[PRINCIPAL] = admit_organisation(state, bearer_token(request), route)
        return await answer(request)

    return admitted
