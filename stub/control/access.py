"""Who may drive the control plane: its own tools, never a web page the developer has open.

Tools (curl, the control clients, CI, the inspector page on the stub's own origin) send no
foreign `Origin`; a page on another origin does, or says `Sec-Fetch-Site: cross-site`, and a
DNS-rebinding page (a name that resolves to 127.0.0.1) names a `Host` the stub does not answer
to. Both are refused unless the user named them (`--allow-origin`, `--allow-host`); the control
token, where set, applies on top.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable
from typing import NamedTuple

from aiohttp import hdrs, web
from aiohttp.typedefs import Handler
from yarl import URL

from stub.cors import ORIGIN, REQUEST_METHOD, allow_origin, is_preflight, preflight_answer
from stub.wire import ApiError

FETCH_SITE = "Sec-Fetch-Site"
FETCH_MODE = "Sec-Fetch-Mode"
_FOREIGN_SITES = frozenset({"cross-site", "same-site"})
"""`Sec-Fetch-Site` values of a request a page on another origin made (`same-site` is another
port of the same host: `localhost:5173` calling `localhost:3901`)."""


class BadSetting(ValueError):
    """An `--allow-origin` or `--allow-host` value that cannot be what it names."""


def origin_setting(value: str) -> str:
    """`http://localhost:5173` as a browser sends it in `Origin` (lower case, no default port,
    no trailing slash)."""
    url = URL(value.strip())
    if url.scheme not in ("http", "https") or not url.host or url.path not in ("", "/"):
        raise BadSetting(
            f"{value!r} is not an origin: write scheme, host and port, as "
            "http://localhost:5173 (no path)"
        )
    if url.query_string or url.fragment or url.user:
        raise BadSetting(f"{value!r} is not an origin: no query, fragment or user in it")
    return str(url.origin())


def host_setting(value: str) -> str:
    """`svc-stub` (any port) or `svc-stub:3901` (that port only), as `_host_forms` compares."""
    name, port = _split_host(value.strip().lower())
    name = name.rstrip(".")
    if not _HOST_NAME.fullmatch(name) or (port and not port.isdigit()):
        raise BadSetting(
            f"{value!r} is not a host name: write it as the Host header names it, "
            "as svc-stub or svc-stub:3901"
        )
    return f"{name}:{port}" if port else name


_HOST_NAME = re.compile(r"[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?")
"""A DNS name (underscores too: container runtimes allow them in service names)."""


class ControlAccess(NamedTuple):
    """The origins and hosts, besides its own, the control plane answers; `methods` gives the
    methods a control path serves (for a named origin's preflight)."""

    origins: frozenset[str]
    hosts: frozenset[str]
    methods: Callable[[str], Iterable[str]]

    def admitting(self, handler: Handler, *, page: bool = False) -> Handler:
        """`handler`, for the stub's own tools and the named origins and hosts only; `page`:
        the inspector page, which a link on another site may open (a navigation reads
        nothing: the page holds no data until it asks its own origin)."""

        async def route(request: web.Request) -> web.StreamResponse:
            origin = request.headers.get(ORIGIN)
            if origin == _own_origin(request):
                origin = None  # the inspector page: one of its own tools
            refusal = self._refusal(request, origin, page)
            if refusal is not None:
                refused = refusal.to_response()
                refused.headers[hdrs.CACHE_CONTROL] = "no-store"
                return refused
            if origin is None:
                return await handler(request)
            if is_preflight(request):  # a named origin's in-browser runner
                methods = self.methods(request.path) or [request.headers[REQUEST_METHOD]]
                return preflight_answer(request, methods, origin)
            response = await handler(request)
            if not response.prepared:
                allow_origin(response.headers, origin)
            return response

        return route

    def _refusal(self, request: web.Request, origin: str | None, page: bool) -> ApiError | None:
        """Why the request is refused (a foreign `origin`), or None."""
        host = request.host.lower()
        if not self._answers_host(host):
            return ApiError(
                403,
                "HOST_NOT_ALLOWED",
                f"the control plane answers only a loopback address, localhost or a name given "
                f"with --allow-host, not Host {host!r}: start svc-stub with "
                f"--allow-host {_split_host(host)[0].rstrip('.')} if that is how its tools "
                "reach it",
            )
        if origin is not None and origin not in self.origins:
            return ApiError(
                403,
                "ORIGIN_NOT_ALLOWED",
                f"the control plane answers only its own tools, not a page on {origin}: start "
                f"svc-stub with --allow-origin {origin} if a test runner in that page drives it",
            )
        site = request.headers.get(FETCH_SITE)
        navigation = page and request.headers.get(FETCH_MODE) == "navigate"
        if origin is None and site in _FOREIGN_SITES and not navigation:
            return ApiError(
                403,
                "ORIGIN_NOT_ALLOWED",
                f"the control plane answers only its own tools, not a page on another site "
                f"({FETCH_SITE}: {site}): open it from the stub's own address, or start "
                "svc-stub with --allow-origin ORIGIN for a test runner in a page",
            )
        return None

    def _answers_host(self, host: str) -> bool:
        name, port = _split_host(host)
        name = name.rstrip(".")
        if name == "localhost" or name.endswith(".localhost") or _is_ip(name):
            return True  # a browser resolves *.localhost itself, never through DNS
        return name in self.hosts or f"{name}:{port}" in self.hosts


def _own_origin(request: web.Request) -> str:
    """The origin of a page the stub served itself (the inspector's)."""
    return f"{request.scheme}://{request.host}"


def _split_host(host: str) -> tuple[str, str]:
    """`[::1]:3901` -> (`::1`, `3901`); `svc-stub` -> (`svc-stub`, ``)."""
    if host.startswith("["):
        name, _, rest = host[1:].partition("]")
        return name, rest.removeprefix(":")
    name, colon, port = host.rpartition(":")
    return (name, port) if colon and ":" not in name else (host, "")


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True
