"""Key families on the client planes, strict keys, configured keys with kinds, per-key rate
limits: in process, through the command line, the `keys:` fixture section and the client."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from conftest import HANG_GUARD_S, AiohttpClient, SpawnedStub, one_line, run_stub, spawn_stub
from stub import (
    FixtureError,
    FixtureSet,
    StubClient,
    StubConfig,
    create_app,
    load_fixture_paths,
    parse_fixture_document,
)
from stub.fixtures import default_fixture_dir
from stub.namespaces import NAMESPACES
from stub.rate_limit import RateLimiter

Client = TestClient[Any, Any]

SECRET = "SECRET123"
"""Every key below ends with it: no answer, header, log line or request entry may show it."""
KEYS = {
    "server": f"project-api-key_{SECRET}",
    "browser": f"svc_public_{SECRET}",
    "org": f"svc_org_{SECRET}",
    "phc": f"phc_{SECRET}",
    "phs": f"phs_{SECRET}",
    "phx": f"phx_{SECRET}",
    "other": f"cli-session-token_{SECRET}",
}
VENDOR_FAMILY = ("phc", "phs", "phx")
POLL_SECRET = "phs_poll_secret"
"""The definitions poll's Bearer secret key: checked for presence and acceptance only."""

RUNTIME_ROUTES = ("evaluate", "capture", "register")
VENDOR_ROUTES = ("flags", "batch", "definitions")
ROUTES = RUNTIME_ROUTES + VENDOR_ROUTES
PATHS = {
    "evaluate": "/v1/flags/evaluate",
    "capture": "/v1/capture",
    "register": "/v1/targets/register",
    "flags": "/flags",
    "batch": "/batch",
    "definitions": "/flags/definitions",
}
METHODS = {route: "GET" if route == "definitions" else "POST" for route in ROUTES}
RUNTIME_BODIES: dict[str, Any] = {
    "evaluate": {"targetingKey": "u1", "flagKeys": ["new-checkout"]},
    "capture": {"events": [{"type": "signal", "targetingKey": "u1"}]},
    "register": {"targetingKey": "u1"},
}

ORG_ELSEWHERE = (
    "an organisation key (svc_org_...) belongs to the management plane "
    "(/v1/projects, /v1/whoami), not here"
)
VENDOR_ELSEWHERE = (
    "an analytics-vendor key (phc_/phs_/phx_...) belongs to the legacy vendor routes "
    "(/flags, the definitions poll, /batch), not here"
)
BROWSER_SCOPE = (
    "a browser key (svc_public_...) may call only /v1/flags/evaluate, /v1/capture and "
    "/v1/targets/register"
)
STRICT = " (refused: strict keys)"
NOT_ACCEPTED = {
    "ok": False,
    "error": "UNAUTHORIZED",
    "message": "API key not accepted by this stub (see --api-key and the fixtures' keys.accepted)",
}
RATE_LIMIT_FAULT = {"mode": "429", "source": "rate-limit"}
NO_LIMITS: dict[str, Any] = {"perSecond": None, "perKey": {}}

MISUSES = [
    *(
        pytest.param(route, "org", 401, "UNAUTHORIZED", ORG_ELSEWHERE, id=f"{route}-org")
        for route in ROUTES
    ),
    *(
        pytest.param(route, key, 401, "UNAUTHORIZED", VENDOR_ELSEWHERE, id=f"{route}-{key}")
        for route in RUNTIME_ROUTES
        for key in VENDOR_FAMILY
    ),
    *(
        pytest.param(route, "browser", 403, "FORBIDDEN", BROWSER_SCOPE, id=f"{route}-browser")
        for route in VENDOR_ROUTES
    ),
]
"""(route, key, status under strict keys, error code, message): a key the service refuses there."""
AT_HOME = [
    pytest.param(route, key, id=f"{route}-{key}")
    for route in RUNTIME_ROUTES
    for key in ("server", "browser", "other")
] + [
    pytest.param(route, key, id=f"{route}-{key}")
    for route in VENDOR_ROUTES
    for key in ("server", *VENDOR_FAMILY, "other")
]


# --- helpers ----------------------------------------------------------------------------------


async def send(
    client: Client, route: str, key: str, *, secret: str = POLL_SECRET, header: str = "bearer"
) -> tuple[int, Mapping[str, str], str]:
    """One request to `route` charging `key` where that route reads it: status, headers, body
    text (read here, so a burst of these never holds a connection)."""
    path = PATHS[route]
    if route in RUNTIME_ROUTES:
        auth = {"Authorization": f"Bearer {key}"} if header == "bearer" else {"x-api-key": key}
        response = await client.post(path, json=RUNTIME_BODIES[route], headers=auth)
    elif route == "flags":
        response = await client.post(path, json={"api_key": key, "distinct_id": "u1"})
    elif route == "batch":
        body = {"api_key": key, "batch": [{"event": "e", "distinct_id": "u1"}]}
        response = await client.post(path, json=body)
    else:
        response = await client.get(
            path, params={"token": key}, headers={"Authorization": f"Bearer {secret}"}
        )
    async with response:
        return response.status, response.headers.copy(), await response.text()


async def status_of(client: Client, route: str, key: str, **options: str) -> int:
    return (await send(client, route, key, **options))[0]


async def last_request(client: Client) -> dict[str, Any]:
    body = await (await client.get("/_test/requests")).json()
    entry: dict[str, Any] = body["requests"][-1]
    return entry


async def rate_limits(client: Client) -> Any:
    response = await client.get("/_test/rate-limit")
    assert response.status == 200
    return await response.json()


def assert_no_key(headers: Mapping[str, str], text: str) -> None:
    assert SECRET not in text
    assert not [value for value in headers.values() if SECRET in value]


def stub_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "stub" and r.levelname == "WARNING"]


def with_keys(section: object, source: str = "keys.yaml") -> FixtureSet:
    """The default fixtures with a `keys:` section over them, as a later fixture file."""
    default = load_fixture_paths([default_fixture_dir()])
    return default.overlaid_with(parse_fixture_document({"keys": section}, source))


class ManualClock:
    """The rate limiter's clock, moved only by the test: a burst is exactly simultaneous."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def manual_clock(app: web.Application) -> ManualClock:
    """Give the app's limiter a manual clock, keeping its limits (and its reset behaviour)."""
    state = app[NAMESPACES].default
    clock = ManualClock()
    state.limiter = RateLimiter(state.limiter.limits, clock)
    return clock


async def burst(client: Client, n: int, key: str) -> list[tuple[int, Mapping[str, str], str]]:
    return await asyncio.gather(*(send(client, "evaluate", key) for _ in range(n)))


@pytest.fixture(params=["strict-keys-option", "keys-fixture"])
async def strict_client(request: pytest.FixtureRequest, aiohttp_client: AiohttpClient) -> Client:
    """A stub refusing misused keys: by `--strict-keys`, or by a fixture `keys: {strict: true}`."""
    if request.param == "strict-keys-option":
        return await aiohttp_client(create_app(StubConfig(strict_keys=True)))
    return await aiohttp_client(create_app(StubConfig(), with_keys({"strict": True})))


CONFIGURED = {
    "accepted": [{"key": "k-browser", "kind": "browser"}, {"key": "k-server", "kind": "server"}]
}


# --- key families, served with a warning by default --------------------------------------------


class TestKeyFamiliesByDefault:
    @pytest.mark.parametrize(("route", "key", "status", "code", "message"), MISUSES)
    async def test_a_misused_key_is_served_with_a_warning_naming_its_family_and_plane(
        self,
        client: Client,
        caplog: pytest.LogCaptureFixture,
        route: str,
        key: str,
        status: int,
        code: str,
        message: str,
    ) -> None:
        served, headers, text = await send(client, route, KEYS[key])
        assert served == 200, text
        assert headers["X-Svc-Stub-Warning"] == message
        assert stub_warnings(caplog) == [
            f"{METHODS[route]} {PATHS[route]}: {message} (served; --strict-keys refuses it)"
        ]
        entry = await last_request(client)
        assert (entry["route"], entry["status"], entry["warning"]) == (route, 200, message)
        assert_no_key(headers, text)
        assert SECRET not in caplog.text
        assert SECRET not in json.dumps(entry)

    @pytest.mark.parametrize(("route", "key"), AT_HOME)
    async def test_a_key_at_home_is_served_without_a_warning(
        self, client: Client, caplog: pytest.LogCaptureFixture, route: str, key: str
    ) -> None:
        served, headers, text = await send(client, route, KEYS[key])
        assert served == 200, text
        assert "X-Svc-Stub-Warning" not in headers
        assert stub_warnings(caplog) == []
        entry = await last_request(client)
        assert (entry["route"], entry["status"], entry["warning"]) == (route, 200, None)
        assert_no_key(headers, text)

    @pytest.mark.parametrize("route", RUNTIME_ROUTES)
    async def test_the_x_api_key_header_is_charged_like_bearer(
        self, client: Client, route: str
    ) -> None:
        served, headers, _ = await send(client, route, KEYS["org"], header="x-api-key")
        assert served == 200
        assert headers["X-Svc-Stub-Warning"] == ORG_ELSEWHERE

    @pytest.mark.parametrize("field", ["api_key", "token"])
    @pytest.mark.parametrize("route", ["flags", "batch"])
    async def test_either_body_key_field_is_charged_on_vendor_routes(
        self, client: Client, route: str, field: str
    ) -> None:
        body: dict[str, Any] = {field: KEYS["browser"], "distinct_id": "u1", "batch": []}
        response = await client.post(PATHS[route], json=body)
        assert response.status == 200
        assert response.headers["X-Svc-Stub-Warning"] == BROWSER_SCOPE

    async def test_the_older_definitions_spelling_is_charged_the_same(self, client: Client) -> None:
        response = await client.get(
            "/api/feature_flag/local_evaluation/",
            params={"token": KEYS["browser"]},
            headers={"Authorization": f"Bearer {POLL_SECRET}"},
        )
        assert response.status == 200
        assert response.headers["X-Svc-Stub-Warning"] == BROWSER_SCOPE


# --- strict keys --------------------------------------------------------------------------------


class TestStrictKeys:
    @pytest.mark.parametrize(("route", "key", "status", "code", "message"), MISUSES)
    async def test_a_misused_key_is_refused_naming_its_plane_not_the_key(
        self,
        strict_client: Client,
        caplog: pytest.LogCaptureFixture,
        route: str,
        key: str,
        status: int,
        code: str,
        message: str,
    ) -> None:
        refused, headers, text = await send(strict_client, route, KEYS[key])
        assert refused == status
        assert json.loads(text) == {"ok": False, "error": code, "message": message + STRICT}
        assert "X-Svc-Stub-Warning" not in headers
        assert stub_warnings(caplog) == []
        entry = await last_request(strict_client)
        assert (entry["route"], entry["status"], entry["warning"]) == (route, status, None)
        assert_no_key(headers, text)
        assert SECRET not in json.dumps(entry)

    @pytest.mark.parametrize(("route", "key"), AT_HOME)
    async def test_a_key_at_home_is_still_served_without_a_warning(
        self, strict_client: Client, route: str, key: str
    ) -> None:
        served, headers, text = await send(strict_client, route, KEYS[key])
        assert served == 200, text
        assert "X-Svc-Stub-Warning" not in headers
        assert_no_key(headers, text)

    @pytest.mark.parametrize(("secret", "status"), [("org", 401), ("browser", 403)])
    async def test_the_definitions_secret_is_held_to_its_family_too(
        self, strict_client: Client, secret: str, status: int
    ) -> None:
        refused, headers, text = await send(
            strict_client, "definitions", KEYS["phc"], secret=KEYS[secret]
        )
        assert refused == status
        assert_no_key(headers, text)

    @pytest.mark.parametrize("secret", ["server", "other"])
    async def test_a_definitions_secret_of_no_other_plane_is_served(
        self, strict_client: Client, secret: str
    ) -> None:
        served, headers, _ = await send(
            strict_client, "definitions", KEYS["phc"], secret=KEYS[secret]
        )
        assert served == 200
        assert "X-Svc-Stub-Warning" not in headers

    async def test_the_definitions_poll_still_needs_a_secret(self, strict_client: Client) -> None:
        response = await strict_client.get(PATHS["definitions"], params={"token": KEYS["phc"]})
        assert (response.status, await response.json()) == (
            401,
            {
                "ok": False,
                "error": "UNAUTHORIZED",
                "message": "missing API key: send the secret key as 'Authorization: Bearer <key>'",
            },
        )

    async def test_a_fixture_strict_false_relaxes_the_strict_keys_option(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        app = create_app(StubConfig(strict_keys=True), with_keys({"strict": False}))
        client = await aiohttp_client(app)
        served, headers, _ = await send(client, "evaluate", KEYS["org"])
        assert served == 200
        assert headers["X-Svc-Stub-Warning"] == ORG_ELSEWHERE

    async def test_a_keys_section_sent_at_run_time_applies_until_reset(
        self, client: Client
    ) -> None:
        response = await client.post("/_test/fixtures?merge=true", json={"keys": {"strict": True}})
        assert response.status == 200
        assert await status_of(client, "evaluate", KEYS["org"]) == 401
        await client.post("/_test/reset")
        assert await status_of(client, "evaluate", KEYS["org"]) == 200


# --- configured keys and their kinds ------------------------------------------------------------


class TestConfiguredKeys:
    @pytest.fixture
    async def configured(self, aiohttp_client: AiohttpClient) -> Client:
        return await aiohttp_client(create_app(StubConfig(), with_keys(CONFIGURED)))

    @pytest.mark.parametrize("route", ROUTES)
    async def test_only_the_listed_keys_are_accepted(self, configured: Client, route: str) -> None:
        for key in ("k-server", "k-browser"):
            assert await status_of(configured, route, key, secret="k-server") == 200
        for key in ("k-other", KEYS["server"]):
            refused, headers, text = await send(configured, route, key, secret="k-server")
            assert (refused, json.loads(text)) == (401, NOT_ACCEPTED)
            assert_no_key(headers, text)

    async def test_the_definitions_secret_must_be_listed_too(self, configured: Client) -> None:
        refused, _, text = await send(configured, "definitions", "k-server", secret="k-other")
        assert (refused, json.loads(text)) == (401, NOT_ACCEPTED)

    @pytest.mark.parametrize("route", RUNTIME_ROUTES)
    async def test_a_browser_kind_key_serves_the_runtime_routes_without_a_warning(
        self, configured: Client, route: str
    ) -> None:
        served, headers, _ = await send(configured, route, "k-browser")
        assert served == 200
        assert "X-Svc-Stub-Warning" not in headers

    @pytest.mark.parametrize("route", VENDOR_ROUTES)
    async def test_a_browser_kind_key_without_the_prefix_is_held_to_the_browser_scope(
        self, configured: Client, aiohttp_client: AiohttpClient, route: str
    ) -> None:
        served, headers, _ = await send(configured, route, "k-browser", secret="k-server")
        assert served == 200
        assert headers["X-Svc-Stub-Warning"] == BROWSER_SCOPE
        strict = await aiohttp_client(
            create_app(StubConfig(), with_keys({**CONFIGURED, "strict": True}))
        )
        refused, _, text = await send(strict, route, "k-browser", secret="k-server")
        assert (refused, json.loads(text)) == (
            403,
            {"ok": False, "error": "FORBIDDEN", "message": BROWSER_SCOPE + STRICT},
        )

    @pytest.mark.parametrize("route", ROUTES)
    async def test_the_api_key_option_still_works_together_with_the_section(
        self, aiohttp_client: AiohttpClient, route: str
    ) -> None:
        config = StubConfig(api_keys=frozenset({"cli-key"}))
        client = await aiohttp_client(create_app(config, with_keys(CONFIGURED)))
        assert await status_of(client, route, "cli-key", secret="cli-key") == 200
        assert await status_of(client, route, "k-server", secret="cli-key") == 200
        assert await status_of(client, route, "k-other", secret="cli-key") == 401

    async def test_a_section_sent_at_run_time_applies_until_reset(self, client: Client) -> None:
        response = await client.post("/_test/fixtures?merge=true", json={"keys": CONFIGURED})
        assert response.status == 200
        assert await status_of(client, "evaluate", "k-other") == 401
        await client.post("/_test/reset")
        assert await status_of(client, "evaluate", "k-other") == 200


# --- rate limits ----------------------------------------------------------------------------------


class TestRateLimit:
    @pytest.fixture
    async def limited(self, aiohttp_client: AiohttpClient) -> tuple[Client, ManualClock]:
        """`--rate-limit 50/s`, on a clock that stands still until the test moves it."""
        app = create_app(StubConfig(rate_limit=50))
        clock = manual_clock(app)
        return await aiohttp_client(app), clock

    async def test_200_concurrent_requests_with_one_key_serve_exactly_50(
        self, limited: tuple[Client, ManualClock]
    ) -> None:
        client, _ = limited
        answers = await burst(client, 200, "k")
        assert Counter(status for status, _, _ in answers) == {200: 50, 429: 150}
        for status, headers, text in answers:
            if status == 429:
                assert re.fullmatch(r"[1-9][0-9]*", headers["Retry-After"])
                assert json.loads(text) == {
                    "ok": False,
                    "error": "RATE_LIMITED",
                    "message": f"rate limit exceeded for this key: retry in "
                    f"{headers['Retry-After']} s",
                }
        log = (await (await client.get("/_test/requests?route=evaluate")).json())["requests"]
        assert Counter((e["status"], json.dumps(e["fault"])) for e in log) == {
            (200, "null"): 50,
            (429, json.dumps(RATE_LIMIT_FAULT)): 150,
        }

    async def test_two_keys_do_not_share_a_bucket(
        self, limited: tuple[Client, ManualClock]
    ) -> None:
        client, _ = limited
        assert Counter(s for s, _, _ in await burst(client, 50, "a")) == {200: 50}
        assert await status_of(client, "evaluate", "a") == 429
        assert Counter(s for s, _, _ in await burst(client, 50, "b")) == {200: 50}
        assert await status_of(client, "evaluate", "b") == 429

    async def test_the_window_starts_afresh_after_a_second(
        self, limited: tuple[Client, ManualClock]
    ) -> None:
        client, clock = limited
        await burst(client, 50, "k")
        assert await status_of(client, "evaluate", "k") == 429
        clock.advance(0.5)
        assert await status_of(client, "evaluate", "k") == 429
        clock.advance(0.5)
        assert Counter(s for s, _, _ in await burst(client, 51, "k")) == {200: 50, 429: 1}

    async def test_reset_clears_the_buckets(self, limited: tuple[Client, ManualClock]) -> None:
        client, _ = limited
        await burst(client, 50, "k")
        assert await status_of(client, "evaluate", "k") == 429
        assert (await client.post("/_test/reset")).status == 200
        assert await status_of(client, "evaluate", "k") == 200

    @pytest.mark.parametrize("route", ROUTES)
    async def test_every_client_route_is_limited_by_the_key_it_charges(
        self, client: Client, route: str
    ) -> None:
        response = await client.post("/_test/rate-limit", json={"perKey": {"phc_one": 1}})
        assert response.status == 200
        assert await status_of(client, route, "phc_one") == 200
        status, headers, text = await send(client, route, "phc_one")
        assert (status, json.loads(text)["error"]) == (429, "RATE_LIMITED")
        assert int(headers["Retry-After"]) >= 1
        entry = await last_request(client)
        assert (entry["route"], entry["status"], entry["fault"]) == (route, 429, RATE_LIMIT_FAULT)

    async def test_the_definitions_poll_is_not_limited_by_its_secret(self, client: Client) -> None:
        await client.post("/_test/rate-limit", json={"perKey": {POLL_SECRET: 1}})
        for _ in range(3):
            assert await status_of(client, "definitions", "phc_project") == 200

    async def test_limits_change_at_run_time_and_reset_restores_the_start_up_ones(
        self, limited: tuple[Client, ManualClock]
    ) -> None:
        client, _ = limited
        assert await rate_limits(client) == {"perSecond": 50.0, "perKey": {}}
        wanted = {"perSecond": 2, "perKey": {"vip": 100}}
        response = await client.post("/_test/rate-limit", json=wanted)
        assert (response.status, await response.json()) == (200, wanted)
        assert await rate_limits(client) == wanted
        assert Counter(s for s, _, _ in await burst(client, 3, "k")) == {200: 2, 429: 1}
        assert Counter(s for s, _, _ in await burst(client, 101, "vip")) == {200: 100, 429: 1}
        await client.post("/_test/reset")
        assert await rate_limits(client) == {"perSecond": 50.0, "perKey": {}}
        assert Counter(s for s, _, _ in await burst(client, 51, "k")) == {200: 50, 429: 1}

    async def test_new_limits_start_every_key_with_a_full_bucket(
        self, limited: tuple[Client, ManualClock]
    ) -> None:
        client, _ = limited
        await burst(client, 50, "k")
        await client.post("/_test/rate-limit", json={"perSecond": 50})
        assert await status_of(client, "evaluate", "k") == 200

    async def test_an_empty_body_lifts_the_limits(
        self, limited: tuple[Client, ManualClock]
    ) -> None:
        client, _ = limited
        response = await client.post("/_test/rate-limit", json={})
        assert (response.status, await response.json()) == (200, NO_LIMITS)
        assert Counter(s for s, _, _ in await burst(client, 120, "k")) == {200: 120}

    @pytest.mark.parametrize(
        ("body", "message"),
        [
            ({"perSecond": 0}, "perSecond: expected requests a second above 0, got 0"),
            ({"perSecond": -1}, "perSecond: expected requests a second above 0, got -1"),
            ({"perSecond": "50/s"}, 'perSecond: expected requests a second above 0, got "50/s"'),
            ({"perSecond": True}, "perSecond: expected requests a second above 0, got true"),
            ({"perKey": {"vip": 0}}, "perKey.vip: expected requests a second above 0, got 0"),
            ({"perKey": {"vip": None}}, "perKey.vip: expected requests a second above 0, got null"),
            ({"perKey": [1]}, "perKey: expected a mapping, got a list"),
            ({"persecond": 2}, "persecond: unknown key (expected one of perSecond, perKey)"),
            ([], "body: expected a JSON object, got an array"),
        ],
        ids=[
            "zero",
            "negative",
            "string",
            "boolean",
            "per-key-zero",
            "per-key-null",
            "per-key-list",
            "unknown",
            "array",
        ],
    )
    async def test_a_bad_body_is_a_400_naming_the_field_and_the_limits_stay(
        self, limited: tuple[Client, ManualClock], body: object, message: str
    ) -> None:
        client, _ = limited
        response = await client.post("/_test/rate-limit", json=body)
        assert (response.status, await response.json()) == (
            400,
            {"ok": False, "error": "INVALID_BODY", "message": message},
        )
        assert await rate_limits(client) == {"perSecond": 50.0, "perKey": {}}

    async def test_a_fixture_rate_limit_section_limits_too(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        app = create_app(
            StubConfig(), with_keys({"rateLimit": {"perSecond": 1, "perKey": {"vip": 3}}})
        )
        manual_clock(app)
        client = await aiohttp_client(app)
        assert await rate_limits(client) == {"perSecond": 1.0, "perKey": {"vip": 3.0}}
        assert Counter(s for s, _, _ in await burst(client, 2, "k")) == {200: 1, 429: 1}
        assert Counter(s for s, _, _ in await burst(client, 4, "vip")) == {200: 3, 429: 1}

    async def test_a_fixture_rate_limit_section_wins_over_the_option(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        app = create_app(StubConfig(rate_limit=50), with_keys({"rateLimit": {"perSecond": 2}}))
        client = await aiohttp_client(app)
        assert await rate_limits(client) == {"perSecond": 2.0, "perKey": {}}

    async def test_with_no_limit_configured_nothing_is_ever_limited(self, client: Client) -> None:
        assert await rate_limits(client) == NO_LIMITS
        assert Counter(s for s, _, _ in await burst(client, 300, "k")) == {200: 300}
        log = (await (await client.get("/_test/requests")).json())["requests"]
        assert {e["fault"] is None for e in log} == {True}

    async def test_retry_after_is_the_real_wait(self, aiohttp_client: AiohttpClient) -> None:
        client = await aiohttp_client(create_app(StubConfig(rate_limit=0.5)))
        assert await status_of(client, "evaluate", "k") == 200
        status, headers, text = await send(client, "evaluate", "k")
        assert (status, headers["Retry-After"]) == (429, "2")
        assert json.loads(text)["message"] == "rate limit exceeded for this key: retry in 2 s"

    async def test_retry_after_counts_down_as_the_bucket_refills(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        app = create_app(StubConfig(rate_limit=0.5))
        clock = manual_clock(app)
        client = await aiohttp_client(app)
        assert await status_of(client, "evaluate", "k") == 200
        waits = []
        for _ in range(2):
            status, headers, _ = await send(client, "evaluate", "k")
            waits.append((status, headers.get("Retry-After")))
            clock.advance(1)
        assert waits == [(429, "2"), (429, "1")]
        assert await status_of(client, "evaluate", "k") == 200

    async def test_a_misused_key_over_its_limit_still_says_why_it_was_warned(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        app = create_app(StubConfig(rate_limit=1))
        manual_clock(app)
        client = await aiohttp_client(app)
        await send(client, "evaluate", KEYS["org"])
        status, headers, text = await send(client, "evaluate", KEYS["org"])
        assert (status, headers["X-Svc-Stub-Warning"]) == (429, ORG_ELSEWHERE)
        entry = await last_request(client)
        assert (entry["fault"], entry["warning"]) == (RATE_LIMIT_FAULT, ORG_ELSEWHERE)
        assert_no_key(headers, text)


# --- the command line ---------------------------------------------------------------------------


def post(stub: SpawnedStub, path: str, body: object, key: str | None = None) -> tuple[int, Any]:
    auth = {"Authorization": f"Bearer {key}"} if key is not None else {}
    request = urllib.request.Request(stub.url + path, data=json.dumps(body).encode(), headers=auth)
    try:
        with urllib.request.urlopen(request, timeout=HANG_GUARD_S) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.load(error)


class TestCommandLine:
    @pytest.mark.parametrize(
        ("value", "per_second"), [("50/s", 50.0), ("50", 50.0), ("0.5/s", 0.5)]
    )
    def test_rate_limit_values_are_accepted(self, value: str, per_second: float) -> None:
        with spawn_stub("--rate-limit", value) as stub:
            assert stub.get("/_test/rate-limit") == {"perSecond": per_second, "perKey": {}}

    @pytest.mark.parametrize("value", ["0", "-1", "fast"])
    def test_bad_rate_limits_are_refused_with_one_line(self, value: str) -> None:
        assert one_line(run_stub("--rate-limit", value)) == (
            f"svc-stub: error: --rate-limit: expected requests a second like 50/s, got '{value}'"
        )

    def test_strict_keys_refuses_a_misused_key(self) -> None:
        with spawn_stub("--strict-keys") as stub:
            evaluate = {"targetingKey": "u1"}
            assert post(stub, "/v1/flags/evaluate", evaluate, KEYS["server"])[0] == 200
            assert post(stub, "/v1/flags/evaluate", evaluate, KEYS["org"]) == (
                401,
                {"ok": False, "error": "UNAUTHORIZED", "message": ORG_ELSEWHERE + STRICT},
            )


# --- the `keys:` fixture section ----------------------------------------------------------------


class TestKeysSection:
    def test_a_full_section_parses(self) -> None:
        keys = parse_fixture_document(
            {
                "keys": {
                    "strict": True,
                    "accepted": [{"key": "b", "kind": "browser"}, {"key": "s"}],
                    "rateLimit": {"perSecond": 5, "perKey": {"b": 0.5}},
                }
            },
            "x.yaml",
        ).keys
        assert keys is not None
        assert (keys.strict, dict(keys.accepted)) == (True, {"b": "browser", "s": "server"})
        assert keys.limits is not None
        assert keys.limits.to_json() == {"perSecond": 5.0, "perKey": {"b": 0.5}}

    def test_an_empty_section_changes_nothing(self) -> None:
        keys = parse_fixture_document({"keys": None}, "x.yaml").keys
        assert keys is not None
        assert (keys.strict, dict(keys.accepted), keys.limits) == (None, {}, None)

    @pytest.mark.parametrize(
        ("section", "message"),
        [
            pytest.param([], "keys: expected a mapping, got a list", id="not-a-mapping"),
            pytest.param(
                {"strikt": True},
                "keys.strikt: unknown key (expected one of strict, accepted, rateLimit)",
                id="unknown-key",
            ),
            pytest.param(
                {"strict": "yes"}, 'keys.strict: expected true or false, got "yes"', id="strict"
            ),
            pytest.param(
                {"strict": 1}, "keys.strict: expected true or false, got 1", id="strict-1"
            ),
            pytest.param(
                {"accepted": "k"}, 'keys.accepted: expected a list, got "k"', id="accepted-string"
            ),
            pytest.param(
                {"accepted": [{"kind": "server"}]},
                "keys.accepted.0.key: expected a non-empty key, got null",
                id="no-key",
            ),
            pytest.param(
                {"accepted": [{"key": "a"}, {"key": " "}]},
                'keys.accepted.1.key: expected a non-empty key, got " "',
                id="blank-key",
            ),
            pytest.param(
                {"accepted": ["k"]},
                'keys.accepted.0: expected a mapping, got "k"',
                id="entry-not-a-mapping",
            ),
            pytest.param(
                {"accepted": [{"key": "k", "scope": "x"}]},
                "keys.accepted.0.scope: unknown key (expected one of key, kind)",
                id="entry-unknown-key",
            ),
            pytest.param(
                {"accepted": [{"key": "k", "kind": "admin"}]},
                'keys.accepted.0.kind: expected server or browser, got "admin"',
                id="bad-kind",
            ),
            pytest.param(
                {"rateLimit": {"perSecond": 0}},
                "keys.rateLimit.perSecond: expected requests a second above 0, got 0",
                id="rate-zero",
            ),
            pytest.param(
                {"rateLimit": {"perSecond": "50/s"}},
                'keys.rateLimit.perSecond: expected requests a second above 0, got "50/s"',
                id="rate-string",
            ),
            pytest.param(
                {"rateLimit": {"perSecond": True}},
                "keys.rateLimit.perSecond: expected requests a second above 0, got true",
                id="rate-boolean",
            ),
            pytest.param(
                {"rateLimit": {"perKey": {"vip": -1}}},
                "keys.rateLimit.perKey.vip: expected requests a second above 0, got -1",
                id="per-key-negative",
            ),
            pytest.param(
                {"rateLimit": {"burst": 5}},
                "keys.rateLimit.burst: unknown key (expected one of perSecond, perKey)",
                id="rate-unknown-key",
            ),
            pytest.param(
                {"rateLimit": 50},
                "keys.rateLimit: expected a mapping, got 50",
                id="rate-not-a-mapping",
            ),
        ],
    )
    def test_errors_name_the_file_and_key_path(self, section: object, message: str) -> None:
        with pytest.raises(FixtureError) as info:
            parse_fixture_document({"keys": section}, "x.yaml")
        assert str(info.value) == f"x.yaml: {message}"


# --- the control client ---------------------------------------------------------------------------


class TestControlClient:
    @pytest.fixture
    def stub(self, live_stub: SpawnedStub) -> Iterator[StubClient]:
        client = StubClient(live_stub.url)
        yield client
        client.reset()  # the session's stub: leave no limits behind

    def test_set_rate_limit_changes_the_limits_until_reset(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        stub.set_rate_limit(2, per_key={"vip": 100})
        assert live_stub.get("/_test/rate-limit") == {"perSecond": 2.0, "perKey": {"vip": 100.0}}
        evaluate = {"targetingKey": "u1"}
        statuses = [post(live_stub, "/v1/flags/evaluate", evaluate, "k")[0] for _ in range(3)]
        assert statuses == [200, 200, 429]
        stub.reset()
        assert live_stub.get("/_test/rate-limit") == NO_LIMITS

    def test_set_rate_limit_without_arguments_lifts_the_limits(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        stub.set_rate_limit(1)
        stub.set_rate_limit()
        assert live_stub.get("/_test/rate-limit") == NO_LIMITS

    def test_assert_no_warnings_passes_on_clean_traffic(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        assert (
            post(live_stub, "/v1/flags/evaluate", {"targetingKey": "u1"}, KEYS["server"])[0] == 200
        )
        assert post(live_stub, "/flags", {"api_key": KEYS["phc"]})[0] == 200
        stub.assert_no_warnings()

    def test_assert_no_warnings_fails_listing_the_request_that_used_an_org_key(
        self, live_stub: SpawnedStub, stub: StubClient
    ) -> None:
        post(live_stub, "/v1/flags/evaluate", {"targetingKey": "u1"}, KEYS["server"])
        post(live_stub, "/v1/flags/evaluate", {"targetingKey": "u1"}, KEYS["org"])
        seq = stub.requests()[-1].seq
        with pytest.raises(AssertionError) as failed:
            stub.assert_no_warnings()
        header, *lines = str(failed.value).splitlines()
        assert re.fullmatch(r"1 requests? used a key where the service refuses it:", header)
        assert lines == [f"  #{seq} POST /v1/flags/evaluate: {ORG_ELSEWHERE}"]
        assert SECRET not in str(failed.value)


class TestRateLimitKeptAcrossFixtures:
    async def test_a_limit_set_at_run_time_survives_a_keys_merge(self, client: Client) -> None:
        assert (await client.post("/_test/rate-limit", json={"perSecond": 5})).status == 200
        document = {"keys": {"accepted": [{"key": "k-one", "kind": "server"}]}}
        assert (await client.post("/_test/fixtures?merge=true", json=document)).status == 200
        limits = await (await client.get("/_test/rate-limit")).json()
        assert limits == {"perSecond": 5.0, "perKey": {}}
