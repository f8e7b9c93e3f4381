"""Pages on other origins: every answer of the runtime and vendor planes readable by the page
that asked, whatever gave it; preflights answered, never faulted, charged or counted; and a
control plane that only its own tools (and the origins and hosts a user names) can drive.

What a browser does with these headers is shown in tests/test_cors_browser.py; here each
answer path's headers are checked one by one, so a new path that forgets them fails."""

from __future__ import annotations

import asyncio
import urllib.request
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from conftest import AUTH, HANG_GUARD_S, AiohttpClient, SpawnedStub
from stub import StubConfig, create_app
from stub.app import CLIENT_PLANES
from stub.client import StubClient, WaitTimeout
from stub.client import models as client_models
from stub.control.access import BadSetting, host_setting
from stub.cors import DEFAULT_REQUEST_HEADERS, PREFLIGHT
from stub.faults.modes import FaultMode
from stub.wire import MAX_WAIT_MS

Client = TestClient[Any, Any]
PAGE = "http://localhost:5173"
FROM_PAGE = {"Origin": PAGE}
EVALUATE = "/v1/flags/evaluate"
BODY = {"targetingKey": "u1", "flagKeys": ["checkout-v2"]}
EXPOSED = {"retry-after", "etag", "x-svc-stub-warning", "x-request-id", "allow"}

RUNTIME, VENDOR, MANAGEMENT = CLIENT_PLANES
PUBLIC_ROUTES = sorted(
    {
        (route.method, route.path)
        for plane in (RUNTIME, VENDOR)
        for route in plane.routes
        if isinstance(route, web.RouteDef)
    }
)
"""Every route a page may call: the runtime plane's and the vendor routes, from their tables."""


def preflight_headers(
    method: str = "POST", headers: str = "authorization, content-type"
) -> dict[str, str]:
    return {
        **FROM_PAGE,
        "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": headers,
    }


def readable(headers: Any) -> bool:
    """The page may read this answer, and the headers a client reads off it."""
    exposed = {
        name.strip().lower() for name in headers.get("Access-Control-Expose-Headers", "").split(",")
    }
    return bool(exposed >= EXPOSED and headers.get("Access-Control-Allow-Origin") == "*")


async def journal(
    client: Client, prefix: str = "", route: str | None = None
) -> list[dict[str, Any]]:
    query = {"route": route} if route else {}
    answer = await client.get(f"{prefix}/_test/requests", params=query)
    assert answer.status == 200, await answer.text()
    entries: list[dict[str, Any]] = (await answer.json())["requests"]
    return entries


async def app_client(aiohttp_client: AiohttpClient, **settings: Any) -> Client:
    return await aiohttp_client(create_app(StubConfig(**settings)))


class TestPreflight:
    @pytest.mark.parametrize(("method", "path"), PUBLIC_ROUTES)
    @pytest.mark.parametrize("prefix", ["", "/ns/web-team"])
    @pytest.mark.parametrize("slash", ["", "/"])
    async def test_every_public_route_allows_its_method_and_the_headers_asked_for(
        self, client: Client, method: str, path: str, prefix: str, slash: str
    ) -> None:
        asked = "authorization, content-type, content-encoding, x-api-key, x-svc-test-fault"
        answer = await client.options(
            prefix + path + slash, headers=preflight_headers(method, asked)
        )
        assert answer.status == 204
        assert answer.headers["Access-Control-Allow-Origin"] == "*"
        assert method in answer.headers["Access-Control-Allow-Methods"].split(", ")
        assert answer.headers["Access-Control-Allow-Headers"] == asked
        assert int(answer.headers["Access-Control-Max-Age"]) > 0
        assert "Access-Control-Allow-Credentials" not in answer.headers  # keys are headers
        assert "Access-Control-Allow-Private-Network" not in answer.headers  # not asked

    async def test_one_that_names_no_headers_gets_the_ones_clients_send(
        self, client: Client
    ) -> None:
        answer = await client.options(
            EVALUATE, headers={**FROM_PAGE, "Access-Control-Request-Method": "POST"}
        )
        allowed = {
            name.lower() for name in answer.headers["Access-Control-Allow-Headers"].split(", ")
        }
        assert {"authorization", "content-type", "content-encoding", "x-api-key"} <= allowed
        assert {"x-svc-test-namespace", "x-svc-test-fault"} <= allowed
        assert answer.headers["Access-Control-Allow-Headers"] == DEFAULT_REQUEST_HEADERS

    async def test_private_network_access_is_granted_when_the_browser_asks(
        self, client: Client
    ) -> None:
        asks = {**preflight_headers(), "Access-Control-Request-Private-Network": "true"}
        answer = await client.options(EVALUATE, headers=asks)
        assert answer.headers["Access-Control-Allow-Private-Network"] == "true"

    async def test_an_unknown_path_allows_the_method_so_its_404_is_readable(
        self, client: Client
    ) -> None:
        answer = await client.options("/v1/flag/evaluate", headers=preflight_headers())
        assert (answer.status, answer.headers["Access-Control-Allow-Methods"]) == (204, "POST")
        missing = await client.post("/v1/flag/evaluate", json=BODY, headers={**AUTH, **FROM_PAGE})
        assert missing.status == 404
        assert readable(missing.headers)
        assert "did you mean POST /v1/flags/evaluate?" in (await missing.json())["message"]

    async def test_the_management_plane_answers_no_page(self, client: Client) -> None:
        answer = await client.options("/v1/projects", headers=preflight_headers("GET"))
        assert answer.status == 405
        assert "Access-Control-Allow-Origin" not in answer.headers
        listed = await client.get(
            "/v1/projects", headers={"Authorization": "Bearer svc_org_default", **FROM_PAGE}
        )
        assert listed.status == 200
        assert "Access-Control-Allow-Origin" not in listed.headers
        browser_key = await client.get(
            "/v1/projects", headers={"Authorization": "Bearer svc_public_web", **FROM_PAGE}
        )
        assert browser_key.status == 401  # refused as without an Origin
        assert (
            "a browser key (svc_public_...) belongs to the runtime plane"
            in (await browser_key.json())["error"]["message"]
        )

    async def test_an_options_request_that_is_no_preflight_is_refused_as_before(
        self, client: Client
    ) -> None:
        answer = await client.options(EVALUATE)
        assert (answer.status, answer.headers["Allow"]) == (405, "POST")


class TestAPreflightIsNoClientRequest:
    async def test_it_is_recorded_as_a_preflight_in_its_namespace_and_counted_as_no_route(
        self, client: Client
    ) -> None:
        await client.options("/ns/web/v1/flags/evaluate", headers=preflight_headers())
        await client.post("/ns/web/v1/flags/evaluate", json=BODY, headers={**AUTH, **FROM_PAGE})
        entries = await journal(client, "/ns/web")
        assert [(e["method"], e["route"], e["status"]) for e in entries] == [
            ("OPTIONS", "preflight", 204),
            ("POST", "evaluate", 200),
        ]
        assert len(await journal(client, "/ns/web", route="evaluate")) == 1
        assert await journal(client) == []  # nothing in the default namespace

    async def test_one_whose_namespace_it_cannot_tell_is_recorded_nowhere(
        self, client: Client
    ) -> None:
        by_header = preflight_headers("POST", "authorization, x-svc-test-namespace")
        assert (await client.options(EVALUATE, headers=by_header)).status == 204
        await client.post("/_test/namespaces", json={"name": "keyed", "keys": ["project-key"]})
        assert (await client.options(EVALUATE, headers=preflight_headers())).status == 204
        assert await journal(client) == []
        assert await journal(client, "/ns/keyed") == []

    async def test_a_wait_for_requests_counts_no_preflight(self, client: Client) -> None:
        await client.options("/ns/web/v1/flags/evaluate", headers=preflight_headers())
        params = {"min": "1", "waitMs": str(MAX_WAIT_MS)}  # the longest, never waited out
        waiting = asyncio.ensure_future(client.get("/ns/web/_test/requests", params=params))
        await asyncio.sleep(0.2)
        assert not waiting.done()  # the preflight is there, and counts for nothing
        await client.post("/ns/web/v1/flags/evaluate", json=BODY, headers={**AUTH, **FROM_PAGE})
        waited = await (await waiting).json()
        assert [entry["route"] for entry in waited["requests"]] == ["preflight", "evaluate"]
        only = await client.get("/ns/web/_test/requests", params={"route": "preflight", **params})
        assert len((await only.json())["requests"]) == 1

    async def test_it_is_never_faulted_and_takes_no_armed_fault(self, client: Client) -> None:
        armed = await client.post("/_test/fault", json={"mode": "500", "ttlRequests": 1})
        assert armed.status == 200
        query = "?fault=500"  # a page's per-request fault rides on the URL the preflight has too
        for _ in range(3):
            answer = await client.options(EVALUATE + query, headers=preflight_headers())
            assert answer.status == 204
        faulted = await client.post(EVALUATE, json=BODY, headers={**AUTH, **FROM_PAGE})
        assert faulted.status == 500  # the armed one, still there
        assert readable(faulted.headers)
        assert (await client.post(EVALUATE, json=BODY, headers=AUTH)).status == 200

    async def test_it_is_never_charged_to_a_key_or_rate_limited(self, client: Client) -> None:
        await client.post("/_test/rate-limit", json={"perSecond": 1})
        for _ in range(5):
            asks = {**preflight_headers(), "Authorization": "Bearer test-key"}
            assert (await client.options(EVALUATE, headers=asks)).status == 204
        assert (await client.post(EVALUATE, json=BODY, headers=AUTH)).status == 200
        limited = await client.post(EVALUATE, json=BODY, headers={**AUTH, **FROM_PAGE})
        assert limited.status == 429
        assert readable(limited.headers)
        assert int(limited.headers["Retry-After"]) >= 1


ANSWERED_BY_THE_FAULT = {
    FaultMode.DELAY: {"delayMs": "1"},
    FaultMode.UNAUTHORIZED: {},
    FaultMode.RATE_LIMITED: {},
    FaultMode.SERVER_ERROR: {},
    FaultMode.INVALID_JSON: {},
    FaultMode.TRUNCATED: {},
    FaultMode.QUOTA_LIMITED: {},
    FaultMode.STATUS: {"status": "503"},
    FaultMode.SLOW_BODY: {"delayMs": "1"},
}
NO_ANSWER = {FaultMode.RESET, FaultMode.EMPTY_RESPONSE, FaultMode.HANG}
"""Faults that answer nothing at all: no header to carry."""


class TestEveryAnswerIsReadableByThePage:
    def test_every_fault_mode_is_checked_here(self) -> None:
        assert set(ANSWERED_BY_THE_FAULT) | NO_ANSWER == set(FaultMode), (
            "a new fault mode: add it to ANSWERED_BY_THE_FAULT (its answer must carry CORS)"
        )

    @pytest.mark.parametrize(("method", "path"), PUBLIC_ROUTES)
    async def test_what_the_fixtures_answer(self, client: Client, method: str, path: str) -> None:
        bodies = {
            EVALUATE: BODY,
            "/v1/capture": {"events": []},
            "/v1/targets/register": {"targetingKey": "u1"},
            "/flags": {"api_key": "phc_web", "distinct_id": "u"},
            "/batch": {"api_key": "phc_web", "batch": []},
        }
        body = bodies.get(path)
        sent = {"json": body} if method == "POST" else {"params": {"token": "phc_web"}}
        answer = await client.request(method, path, headers={**AUTH, **FROM_PAGE}, **sent)
        assert answer.status < 300, await answer.text()
        assert readable(answer.headers)

    @pytest.mark.parametrize("mode", sorted(ANSWERED_BY_THE_FAULT))
    @pytest.mark.parametrize("via", ["header", "armed"])
    async def test_what_every_fault_answers(
        self, client: Client, mode: FaultMode, via: str
    ) -> None:
        parameters = ANSWERED_BY_THE_FAULT[mode]
        headers = {**AUTH, **FROM_PAGE}
        if via == "header":
            headers["X-Svc-Test-Fault"] = mode.value
            headers.update(
                {
                    f"X-Svc-Test-{'Delay-Ms' if k == 'delayMs' else k.title()}": v
                    for k, v in parameters.items()
                }
            )
        else:
            document = {"mode": mode.value, **{k: int(v) for k, v in parameters.items()}}
            assert (await client.post("/_test/fault", json=document)).status == 200
        answer = await client.post(EVALUATE, json=BODY, headers=headers)
        assert readable(answer.headers), (mode, answer.status, dict(answer.headers))
        answer.close()
        fired = (await journal(client, route="evaluate"))[-1]
        assert fired["fault"]["mode"] == mode.value

    async def test_a_429_and_a_503_say_when_to_come_back(self, client: Client) -> None:
        for headers in (
            {"X-Svc-Test-Fault": "429"},
            {
                "X-Svc-Test-Fault": "status",
                "X-Svc-Test-Status": "503",
                "X-Svc-Test-Retry-After": "7",
            },
        ):
            answer = await client.post(
                EVALUATE, json=BODY, headers={**AUTH, **FROM_PAGE, **headers}
            )
            assert answer.status in (429, 503)
            assert readable(answer.headers)
            assert answer.headers["Retry-After"] in ("1", "7")

    async def test_a_bad_body_a_missing_key_and_a_body_too_large(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await app_client(aiohttp_client, max_body_bytes=1024)
        bad = await client.post(EVALUATE, data=b"{not json", headers={**AUTH, **FROM_PAGE})
        keyless = await client.post(EVALUATE, json=BODY, headers=FROM_PAGE)
        large = await client.post(EVALUATE, data=b"x" * 4096, headers={**AUTH, **FROM_PAGE})
        assert [bad.status, keyless.status, large.status] == [400, 401, 413]
        assert all(readable(answer.headers) for answer in (bad, keyless, large))

    async def test_a_key_refused_and_a_key_served_with_a_warning(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        strict = await app_client(
            aiohttp_client, api_keys=frozenset({"svc_public_web"}), strict_keys=True
        )
        wrong = await strict.post(
            EVALUATE, json=BODY, headers={"Authorization": "Bearer nope", **FROM_PAGE}
        )
        scope = await strict.post(
            "/flags", json={"api_key": "svc_public_web", "distinct_id": "u"}, headers=FROM_PAGE
        )
        assert (wrong.status, scope.status) == (401, 403)
        assert readable(wrong.headers)
        assert readable(scope.headers)
        lenient = await app_client(aiohttp_client)
        warned = await lenient.post(
            "/flags", json={"api_key": "svc_public_web", "distinct_id": "u"}, headers=FROM_PAGE
        )
        assert warned.status == 200
        assert readable(warned.headers)
        assert "browser key" in warned.headers["X-Svc-Stub-Warning"]

    async def test_an_unknown_route_a_wrong_method_and_a_bad_namespace_prefix(
        self, client: Client
    ) -> None:
        unknown = await client.post("/v1/nowhere", json={}, headers={**AUTH, **FROM_PAGE})
        method = await client.get(EVALUATE, headers={**AUTH, **FROM_PAGE})
        prefix = await client.post(
            "/ns/not a name/v1/flags/evaluate", json=BODY, headers={**AUTH, **FROM_PAGE}
        )
        assert [unknown.status, method.status, prefix.status] == [404, 405, 400]
        assert all(readable(answer.headers) for answer in (unknown, method, prefix))
        assert method.headers["Allow"] == "POST"
        asked = await client.options(
            "/ns/not a name/v1/flags/evaluate", headers=preflight_headers()
        )
        assert asked.status == 204  # else the browser would hide the 400 from the page

    async def test_a_path_of_the_control_plane_answers_no_page(self, client: Client) -> None:
        unknown = await client.get("/health/x", headers=FROM_PAGE)
        assert unknown.status == 404
        assert "Access-Control-Allow-Origin" not in unknown.headers

    async def test_an_evicted_namespace(self, aiohttp_client: AiohttpClient) -> None:
        client = await app_client(aiohttp_client, max_namespaces=1)
        await client.post("/ns/first/v1/flags/evaluate", json=BODY, headers=AUTH)
        await client.post("/ns/second/v1/flags/evaluate", json=BODY, headers=AUTH)
        asked = await client.options("/ns/first/v1/flags/evaluate", headers=preflight_headers())
        assert asked.status == 204  # else the browser would hide the 410 from the page
        gone = await client.post(
            "/ns/first/v1/flags/evaluate", json=BODY, headers={**AUTH, **FROM_PAGE}
        )
        assert gone.status == 410
        assert readable(gone.headers)

    async def test_a_request_with_no_origin_gets_no_cors_headers(self, client: Client) -> None:
        answer = await client.post(EVALUATE, json=BODY, headers=AUTH)
        assert not [name for name in answer.headers if name.lower().startswith("access-control-")]


class TestTheControlPlaneRefusesPages:
    async def test_a_page_on_another_origin_is_refused_and_changes_nothing(
        self, client: Client
    ) -> None:
        await client.post(EVALUATE, json=BODY, headers=AUTH)
        attempts: list[tuple[str, str, dict[str, Any] | None]] = [
            ("GET", "/_test/requests", None),
            ("POST", "/_test/reset", None),
            ("POST", "/_test/fault", {"mode": "500"}),
            ("POST", "/_test/fixtures", {"flags": {}}),
            ("POST", "/_test/rate-limit", {"perSecond": 1}),
            ("GET", "/_test/nowhere", None),
            ("GET", "/_test/ui/feed", None),
        ]
        for method, path, document in attempts:
            answer = await client.request(method, path, json=document, headers=FROM_PAGE)
            body = await answer.json()
            assert (answer.status, body["error"]) == (403, "ORIGIN_NOT_ALLOWED"), path
            assert f"--allow-origin {PAGE}" in body["message"]
            assert "Access-Control-Allow-Origin" not in answer.headers
        assert len(await journal(client)) == 1
        assert (await (await client.get("/_test/fault")).json())["armed"] == []
        assert (await client.post(EVALUATE, json=BODY, headers=AUTH)).status == 200

    @pytest.mark.parametrize("origin", ["null", "http://127.0.0.1:1", "https://evil.example"])
    async def test_any_origin_but_its_own(self, client: Client, origin: str) -> None:
        answer = await client.post("/_test/reset", headers={"Origin": origin})
        assert answer.status == 403

    async def test_its_own_page_and_tools_are_served(self, client: Client) -> None:
        own = f"http://{client.host}:{client.port}"
        assert (await client.post("/_test/reset", headers={"Origin": own})).status == 200
        same = {"Sec-Fetch-Site": "same-origin", "Origin": own}
        assert (await client.get("/_test/requests", headers=same)).status == 200
        typed = {"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate"}
        assert (await client.get("/_test/ui", headers=typed)).status == 200

    @pytest.mark.parametrize("site", ["cross-site", "same-site"])
    async def test_a_request_another_site_made_without_an_origin(
        self, client: Client, site: str
    ) -> None:
        answer = await client.get(
            "/_test/requests", headers={"Sec-Fetch-Site": site, "Sec-Fetch-Mode": "no-cors"}
        )
        assert answer.status == 403
        assert "--allow-origin" in (await answer.json())["message"]

    async def test_a_link_from_another_site_opens_the_page_but_no_data(
        self, client: Client
    ) -> None:
        link = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}
        assert (await client.get("/_test/ui", headers=link)).status == 200
        assert (await client.get("/_test/requests", headers=link)).status == 403

    async def test_a_control_preflight_from_a_page_is_refused(self, client: Client) -> None:
        answer = await client.options("/_test/fault", headers=preflight_headers())
        assert answer.status == 403
        assert "Access-Control-Allow-Origin" not in answer.headers

    async def test_the_runtime_plane_and_health_answer_any_host(self, client: Client) -> None:
        foreign = {"Host": "rebind.example:3901"}
        assert (await client.post(EVALUATE, json=BODY, headers={**AUTH, **foreign})).status == 200
        assert (await client.get("/health", headers=foreign)).status == 200


class TestAnOriginTheUserNamed:
    async def test_drives_the_control_plane_and_reads_its_answers(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await app_client(aiohttp_client, allow_origins=frozenset({PAGE}))
        asked = await client.options(
            "/_test/fault", headers=preflight_headers("POST", "content-type, x-svc-test-namespace")
        )
        assert asked.status == 204
        assert asked.headers["Access-Control-Allow-Origin"] == PAGE
        assert set(asked.headers["Access-Control-Allow-Methods"].split(", ")) == {
            "DELETE",
            "GET",
            "POST",
        }
        assert asked.headers["Access-Control-Allow-Headers"] == "content-type, x-svc-test-namespace"
        armed = await client.post("/_test/fault", json={"mode": "500"}, headers=FROM_PAGE)
        assert armed.status == 200
        assert (armed.headers["Access-Control-Allow-Origin"], armed.headers["Vary"]) == (
            PAGE,
            "Origin",
        )
        refused = await client.post("/_test/fault", json={"mode": "nope"}, headers=FROM_PAGE)
        assert refused.status == 400
        assert refused.headers["Access-Control-Allow-Origin"] == PAGE
        other = await client.get("/_test/requests", headers={"Origin": "http://localhost:5174"})
        assert other.status == 403

    async def test_reads_an_unknown_control_paths_404(self, aiohttp_client: AiohttpClient) -> None:
        client = await app_client(aiohttp_client, allow_origins=frozenset({PAGE}))
        asked = await client.options("/_test/nowhere", headers=preflight_headers("GET"))
        assert (asked.status, asked.headers["Access-Control-Allow-Methods"]) == (204, "GET")
        missing = await client.get("/_test/nowhere", headers=FROM_PAGE)
        assert missing.status == 404
        assert missing.headers["Access-Control-Allow-Origin"] == PAGE

    async def test_still_needs_the_control_token(self, aiohttp_client: AiohttpClient) -> None:
        client = await app_client(
            aiohttp_client, allow_origins=frozenset({PAGE}), control_token="t0ken"
        )
        asked = await client.options(
            "/_test/requests", headers=preflight_headers("GET", "authorization")
        )
        assert asked.status == 204  # a preflight never carries the token
        without = await client.get("/_test/requests", headers=FROM_PAGE)
        assert without.status == 401
        assert without.headers["Access-Control-Allow-Origin"] == PAGE
        tokened = await client.get(
            "/_test/requests", headers={**FROM_PAGE, "Authorization": "Bearer t0ken"}
        )
        assert tokened.status == 200


class TestHosts:
    @pytest.mark.parametrize(
        "host",
        [
            "127.0.0.1:3901",
            "[::1]:3901",
            "10.0.0.5",
            "localhost",
            "LOCALHOST:1",
            "app.localhost:3901",
            "localhost.",
        ],
    )
    async def test_an_address_or_localhost_is_answered(self, client: Client, host: str) -> None:
        assert (await client.get("/_test/requests", headers={"Host": host})).status == 200

    @pytest.mark.parametrize(
        "host", ["rebind.example:3901", "svc-stub:3901", "localhost.example", "127.0.0.1.nip.io"]
    )
    async def test_any_other_name_is_refused_with_the_option_that_admits_it(
        self, client: Client, host: str
    ) -> None:
        answer = await client.get("/_test/ui", headers={"Host": host})
        body = await answer.json()
        assert (answer.status, body["error"]) == (403, "HOST_NOT_ALLOWED")
        assert f"--allow-host {host.split(':')[0]}" in body["message"]

    async def test_a_name_the_user_gave_is_answered_on_any_port_or_on_the_one_given(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await app_client(
            aiohttp_client, allow_hosts=frozenset({"svc-stub", "proxy.test:8080"})
        )
        statuses = [
            (await client.get("/_test/requests", headers={"Host": host})).status
            for host in (
                "svc-stub",
                "svc-stub:3901",
                "SVC-STUB:1",
                "proxy.test:8080",
                "proxy.test:8081",
                "other",
            )
        ]
        assert statuses == [200, 200, 200, 200, 403, 403]

    @pytest.mark.parametrize(
        ("given", "kept"),
        [("svc-stub", "svc-stub"), ("SVC-Stub.:3901", "svc-stub:3901"), ("web_1", "web_1")],
    )
    def test_a_name_given_is_kept_as_a_host_header_names_it(self, given: str, kept: str) -> None:
        assert host_setting(given) == kept

    @pytest.mark.parametrize("given", ["", "*", "a b", "http://svc-stub/", "svc-stub:x", "-a"])
    def test_what_is_no_host_name_is_refused(self, given: str) -> None:
        with pytest.raises(BadSetting, match="is not a host name"):
            host_setting(given)

    async def test_a_trailing_dot_names_the_same_host(self, aiohttp_client: AiohttpClient) -> None:
        client = await app_client(
            aiohttp_client, allow_hosts=frozenset({host_setting("svc-stub.")})
        )
        for host in ("svc-stub", "svc-stub.:3901"):
            assert (await client.get("/_test/requests", headers={"Host": host})).status == 200


class TestTheControlClients:
    def test_name_a_preflight_as_the_stub_does(self) -> None:
        assert client_models.PREFLIGHT == PREFLIGHT

    def test_a_wait_for_requests_is_not_ended_by_a_preflight(self, live_stub: SpawnedStub) -> None:
        control = StubClient(live_stub.url).create_namespace("waits-for-a-client")
        try:
            asked = urllib.request.Request(
                control.url + EVALUATE, method="OPTIONS", headers=preflight_headers()
            )
            with urllib.request.urlopen(asked, timeout=HANG_GUARD_S) as answer:
                assert answer.status == 204
            with pytest.raises(WaitTimeout, match="got 0"):
                control.wait_for_requests(1, timeout=0.3)
            assert [entry.route for entry in control.requests()] == [PREFLIGHT]
        finally:
            control.delete_namespace()
