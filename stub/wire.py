"""What every route shares: JSON answers, API errors, bounded body reading, field validators, key
presentation and redaction."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar

import orjson
from aiohttp import web
from aiohttp.web_protocol import RequestPayloadError

from stub.keys import redacted
from stub.validation import FixtureError, FixtureTooLarge

JSON = "application/json"

MAX_WRITABLE_DEPTH = 254
"""The deepest JSON orjson writes back (it reads 1,024)."""

REQUEST_SEQ = web.RequestKey("seq", int)
"""The request's number in `/_test/requests`, set for runtime and vendor routes."""


ErrorBody = Callable[[str, str, Mapping[str, str]], object]
"""A plane's error envelope: (code, message, extra fields) -> the JSON body."""


def runtime_error_body(code: str, message: str, extra: Mapping[str, str]) -> object:
    """`{"ok": false, "error": CODE, "message": ...}`: the runtime and vendor envelope."""
    return {"ok": False, "error": code, "message": message, **extra}


class ApiError(Exception):
    """An error answer, rendered in the envelope of the plane whose route raised it."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        headers: Mapping[str, str] | None = None,
        *,
        close_connection: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})
        self.close_connection = close_connection

    def to_response(self, error_body: ErrorBody = runtime_error_body) -> web.Response:
        body = error_body(self.code, self.message, {})
        response = json_response(body, status=self.status, headers=self.headers)
        if self.close_connection:
            response.force_close()
        return response


class ClientGone(ApiError):
    """The client closed the connection before it was answered (mid-body, or while the
    upstream answered): nobody is left to answer, so the request is recorded with no status
    (`clientGone`) and logged in one quiet line."""

    def __init__(self, what: str) -> None:
        super().__init__(400, "CLIENT_GONE", f"the client went away {what}")

    @classmethod
    def mid_body(cls, received: int, expected: int | None) -> ClientGone:
        of = f" of {expected}" if expected is not None else ""
        return cls(f"after {received}{of} bytes of its body")


def body_broken(request: web.BaseRequest) -> bool:
    """True once the body failed to decode: whatever answers must close the connection."""
    return request.content.exception() is not None


def json_response(
    body: object, *, status: int = 200, headers: Mapping[str, str] | None = None
) -> web.Response:
    return encoded_response(orjson.dumps(body), status=status, headers=headers)


def encoded_response(
    body: bytes, *, status: int = 200, headers: Mapping[str, str] | None = None
) -> web.Response:
    return web.Response(body=body, status=status, content_type=JSON, headers=headers)


_REQUEST_ID_PREFIX = "00000000-0000-4000-8000-"


def request_id(request: web.Request) -> str:
    """The id of the request's answer: `request_id_of` its seq, inlined (a route's answer pays
    no second call for it)."""
    return _REQUEST_ID_PREFIX + str(request.get(REQUEST_SEQ, 0)).zfill(12)


def request_id_of(seq: int) -> str:
    """A UUID-shaped id whose last group is the request's seq in `/_test/requests`."""
    return _REQUEST_ID_PREFIX + str(seq).zfill(12)


def invalid_body(message: str) -> ApiError:
    return ApiError(400, "INVALID_BODY", message)


T = TypeVar("T")


def request_value(request: web.BaseRequest, key: web.RequestKey[T]) -> T | None:
    """`request.get(key)` at a ninth of the cost when `key` is absent: a Request is a
    MutableMapping whose inherited `get` raises and catches KeyError then (a third of a
    microsecond; two reads on every request did so). Its items live in `_state`, as they have
    since aiohttp 3.0; a test pins it."""
    value: T | None = request._state.get(key)
    return value


_BODY_FAILURE = web.RequestKey("body_failure", ApiError)
"""Why the body could not be read: aiohttp keeps a body read once, not a failure, and a second
read (a handler after the namespace was looked up by the body's key) must fail the same way."""


async def read_body(request: web.Request) -> bytes:
    """The request body, gzip already undone by aiohttp; the size cap applies after that."""
    failure = request_value(request, _BODY_FAILURE)
    if failure is not None:
        raise failure
    try:
        return await request.read()
    except RequestPayloadError:  # the body claimed an encoding it does not have
        encoding = request.headers.get("Content-Encoding", "")
        # The rest of the stream cannot be framed any more: tell aiohttp not to read it again
        # after answering (it would log a traceback), and end the connection (see body_broken).
        request.content.feed_eof()
        failure = ApiError(
            400,
            "INVALID_BODY",
            f"body: cannot decode Content-Encoding {encoding!r}",
            close_connection=True,
        )
    except ConnectionResetError:  # aiohttp's word for a connection lost mid-body
        failure = ClientGone.mid_body(request.content.total_bytes, request.content_length)
    except web.HTTPRequestEntityTooLarge:
        failure = ApiError(
            413,
            "PAYLOAD_TOO_LARGE",
            f"body: larger than {request.client_max_size} bytes (after decompression); "
            "the limit is set with --max-body-bytes",
        )
    request[_BODY_FAILURE] = failure
    raise failure


async def read_json_object(request: web.Request) -> dict[str, Any]:
    """The body parsed as a JSON object, or a 400 that says what was wrong with it."""
    return json_object(await read_body(request), request.content_type)


def json_object(raw: bytes, sent_as: str) -> dict[str, Any]:
    """A body (sent with Content-Type `sent_as`) parsed as a JSON object, or a 400."""
    if not raw.strip():
        raise invalid_body("body: expected a JSON object, got an empty body")
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        hint = (
            ""
            if "json" in sent_as
            else f" (it was sent as {sent_as}; every body is read as JSON, whatever its type)"
        )
        raise invalid_body(f"body: not valid JSON ({exc}){hint}") from None
    if not isinstance(parsed, dict):
        raise invalid_body(f"body: expected a JSON object, got {json_type(parsed)}")
    # orjson reads 1,024 levels but writes 254: anything kept or echoed must be writable, and
    # fewer brackets than that cannot nest so deep, so most bodies skip the check.
    if raw.count(b"[") + raw.count(b"{") > MAX_WRITABLE_DEPTH and not writable(parsed):
        raise invalid_body(f"body: nested more than {MAX_WRITABLE_DEPTH} levels deep")
    return parsed


def invalid_fixtures(error: FixtureError) -> ApiError:
    """A refused fixture document: a 413 for a size bound, else a 400 naming the key path."""
    if isinstance(error, FixtureTooLarge):
        return ApiError(413, "FIXTURES_TOO_LARGE", str(error))
    return ApiError(400, "INVALID_FIXTURES", str(error))


def writable(value: object) -> bool:
    """Whether orjson can write the value back (it reads deeper JSON than it writes)."""
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError:
        return False
    return True


def optional_strings(body: dict[str, Any], name: str) -> list[str] | None:
    """An optional array-of-strings field; a 400 names the field or the bad element."""
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, list):
        raise invalid_body(f"{name}: expected an array of strings, got {json_type(value)}")
    return _each(value, name, str, "a string")


def optional_object(body: dict[str, Any], name: str) -> dict[str, Any]:
    """An optional object field ({} when absent or null); a 400 names the field."""
    value = body.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid_body(f"{name}: expected an object, got {json_type(value)}")
    return value


def object_list(body: dict[str, Any], name: str, what: str) -> list[dict[str, Any]]:
    """A required array of objects, checked whole before anything is stored."""
    value = body.get(name)
    if not isinstance(value, list):
        raise invalid_body(f"{name}: expected an array of {what}, got {json_type(value)}")
    return _each(value, name, dict, "an object")


def _each(items: list[Any], name: str, kind: type, described: str) -> list[Any]:
    """Every element of a list field is of `kind`; a 400 names the first one that is not."""
    for index, item in enumerate(items):
        if not isinstance(item, kind):
            raise invalid_body(f"{name}[{index}]: expected {described}, got {json_type(item)}")
    return items


def json_type(value: object) -> str:
    """The JSON name of a value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


SECRET_QUERY_KEYS = frozenset({"token", "api_key", "apikey", "key", "secret", "access_token"})


def redacted_query(query_string: str) -> dict[str, str | list[str]]:
    """A raw query string as a JSON object, with the value of any key-bearing parameter hidden
    but for its family's prefix."""
    query: dict[str, str | list[str]] = {}
    for name, value in urllib.parse.parse_qsl(query_string, keep_blank_values=True):
        shown = redacted(value) if name.lower() in SECRET_QUERY_KEYS else value
        previous = query.get(name)
        if previous is None:
            query[name] = shown
        elif isinstance(previous, list):
            previous.append(shown)
        else:
            query[name] = [previous, shown]
    return query


def bearer_token(request: web.BaseRequest) -> str:
    """The token of `Authorization: Bearer <token>` (the scheme in any case), or ""."""
    return bearer_token_in(request.headers)


def bearer_token_in(headers: Mapping[str, str]) -> str:
    scheme, _, token = headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def presented_key(request: web.BaseRequest) -> str:
    """The API key a client presented: `Authorization: Bearer` (any case) or `x-api-key`."""
    return presented_key_in(request.headers)


def presented_key_in(headers: Mapping[str, str]) -> str:
    # bearer_token_in, inlined: every client request reads its key here, and a call costs
    # what the rest of this does
    scheme, _, token = headers.get("Authorization", "").partition(" ")
    bearer = token.strip() if scheme.lower() == "bearer" else ""
    return bearer or headers.get("x-api-key", "").strip()


RUNTIME_KEY_HINT = "send 'Authorization: Bearer <key>' or 'x-api-key: <key>'"


def check_api_key(key: str, accepted: Collection[str], hint: str = RUNTIME_KEY_HINT) -> None:
    """Any non-empty key unless keys were configured; the key itself is never echoed."""
    if not key:
        raise ApiError(401, "UNAUTHORIZED", f"missing API key: {hint}")
    if accepted and key not in accepted:  # is_accepted, inlined: asked on every request
        raise ApiError(
            401,
            "UNAUTHORIZED",
            "API key not accepted by this stub (see --api-key and the fixtures' keys.accepted)",
        )


def is_accepted(key: str, accepted: Collection[str]) -> bool:
    """A non-empty key that is listed, or any when none are (the spec's stub rule)."""
    return bool(key) and (not accepted or key in accepted)


MAX_WAIT_MS = 60_000
"""The longest a control-plane long-poll (`?waitMs=`) may wait."""


def query_int(request: web.Request, name: str, maximum: int | None = None) -> int | None:
    raw = request.query.get(name)
    if raw is None:
        return None
    if not is_count(raw) or (maximum is not None and int(raw) > maximum):
        limit = f" up to {maximum}" if maximum is not None else ""
        raise invalid_body(f"{name}: expected a non-negative integer{limit}, got {raw!r}")
    return int(raw)


def is_count(raw: str) -> bool:
    """ASCII digits only: str.isdigit() also says yes to '²', which int() refuses."""
    return raw.isascii() and raw.isdigit()


def query_flag(request: web.Request, name: str) -> bool:
    raw = request.query.get(name, "false").lower()
    if raw not in ("true", "1", "false", "0"):
        raise invalid_body(f"{name}: expected true or false, got {raw!r}")
    return raw in ("true", "1")
