"""The test-control plane: reset, recorded traffic, fixture replacement and fault arming."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from conftest import AUTH, AiohttpClient
from stub import StubConfig, create_app

EVALUATE = "/v1/flags/evaluate"


async def decision(client: TestClient[Any, Any], key: str) -> dict[str, Any]:
    response = await client.post(
        EVALUATE, json={"targetingKey": "u1", "flagKeys": [key]}, headers=AUTH
    )
    body: dict[str, Any] = await response.json()
    return body["decisions"][0]  # type: ignore[no-any-return]


async def json_of(client: TestClient[Any, Any], method: str, path: str, **kw: Any) -> Any:
    response = await client.request(method, path, **kw)
    assert response.content_type == "application/json"
    return response.status, await response.json()


class TestReset:
    async def test_reset_clears_recordings_and_faults_and_restores_fixtures(
        self, client: TestClient[Any, Any]
    ) -> None:
        await client.post("/v1/capture", json={"events": [{"type": "event"}]}, headers=AUTH)
        await client.post("/v1/targets/register", json={"targetingKey": "u"}, headers=AUTH)
        await client.post("/_test/fault", json={"mode": "500", "applyTo": "batch"})
        await client.post("/_test/fixtures", json={"flags": {}})
        assert (await decision(client, "new-checkout"))["found"] is False

        assert await json_of(client, "POST", "/_test/reset") == (200, {"ok": True})

        assert (await decision(client, "new-checkout"))["found"] is True
        _, events = await json_of(client, "GET", "/_test/events")
        assert (events["events"], events["svcEvents"], events["targets"]) == ([], [], [])
        _, armed = await json_of(client, "GET", "/_test/fault")
        assert armed == {"armed": []}
        _, log = await json_of(client, "GET", "/_test/requests")
        assert [entry["route"] for entry in log["requests"]] == ["evaluate"]


class TestRequestLog:
    async def test_each_client_request_is_one_entry_with_every_field(
        self, client: TestClient[Any, Any]
    ) -> None:
        await client.post(
            EVALUATE + "?v=2&token=phc_secret", json={"targetingKey": "u"}, headers=AUTH
        )
        _, log = await json_of(client, "GET", "/_test/requests")
        (entry,) = log["requests"]
        assert set(entry) == {
            "seq",
            "method",
            "path",
            "query",
            "route",
            "status",
            "clientGone",
            "fault",
            "arrivedMs",
            "durationMs",
            "warning",
            "retryAfter",
            "headers",
            "upstream",
            "bodyBytes",
            "answerBytes",
            "unmatched",
        }
        assert (entry["method"], entry["path"], entry["route"], entry["status"]) == (
            "POST",
            EVALUATE,
            "evaluate",
            200,
        )
        assert entry["query"] == {"v": "2", "token": "phc_[redacted]"}
        assert entry["fault"] is None
        assert entry["durationMs"] >= 0
        assert log["dropped"] == 0

    async def test_no_key_or_token_ever_appears(self, client: TestClient[Any, Any]) -> None:
        await client.post(
            EVALUATE + "?api_key=phc_q",
            json={"targetingKey": "u"},
            headers={"Authorization": "Bearer sk_live_header"},
        )
        await client.post("/v1/capture", json={"events": []}, headers={"x-api-key": "sk_live_x"})
        text = await (await client.get("/_test/requests")).text()
        for secret in ("phc_q", "sk_live_header", "sk_live_x"):
            assert secret not in text

    async def test_unknown_paths_and_errors_are_recorded_control_routes_are_not(
        self, client: TestClient[Any, Any]
    ) -> None:
        await client.get("/flagz")
        await client.get("/health")
        await client.get("/_test/events")
        await client.post(EVALUATE, json={})
        _, log = await json_of(client, "GET", "/_test/requests")
        assert [(e["path"], e["route"], e["status"]) for e in log["requests"]] == [
            ("/flagz", None, 404),
            (EVALUATE, "evaluate", 401),
        ]

    async def test_seq_keeps_increasing_across_resets(self, client: TestClient[Any, Any]) -> None:
        await client.get("/a")
        await client.post("/_test/reset")
        await client.get("/b")
        _, log = await json_of(client, "GET", "/_test/requests")
        assert [e["seq"] for e in log["requests"]] == [2]


class TestUnknownRoutes:
    @pytest.mark.parametrize(
        ("path", "suggested"),
        [
            ("/v1/flag/evaluate", "POST /v1/flags/evaluate"),
            ("/v1/targets/regster", "POST /v1/targets/register"),
            ("/v1/project", "GET or POST /v1/projects"),
            ("/v1/projects/p1/environment", "GET or POST /v1/projects/{projectId}/environments"),
            ("/_test/request", "GET /_test/requests"),
        ],
    )
    async def test_a_near_miss_is_told_the_route_it_resembles(
        self, client: TestClient[Any, Any], path: str, suggested: str
    ) -> None:
        async with client.post(path, json={}) as answer:
            body = await answer.json()
        assert answer.status == 404
        message = body["message"] if "message" in body else body["error"]["message"]
        assert message == f"no route POST {path}: did you mean {suggested}?"

    @pytest.mark.parametrize("path", ["/completely/elsewhere", "/v1/projects/p1/rollouts"])
    async def test_nothing_close_is_a_plain_404(
        self, client: TestClient[Any, Any], path: str
    ) -> None:
        async with client.get(path) as answer:
            body = await answer.json()
        message = body["message"] if "message" in body else body["error"]["message"]
        assert message == f"no route GET {path}"


class TestBoundedRecording:
    @pytest.fixture
    async def small(self, aiohttp_client: AiohttpClient) -> TestClient[Any, Any]:
        return await aiohttp_client(create_app(StubConfig(max_recorded=3)))

    async def test_events_keep_the_newest_and_count_the_dropped(
        self, small: TestClient[Any, Any]
    ) -> None:
        events = [{"type": "event", "n": n} for n in range(5)]
        await small.post("/v1/capture", json={"events": events}, headers=AUTH)
        _, body = await json_of(small, "GET", "/_test/events")
        assert body["svcEvents"] == events[2:]
        assert body["dropped"] == {"events": 0, "svcEvents": 2, "targets": 0}

    async def test_requests_keep_the_newest_and_count_the_dropped(
        self, small: TestClient[Any, Any]
    ) -> None:
        for n in range(5):
            await small.get(f"/missing/{n}")
        _, log = await json_of(small, "GET", "/_test/requests")
        assert [e["path"] for e in log["requests"]] == ["/missing/2", "/missing/3", "/missing/4"]
        assert log["dropped"] == 2

    async def test_reset_clears_the_dropped_counts(self, small: TestClient[Any, Any]) -> None:
        for n in range(5):
            await small.get(f"/missing/{n}")
        await small.post("/_test/reset")
        _, log = await json_of(small, "GET", "/_test/requests")
        assert (log["requests"], log["dropped"]) == ([], 0)


VENDOR_BODY = {
    "flags": {
        "beta": {
            "key": "beta",
            "enabled": True,
            "variant": None,
            "metadata": {"id": 4, "version": 6, "payload": '{"a": 1}'},
        },
        "color": {"key": "color", "enabled": True, "variant": "blue", "metadata": None},
        "off": {"key": "off", "enabled": False},
    },
    "errorsWhileComputingFlags": False,
}


class TestVendorFlagsReplacement:
    async def test_evaluate_answers_from_the_vendor_body_until_reset(
        self, client: TestClient[Any, Any]
    ) -> None:
        status, body = await json_of(client, "POST", "/_test/flags", json=VENDOR_BODY)
        assert (status, body) == (200, {"ok": True, "flags": ["beta", "color", "off"]})
        beta, color, off = [await decision(client, k) for k in ("beta", "color", "off")]
        assert (beta["value"], beta["reason"], beta["payload"]) == (
            True,
            "TARGETING_MATCH",
            {"a": 1},
        )
        assert beta["flagMetadata"] == {"svc.flagVersion": 6, "fireweave.flagVersion": 6}
        assert (color["value"], color["variant"], color["reason"]) == ("blue", "blue", "SPLIT")
        assert (off["value"], off["enabled"], off["reason"]) == (False, False, "DISABLED")
        assert (await decision(client, "new-checkout"))["found"] is False

        await client.post("/_test/reset")
        assert (await decision(client, "beta"))["found"] is False
        assert (await decision(client, "new-checkout"))["found"] is True

    @pytest.mark.parametrize(
        ("body", "message"),
        [
            ({}, "flags: expected an object of flag records, got null"),
            ({"flags": {"a": 1}}, "flags.a: expected an object, got a number"),
            ({"flags": {"a": {"enabled": "yes"}}}, "flags.a.enabled: expected bool, got a string"),
            (
                {"flags": {"a": {"metadata": {"payload": "{bad"}}}},
                "flags.a.metadata.payload: not a JSON-encoded string",
            ),
        ],
    )
    async def test_a_bad_body_is_refused_and_fixtures_stay(
        self, client: TestClient[Any, Any], body: dict[str, Any], message: str
    ) -> None:
        status, error = await json_of(client, "POST", "/_test/flags", json=body)
        assert (status, error["error"], error["message"]) == (400, "INVALID_BODY", message)
        assert (await decision(client, "new-checkout"))["found"] is True


class TestFixtureReplacement:
    async def test_a_json_document_replaces_every_flag(self, client: TestClient[Any, Any]) -> None:
        document = {"flags": {"solo": {"type": "number", "value": 3, "metadata": {"version": 2}}}}
        status, body = await json_of(client, "POST", "/_test/fixtures", json=document)
        assert (status, body) == (200, {"ok": True, "flags": ["solo"]})
        assert (await decision(client, "solo"))["value"] == 3
        assert (await decision(client, "new-checkout"))["found"] is False

    async def test_a_yaml_document_is_accepted_with_a_yaml_content_type(
        self, client: TestClient[Any, Any]
    ) -> None:
        document = "flags:\n  y:\n    type: string\n    value: hi\n"
        status, _ = await json_of(
            client,
            "POST",
            "/_test/fixtures",
            data=document,
            headers={"Content-Type": "application/yaml"},
        )
        assert status == 200
        assert (await decision(client, "y"))["value"] == "hi"

    @pytest.mark.parametrize(
        ("document", "message"),
        [
            (
                {"flags": {"x": {"type": "string", "value": 5}}},
                "body: flags.x.value: expected string (type string), got 5",
            ),
            (
                {"flagz": {}},
                "body: flagz: unknown key (expected one of flags, vendor, management, keys)",
            ),
            (
                {},
                "body: no section: a fixture document holds at least one of flags, vendor, "
                "management, keys (see docs/reference/fixtures.md)",
            ),
        ],
    )
    async def test_a_bad_document_is_a_400_naming_the_key_path_and_old_fixtures_stay(
        self, client: TestClient[Any, Any], document: dict[str, Any], message: str
    ) -> None:
        status, error = await json_of(client, "POST", "/_test/fixtures", json=document)
        assert (status, error["error"], error["message"]) == (400, "INVALID_FIXTURES", message)
        assert (await decision(client, "new-checkout"))["found"] is True

    async def test_yaml_with_a_key_twice_is_a_400_naming_line_and_key(
        self, client: TestClient[Any, Any]
    ) -> None:
        status, error = await json_of(
            client,
            "POST",
            "/_test/fixtures",
            data="flags:\n  a: {type: number, value: 1}\n  a: {type: number, value: 2}\n",
            headers={"Content-Type": "application/yaml"},
        )
        assert (status, error["error"]) == (400, "INVALID_FIXTURES")
        assert error["message"] == (
            "body: invalid YAML at line 3, column 3: the key 'a' appears twice"
        )

    async def test_bad_yaml_is_a_400_with_its_position(self, client: TestClient[Any, Any]) -> None:
        status, error = await json_of(
            client,
            "POST",
            "/_test/fixtures",
            data="flags: [",
            headers={"Content-Type": "text/yaml"},
        )
        assert status == 400
        assert error["message"].startswith("body: invalid YAML at line 1")

    async def test_reset_restores_the_start_up_fixtures(self, client: TestClient[Any, Any]) -> None:
        await client.post("/_test/fixtures", json={"flags": {}})
        await client.post("/_test/reset")
        assert (await decision(client, "new-checkout"))["found"] is True


class TestControlToken:
    @pytest.fixture
    async def guarded(self, aiohttp_client: AiohttpClient) -> TestClient[Any, Any]:
        return await aiohttp_client(create_app(StubConfig(control_token="ctl-secret")))

    async def test_control_routes_need_the_token(self, guarded: TestClient[Any, Any]) -> None:
        status, error = await json_of(guarded, "GET", "/_test/events")
        assert (status, error["error"]) == (401, "UNAUTHORIZED")
        assert "ctl-secret" not in error["message"]
        status, _ = await json_of(
            guarded, "GET", "/_test/events", headers={"Authorization": "Bearer ctl-secret"}
        )
        assert status == 200

    async def test_health_and_client_routes_do_not(self, guarded: TestClient[Any, Any]) -> None:
        assert (await guarded.get("/health")).status == 200
        assert (
            await guarded.post(EVALUATE, json={"targetingKey": "u"}, headers=AUTH)
        ).status == 200


class TestNumbersInPathsAndQueries:
    @pytest.mark.parametrize(
        ("method", "path", "status"),
        [
            ("DELETE", "/_test/fault/%C2%B2", 404),
            ("GET", "/_test/events?waitMs=%C2%B2", 400),
            ("GET", "/_test/requests?min=%C2%B2", 400),
        ],
    )
    async def test_unicode_digits_are_refused_not_a_500(
        self, client: TestClient[Any, Any], method: str, path: str, status: int
    ) -> None:
        response = await client.request(method, path)
        assert response.status == status
        assert (await response.json())["ok"] is False
