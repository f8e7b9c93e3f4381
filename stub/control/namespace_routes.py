"""`/_test/namespaces`: create namespaces (with their own fixtures and keys), list what each
holds, delete them. These routes act on the registry, so they ignore any namespace prefix."""

from __future__ import annotations

import re
import secrets
from typing import Any

from aiohttp import web

from stub.control.routes import parsed_off_loop
from stub.fixtures import parse_fixture_document
from stub.namespaces import NAMESPACES, check_name
from stub.state import Served
from stub.wire import ApiError, invalid_body, json_response, json_type

routes = web.RouteTableDef()

_FIELDS = ("name", "test", "keys", "fixtures")
READABLE_CHARS = 55
"""Of a name made from a test's identity: then `-` and 8 random hex digits, 64 in all."""


@routes.get("/_test/namespaces", name="namespaces")
async def list_namespaces(request: web.Request) -> web.Response:
    return json_response(request.app[NAMESPACES].to_json())


@routes.post("/_test/namespaces", name="create_namespace")
async def create_namespace(request: web.Request) -> web.Response:
    """`{"name": "t-42", "keys": [...], "fixtures": {...}}`, or `"test"` (any test's identity)
    instead of `name` to have the stub make a name from it; without `fixtures` it serves the
    start-up ones."""
    name, keys, served = await parsed_off_loop(request, _creation)
    namespaces = request.app[NAMESPACES]
    namespaces.create(name, served, keys)
    return json_response(namespaces.describe(name), status=201)


def name_for_test(test: str) -> str:
    """A valid, readable, distinct name for the namespace of the test `test` identifies (a
    pytest node id, `TestCheckout/retries`, `CheckoutTest#retries()`, `tests::offline`): the
    one rule of every helper, so each names namespaces as the others do."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", test).strip("-._")
    if len(readable) > READABLE_CHARS:  # keep both ends: a parameterised test's differs last
        half = (READABLE_CHARS - 2) // 2
        readable = f"{readable[: READABLE_CHARS - 2 - half]}..{readable[-half:]}"
    return f"{readable.strip('-._') or 'test'}-{secrets.token_hex(4)}"


def _creation(document: object) -> tuple[str, list[str], Served | None]:
    """The name, keys and fixtures a creation asks for (its fixtures parsed off the loop)."""
    if not isinstance(document, dict):
        raise invalid_body(f"body: expected a JSON object, got {json_type(document)}")
    unknown = sorted(set(document) - set(_FIELDS))
    if unknown:
        raise invalid_body(f"{unknown[0]}: unknown field (expected {', '.join(_FIELDS)})")
    fixtures = document.get("fixtures")
    served = None if fixtures is None else Served.of(parse_fixture_document(fixtures, "fixtures"))
    return _name(document), _keys(document), served


def _name(document: dict[str, Any]) -> str:
    if ("name" in document) == ("test" in document):
        raise invalid_body("name: give a name, or test (a test's identity) to have one made")
    if "test" in document:
        test = document["test"]
        if not isinstance(test, str):
            raise invalid_body(f"test: expected a string, got {json_type(test)}")
        return name_for_test(test)
    name = document["name"]
    if not isinstance(name, str):
        raise invalid_body(f"name: expected a string, got {json_type(name)}")
    return check_name(name, "name")


@routes.delete("/_test/namespaces", name="delete_namespaces")
async def delete_namespaces(request: web.Request) -> web.Response:
    """Every named namespace; the default one stays (reset it with `/_test/reset`)."""
    return json_response({"ok": True, "deleted": request.app[NAMESPACES].delete_all()})


@routes.get("/_test/namespaces/{name}", name="namespace")
async def describe_namespace(request: web.Request) -> web.Response:
    return json_response(request.app[NAMESPACES].describe(request.match_info["name"]))


@routes.delete("/_test/namespaces/{name}", name="delete_namespace")
async def delete_namespace(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if not request.app[NAMESPACES].delete(name):
        raise ApiError(404, "NOT_FOUND", f"name: no namespace {name!r}")
    return json_response({"ok": True, "deleted": name})


def _keys(body: dict[str, Any]) -> list[str]:
    keys = body.get("keys", [])
    if not isinstance(keys, list):
        raise invalid_body(f"keys: expected a list of strings, got {json_type(keys)}")
    for index, key in enumerate(keys):
        if not isinstance(key, str) or not key.strip():
            got = "an empty string" if isinstance(key, str) else json_type(key)
            raise invalid_body(f"keys[{index}]: expected a non-empty string, got {got}")
    return [key.strip() for key in keys]
