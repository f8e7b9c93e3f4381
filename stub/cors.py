"""Cross-origin answers: the headers that let a page on another origin call the stub and read
what it answered, and the answer to a browser's preflight.

The runtime and vendor planes answer any origin, as a public API does (`*`: their keys are
headers, never cookies, so no credentials are ever allowed); the control plane answers only the
origins its user named (`--allow-origin`), by name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from aiohttp import hdrs, web
from multidict import CIMultiDict

ORIGIN = hdrs.ORIGIN  # an istr: found in a request's headers at two thirds of a str's cost
REQUEST_METHOD = hdrs.ACCESS_CONTROL_REQUEST_METHOD
REQUEST_HEADERS = hdrs.ACCESS_CONTROL_REQUEST_HEADERS
REQUEST_PRIVATE_NETWORK = "Access-Control-Request-Private-Network"

PREFLIGHT = "preflight"
"""A preflight's route name in the journal: seen there, counted as no route's request."""
ANY_ORIGIN = "*"
EXPOSED = "Retry-After, ETag, X-Svc-Stub-Warning, X-Request-Id, Allow"
"""What a client reads off an answer besides its body: when to come back, the definitions'
version, the stub's warning about a key, the service's request id, the methods a 405 allows."""
READABLE_BY_ANY_PAGE = CIMultiDict(
    {
        hdrs.ACCESS_CONTROL_ALLOW_ORIGIN: ANY_ORIGIN,
        hdrs.ACCESS_CONTROL_EXPOSE_HEADERS: EXPOSED,
    }
)
DEFAULT_REQUEST_HEADERS = (
    "Authorization, Content-Type, Content-Encoding, X-Api-Key, X-Svc-Test-Namespace, "
    "X-Svc-Test-Fault, X-Svc-Test-Delay-Ms, X-Svc-Test-Status, X-Svc-Test-Retry-After"
)
"""Allowed when a preflight names none (it names every non-safelisted header it will send,
and those are echoed: a test stub never blocks a header a client library adds)."""
MAX_AGE_S = "7200"
"""How long a browser may keep a preflight's answer: Chromium's own cap."""

_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def is_preflight(request: web.BaseRequest) -> bool:
    """A browser asking whether it may send a cross-origin request (never the request)."""
    return request.method == "OPTIONS" and REQUEST_METHOD in request.headers


def allow_any_origin(headers: CIMultiDict[str]) -> None:
    """Marks an answer to a cross-origin request readable by the page that made it. Added in
    one step (a quarter of the cost of setting two headers), so an answer must have none of
    its own: a relayed one's are dropped (upstream/proxy.py)."""
    headers.extend(READABLE_BY_ANY_PAGE)


def allow_origin(headers: CIMultiDict[str], origin: str) -> None:
    """As `allow_any_origin`, for one origin by name (the control plane's)."""
    headers[hdrs.ACCESS_CONTROL_ALLOW_ORIGIN] = origin
    headers[hdrs.ACCESS_CONTROL_EXPOSE_HEADERS] = EXPOSED
    headers[hdrs.VARY] = ORIGIN


def preflight_answer(
    request: web.BaseRequest, methods: Iterable[str], origin: str = ANY_ORIGIN
) -> web.Response:
    """204: the methods the path serves, the headers the preflight asked for, how long the
    browser may keep the answer, and private network access when asked (Chromium asks before a
    public origin's page reaches a loopback address)."""
    headers = CIMultiDict(
        {
            hdrs.ACCESS_CONTROL_ALLOW_ORIGIN: origin,
            hdrs.ACCESS_CONTROL_ALLOW_METHODS: ", ".join(sorted(methods)),
            hdrs.ACCESS_CONTROL_ALLOW_HEADERS: _asked_headers(request) or DEFAULT_REQUEST_HEADERS,
            hdrs.ACCESS_CONTROL_MAX_AGE: MAX_AGE_S,
            hdrs.VARY: _PREFLIGHT_VARIES,
        }
    )
    if request.headers.get(REQUEST_PRIVATE_NETWORK, "").lower() == "true":
        headers["Access-Control-Allow-Private-Network"] = "true"
    return web.Response(status=204, headers=headers)


_PREFLIGHT_VARIES = ", ".join((ORIGIN, REQUEST_METHOD, REQUEST_HEADERS, REQUEST_PRIVATE_NETWORK))


def _asked_headers(request: web.BaseRequest) -> str:
    """The header names the preflight announced, those that are header names."""
    asked = request.headers.get(REQUEST_HEADERS, "").split(",")
    return ", ".join(name for name in map(str.strip, asked) if _HEADER_NAME.fullmatch(name))
