"""The inspector: a page that shows, live, what every client did and what the stub did to it
(`/_test/ui`), the feed it reads (`/_test/ui/feed`), and the same page as one self-contained
file (`/_test/ui/snapshot`), which the pytest plugin keeps for a failed test."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

from stub.control.journal import entry, in_full, rendered_in_turns
from stub.control.redaction import KnownSecrets, known_secrets
from stub.faults.modes import FaultMode
from stub.namespaces import NAMESPACES, Namespaces, base_url, name_of
from stub.packaged import PackagedFile
from stub.state import RequestRecord, StubState, state_of
from stub.wire import MAX_WAIT_MS, ApiError, json_response, query_flag, query_int

routes = web.RouteTableDef()

PUBLIC = frozenset({"ui", "ui_asset"})
"""The page and its files hold no data and name no namespace to the stub: served without the
control token, so a browser can load them (the page then asks for the token once and sends it
with every data request). The feed and the snapshot watch a namespace that exists, and create
none."""

COALESCE_S = 0.2
"""Once something changed, how long the feed waits for more before answering: a burst of
requests costs a page five answers a second, however fast they come."""

_STATIC = Path(__file__).resolve().parent / "static"
_ASSETS = {"inspector.js": "text/javascript", "inspector.css": "text/css"}
_PACKAGED = {name: PackagedFile(_STATIC / name) for name in ("index.html", *_ASSETS)}
_HEAD = "<!-- svc-stub:head -->"
_DATA = "<!-- svc-stub:data -->"

_LIVE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""The live page may reach its own stub and nothing else (the browser enforces it)."""
_SNAPSHOT_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)
"""A snapshot reaches nothing at all: everything it shows is in the file."""


@routes.get("/_test/ui", name="ui")
async def page(request: web.Request) -> web.Response:
    head = '<link rel="stylesheet" href="ui/inspector.css">'
    html = _page(head + '<script defer src="ui/inspector.js"></script>', "")
    return _html(html, {"Content-Security-Policy": _LIVE_POLICY, "Cache-Control": "no-store"})


@routes.get("/_test/ui/feed", name="ui_feed")
async def feed(request: web.Request) -> web.Response:
    """What changed since the page's `since` cursor; with `waitMs`, waits for a change first
    (a long-poll: nothing is sent, and nothing costs, while nothing happens)."""
    from stub.inspector.view import Cursor, view, with_outcome  # once a page is open

    state = state_of(request)
    since = Cursor.parse(request.query.get("since", ""))
    wait_ms = query_int(request, "waitMs", maximum=MAX_WAIT_MS)
    changed = lambda: Cursor.of(state) != since  # noqa: E731
    if since is not None and wait_ms and await state.recorded.wait_until(changed, wait_ms / 1000):
        await asyncio.sleep(COALESCE_S)
    if state.gone is not None:
        raise ApiError(410, "NAMESPACE_GONE", f"{state.gone} while this page watched it")
    namespaces = request.app[NAMESPACES]
    known = known_secrets(state, namespaces)
    summary = with_outcome(functools.partial(entry, origin=namespaces.started, known=known))
    shown = view(state, namespaces, name_of(request), since, summary, known)
    return json_response(_with_context(shown, namespaces, base_url(request)))


@routes.get("/_test/ui/snapshot", name="ui_snapshot")
async def snapshot(request: web.Request) -> web.Response:
    """The page as one file, with this namespace's journal in full inside: it opens in a
    browser with no stub running (`?download=true` asks the browser to save it)."""
    name, base = name_of(request), base_url(request)
    headers = {"Content-Security-Policy": _SNAPSHOT_POLICY}
    if query_flag(request, "download"):
        headers["Content-Disposition"] = f'attachment; filename="svc-stub-{name}.html"'
    namespaces, state = request.app[NAMESPACES], state_of(request)
    known = known_secrets(state, namespaces)
    shown = _snapshot_view(namespaces, state, name, base, known)
    detail = _in_full(namespaces, base, known)
    rendered = await rendered_in_turns(shown["requests"], detail)
    return _html(_snapshot_html(shown | {"requests": rendered}), headers)


def snapshot_page(namespaces: Namespaces, state: StubState, name: str, base: str) -> str:
    """One namespace's page as a self-contained file: its script, its style and its whole
    view (every kept request in full) inside; `base` is where clients reach the namespace."""
    known = known_secrets(state, namespaces)
    shown = _snapshot_view(namespaces, state, name, base, known)
    detail = _in_full(namespaces, base, known)
    return _snapshot_html(shown | {"requests": [detail(r) for r in shown["requests"]]})


def _in_full(
    namespaces: Namespaces, base: str, known: KnownSecrets
) -> Callable[[RequestRecord], dict[str, Any]]:
    """Each request of a snapshot in full, with the outcome its coverage cell names."""
    from stub.inspector.view import with_outcome

    return with_outcome(
        functools.partial(in_full, origin=namespaces.started, base_url=base, known=known)
    )


def _snapshot_view(
    namespaces: Namespaces, state: StubState, name: str, base: str, known: KnownSecrets
) -> dict[str, Any]:
    """Everything the namespace keeps, its requests still as recorded (rendered after)."""
    from stub.inspector.view import view

    shown = view(state, namespaces, name, None, lambda record: record, known, everything=True)
    return _with_context(shown, namespaces, base) | {"snapshotAt": round(time.time() * 1000)}


def _snapshot_html(shown: dict[str, Any]) -> str:
    data = orjson.dumps(shown).replace(b"<", b"\\u003c").decode()  # never ends the <script>
    head = f"<style>{_asset('inspector.css')}</style><script>{_asset('inspector.js')}</script>"
    return _page(
        f'<meta http-equiv="Content-Security-Policy" content="{_SNAPSHOT_POLICY}">{head}',
        f'<script type="application/json" id="svc-stub-snapshot">{data}</script>',
    )


@routes.get(r"/_test/ui/{asset:inspector\.(?:js|css)}", name="ui_asset")
async def asset(request: web.Request) -> web.Response:
    name = request.match_info["asset"]
    return web.Response(
        text=_asset(name), content_type=_ASSETS[name], headers={"Cache-Control": "no-cache"}
    )


def _with_context(shown: dict[str, Any], namespaces: Namespaces, base: str) -> dict[str, Any]:
    """What the page needs to draw times and forms: when the stub started (wall clock), the
    fault modes it can arm, and where clients reach the namespace."""
    return shown | {
        "startedAt": round(namespaces.started_at * 1000),
        "faultModes": [mode.value for mode in FaultMode],
        "stub": base,
    }


def _page(head: str, data: str) -> str:
    return _asset("index.html").replace(_HEAD, head).replace(_DATA, data)


def _html(html: str, headers: dict[str, str]) -> web.Response:
    return web.Response(text=html, content_type="text/html", headers=headers)


def _asset(name: str) -> str:
    """Read once, on first use: start-up only opens them."""
    return _PACKAGED[name].text
