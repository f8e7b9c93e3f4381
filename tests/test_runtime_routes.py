"""The /v1 routes, in process, in exactly the shapes the runtime contract describes."""

from __future__ import annotations

import gzip
import re
from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient

from conftest import AUTH, AiohttpClient
from stub import StubConfig, create_app, load_fixture_paths
from stub.fixtures import default_fixture_dir
from stub.runtime.evaluation import MAX_REMEMBERED, MAX_REMEMBERED_BODY_BYTES, DecisionTable

EVALUATE = "/v1/flags/evaluate"
CAPTURE = "/v1/capture"
REGISTER = "/v1/targets/register"
DEFAULT_KEYS = list(load_fixture_paths([default_fixture_dir()]).flags)


async def evaluate(client: TestClient[Any, Any], body: object) -> Any:
    response = await client.post(EVALUATE, json=body, headers=AUTH)
    assert response.status == 200, await response.text()
    return await response.json()


async def error_of(response: Any, status: int) -> dict[str, Any]:
    assert response.status == status
    assert response.content_type == "application/json"
    body: dict[str, Any] = await response.json()
    assert body["ok"] is False
    return body


class TestEvaluate:
    async def test_one_key_answers_the_full_decision(self, client: TestClient[Any, Any]) -> None:
        body = await evaluate(client, {"targetingKey": "u1", "flagKeys": ["pricing-page"]})
        assert body["decisions"] == [
            {
                "flagKey": "pricing-page",
                "found": True,
                "enabled": True,
                "value": "annual-first",
                "variant": "annual-first",
                "reason": "SPLIT",
                "flagMetadata": {"svc.flagVersion": 2, "fireweave.flagVersion": 2},
                "payload": {"rolloutId": "r1", "headline": "Save 20% yearly"},
            }
        ]

    async def test_a_flag_without_a_payload_has_no_payload_member_not_null(
        self, client: TestClient[Any, Any]
    ) -> None:
        body = await evaluate(client, {"targetingKey": "u1", "flagKeys": ["checkout-v2"]})
        assert "payload" not in body["decisions"][0]
        body = await evaluate(client, {"targetingKey": "u1"})  # every flag
        with_payload = [d["flagKey"] for d in body["decisions"] if "payload" in d]
        assert with_payload == ["pricing-page"]
        assert all(d.get("payload", 0) is not None for d in body["decisions"])

    async def test_response_has_exactly_decisions_request_id_and_boolean_quota(
        self, client: TestClient[Any, Any]
    ) -> None:
        body = await evaluate(client, {"targetingKey": "u1", "flagKeys": ["new-checkout"]})
        assert set(body) == {"decisions", "requestId", "quotaLimited"}
        assert body["quotaLimited"] is False
        assert re.fullmatch(
            r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}", body["requestId"]
        )

    async def test_request_ids_are_unique_and_match_the_request_log(
        self, client: TestClient[Any, Any]
    ) -> None:
        first = await evaluate(client, {"targetingKey": "u1"})
        second = await evaluate(client, {"targetingKey": "u1"})
        assert first["requestId"] != second["requestId"]
        log = await (await client.get("/_test/requests")).json()
        seqs = [entry["seq"] for entry in log["requests"]]
        assert [int(b["requestId"].rsplit("-", 1)[1]) for b in (first, second)] == seqs

    async def test_several_keys_answer_in_request_order_with_not_found_and_not_matched(
        self, client: TestClient[Any, Any]
    ) -> None:
        body = await evaluate(
            client,
            {"targetingKey": "u1", "flagKeys": ["nope", "enterprise-dashboard", "max-items"]},
        )
        nope, unmatched, found = body["decisions"]
        assert nope == {"flagKey": "nope", "found": False, "value": None, "reason": "ERROR"}
        assert unmatched == {
            "flagKey": "enterprise-dashboard",
            "found": False,
            "value": None,
            "reason": "DEFAULT",
        }
        assert (found["flagKey"], found["found"], found["value"]) == ("max-items", True, 25)

    @pytest.mark.parametrize("flag_keys", [None, []], ids=["absent", "empty"])
    async def test_no_flag_keys_means_every_flag(
        self, client: TestClient[Any, Any], flag_keys: list[str] | None
    ) -> None:
        request: dict[str, Any] = {"targetingKey": "u1"}
        if flag_keys is not None:
            request["flagKeys"] = flag_keys
        body = await evaluate(client, request)
        assert [d["flagKey"] for d in body["decisions"]] == DEFAULT_KEYS

    @pytest.mark.parametrize(
        ("key", "reason", "enabled", "value"),
        [
            ("new-checkout", "TARGETING_MATCH", True, True),
            ("dark-mode", "TARGETING_MATCH", True, False),
            ("legacy-banner", "DISABLED", False, False),
            ("checkout-v2", "SPLIT", True, "treatment-b"),
            ("discount-rate", "TARGETING_MATCH", True, 0.15),
            ("ui-config", "TARGETING_MATCH", True, {"theme": "dark", "columns": 3, "beta": False}),
        ],
    )
    async def test_reason_enabled_and_value_follow_the_fixture(
        self, client: TestClient[Any, Any], key: str, reason: str, enabled: bool, value: object
    ) -> None:
        (decision,) = (await evaluate(client, {"targetingKey": "u", "flagKeys": [key]}))[
            "decisions"
        ]
        assert (decision["found"], decision["reason"], decision["enabled"]) == (
            True,
            reason,
            enabled,
        )
        assert decision["value"] == value

    async def test_match_attribute_serves_the_value_only_to_matching_contexts(
        self, client: TestClient[Any, Any]
    ) -> None:
        request = {"targetingKey": "u1", "flagKeys": ["enterprise-dashboard"]}
        matched = await evaluate(client, {**request, "attributes": {"plan": "enterprise"}})
        other = await evaluate(client, {**request, "attributes": {"plan": "free"}})
        assert matched["decisions"][0]["found"] is True
        assert other["decisions"][0]["reason"] == "DEFAULT"

    async def test_groups_and_group_properties_are_accepted(
        self, client: TestClient[Any, Any]
    ) -> None:
        body = await evaluate(
            client,
            {
                "targetingKey": "u1",
                "flagKeys": ["new-checkout"],
                "groups": {"company": "acme"},
                "groupProperties": {"company": {"tier": 1}},
            },
        )
        assert body["decisions"][0]["found"] is True

    async def test_trailing_slash_is_served_in_place(self, client: TestClient[Any, Any]) -> None:
        response = await client.post(
            EVALUATE + "/", json={"targetingKey": "u1"}, headers=AUTH, allow_redirects=False
        )
        assert response.status == 200

    @pytest.mark.parametrize(
        ("body", "got"),
        [({}, "null"), ({"targetingKey": ""}, '""'), ({"targetingKey": 7}, "a number")],
        ids=["missing", "empty", "number"],
    )
    async def test_targeting_key_is_required(
        self, client: TestClient[Any, Any], body: dict[str, Any], got: str
    ) -> None:
        response = await client.post(EVALUATE, json=body, headers=AUTH)
        error = await error_of(response, 400)
        assert error == {
            "ok": False,
            "error": "TARGETING_KEY_REQUIRED",
            "message": f"targetingKey: expected a non-empty string, got {got}",
        }

    @pytest.mark.parametrize(
        ("raw", "message"),
        [
            (b"{not json", "body: not valid JSON"),
            (b"", "body: expected a JSON object, got an empty body"),
            (b"[1, 2]", "body: expected a JSON object, got an array"),
            (
                b'{"targetingKey": "u", "flagKeys": "a"}',
                "flagKeys: expected an array of strings, got a string",
            ),
            (
                b'{"targetingKey": "u", "flagKeys": ["a", 2]}',
                "flagKeys[1]: expected a string, got a number",
            ),
            (
                b'{"targetingKey": "u", "attributes": []}',
                "attributes: expected an object, got an array",
            ),
            (b'{"targetingKey": "u", "groups": 1}', "groups: expected an object, got a number"),
        ],
    )
    async def test_bad_bodies_are_invalid_body_naming_the_field(
        self, client: TestClient[Any, Any], raw: bytes, message: str
    ) -> None:
        response = await client.post(EVALUATE, data=raw, headers=AUTH)
        error = await error_of(response, 400)
        assert error["error"] == "INVALID_BODY"
        assert error["message"].startswith(message)


class TestTheSameQuestionAgain:
    """A body's decisions are remembered per fixture set: asked again, the same answer (its
    own requestId), never one from fixtures no longer served, never for a body refused."""

    RAW = b'{"targetingKey": "u1", "flagKeys": ["checkout-v2"]}'

    async def asked(self, client: TestClient[Any, Any], raw: bytes = RAW) -> Any:
        response = await client.post(EVALUATE, data=raw, headers=AUTH)
        assert response.status == 200, await response.text()
        return await response.json()

    async def test_asked_twice_the_decisions_are_the_same_the_request_ids_not(
        self, client: TestClient[Any, Any]
    ) -> None:
        first, second = await self.asked(client), await self.asked(client)
        assert first["decisions"] == second["decisions"]
        assert first["decisions"][0]["value"] == "treatment-b"
        assert first["requestId"] != second["requestId"]

    async def test_new_fixtures_answer_the_same_body_anew(
        self, client: TestClient[Any, Any]
    ) -> None:
        assert (await self.asked(client))["decisions"][0]["value"] == "treatment-b"
        fixtures = {"flags": {"checkout-v2": {"type": "string", "value": "control"}}}
        async with client.post("/_test/fixtures", json=fixtures) as served:
            assert served.status == 200, await served.text()
        assert (await self.asked(client))["decisions"][0]["value"] == "control"
        async with client.post("/_test/reset") as reset:
            assert reset.status == 200
        assert (await self.asked(client))["decisions"][0]["value"] == "treatment-b"

    async def test_a_refused_body_is_refused_every_time(self, client: TestClient[Any, Any]) -> None:
        refused = b'{"targetingKey": ""}'
        for _ in range(2):
            response = await client.post(EVALUATE, data=refused, headers=AUTH)
            assert (await error_of(response, 400))["error"] == "TARGETING_KEY_REQUIRED"

    async def test_a_key_is_checked_before_a_remembered_answer(
        self, client: TestClient[Any, Any]
    ) -> None:
        await self.asked(client)
        response = await client.post(EVALUATE, data=self.RAW)
        assert (await error_of(response, 401))["error"] == "UNAUTHORIZED"

    def test_what_a_table_remembers_is_bounded(self) -> None:
        table = DecisionTable(load_fixture_paths([default_fixture_dir()]).flags)
        for n in range(MAX_REMEMBERED + 1):
            table.remember(b"%d" % n, (b"[]", ()))
        assert table.answered(b"0") is None  # full: it started afresh
        assert table.answered(b"%d" % MAX_REMEMBERED) == (b"[]", ())
        table.remember(b" " * (MAX_REMEMBERED_BODY_BYTES + 1), (b"[]", ()))
        assert table.answered(b" " * (MAX_REMEMBERED_BODY_BYTES + 1)) is None


class TestAuthentication:
    @pytest.mark.parametrize(
        "headers",
        [
            {"Authorization": "Bearer k1"},
            {"Authorization": "bearer k1"},
            {"Authorization": "BEARER k1"},
            {"x-api-key": "k1"},
        ],
        ids=["bearer", "lower-case", "upper-case", "x-api-key"],
    )
    async def test_any_non_empty_key_is_accepted_by_default(
        self, client: TestClient[Any, Any], headers: dict[str, str]
    ) -> None:
        response = await client.post(EVALUATE, json={"targetingKey": "u"}, headers=headers)
        assert response.status == 200

    @pytest.mark.parametrize(
        "headers",
        [{}, {"Authorization": "Bearer "}, {"Authorization": "Basic abc"}, {"x-api-key": ""}],
        ids=["none", "empty-bearer", "basic", "empty-x-api-key"],
    )
    @pytest.mark.parametrize("path", [EVALUATE, CAPTURE, REGISTER])
    async def test_a_missing_key_is_a_json_401(
        self, client: TestClient[Any, Any], headers: dict[str, str], path: str
    ) -> None:
        response = await client.post(
            path, json={"targetingKey": "u", "events": []}, headers=headers
        )
        error = await error_of(response, 401)
        assert error["error"] == "UNAUTHORIZED"

    async def test_configured_keys_are_the_only_ones_accepted_and_never_echoed(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(api_keys=frozenset({"good"}))))
        ok = await client.post(EVALUATE, json={"targetingKey": "u"}, headers={"x-api-key": "good"})
        assert ok.status == 200
        bad = await client.post(
            EVALUATE, json={"targetingKey": "u"}, headers={"Authorization": "Bearer wrong-key-123"}
        )
        await error_of(bad, 401)
        assert "wrong-key-123" not in await bad.text()

    async def test_authentication_comes_before_body_validation(
        self, client: TestClient[Any, Any]
    ) -> None:
        response = await client.post(EVALUATE, data=b"{not json")
        await error_of(response, 401)


class TestCapture:
    async def test_events_are_stored_verbatim_in_arrival_order(
        self, client: TestClient[Any, Any]
    ) -> None:
        first = [
            {
                "type": "exposure",
                "targetingKey": "u1",
                "flagKey": "k",
                "value": "v",
                "variant": "v",
            },
            {
                "type": "signal",
                "targetingKey": "sdk",
                "name": "h",
                "flagKey": None,
                "variant": None,
                "properties": {"kind": "health", "status": "ok"},
            },
        ]
        second = [{"type": "event", "value": None, "extra": [1, {"deep": True}]}]
        for batch in (first, second):
            response = await client.post(CAPTURE, json={"events": batch}, headers=AUTH)
            assert await response.json() == {"ok": True, "accepted": len(batch)}
        recorded = await (await client.get("/_test/events")).json()
        assert recorded["svcEvents"] == first + second

    async def test_an_empty_batch_is_accepted(self, client: TestClient[Any, Any]) -> None:
        response = await client.post(CAPTURE, json={"events": []}, headers=AUTH)
        assert await response.json() == {"ok": True, "accepted": 0}

    @pytest.mark.parametrize(
        ("body", "message"),
        [
            ({}, "events: expected an array of event objects, got null"),
            ({"events": {}}, "events: expected an array of event objects, got an object"),
            ({"events": [{"type": "event"}, "x"]}, "events[1]: expected an object, got a string"),
        ],
    )
    async def test_a_bad_batch_is_refused_whole(
        self, client: TestClient[Any, Any], body: dict[str, Any], message: str
    ) -> None:
        response = await client.post(CAPTURE, json=body, headers=AUTH)
        error = await error_of(response, 400)
        assert (error["error"], error["message"]) == ("INVALID_BODY", message)
        recorded = await (await client.get("/_test/events")).json()
        assert recorded["svcEvents"] == []

    async def test_a_gzip_body_is_decompressed(self, client: TestClient[Any, Any]) -> None:
        events = [{"type": "event", "n": n} for n in range(3)]
        response = await client.post(
            CAPTURE,
            data=gzip.compress(orjson.dumps({"events": events})),
            headers={**AUTH, "Content-Encoding": "gzip", "Content-Type": "application/json"},
        )
        assert await response.json() == {"ok": True, "accepted": 3}
        assert (await (await client.get("/_test/events")).json())["svcEvents"] == events

    async def test_a_body_that_is_not_the_gzip_it_claims_is_invalid_body(
        self, client: TestClient[Any, Any]
    ) -> None:
        response = await client.post(
            CAPTURE, data=b"plain", headers={**AUTH, "Content-Encoding": "gzip"}
        )
        error = await error_of(response, 400)
        assert error["message"] == "body: cannot decode Content-Encoding 'gzip'"
        assert (await client.get("/health")).status == 200


class TestBodyLimit:
    @pytest.fixture
    async def small(self, aiohttp_client: AiohttpClient) -> TestClient[Any, Any]:
        return await aiohttp_client(create_app(StubConfig(max_body_bytes=1000)))

    async def test_a_body_over_the_limit_is_a_json_413(self, small: TestClient[Any, Any]) -> None:
        body = orjson.dumps({"events": [{"pad": "x" * 2000}]})
        error = await error_of(await small.post(CAPTURE, data=body, headers=AUTH), 413)
        assert error["error"] == "PAYLOAD_TOO_LARGE"
        assert "1000 bytes" in error["message"]

    async def test_the_limit_applies_after_gzip_decompression(
        self, small: TestClient[Any, Any]
    ) -> None:
        compressed = gzip.compress(orjson.dumps({"events": [{"pad": "x" * 50_000}]}))
        assert len(compressed) < 1000
        response = await small.post(
            CAPTURE, data=compressed, headers={**AUTH, "Content-Encoding": "gzip"}
        )
        await error_of(response, 413)

    async def test_a_body_within_the_limit_is_served(self, small: TestClient[Any, Any]) -> None:
        response = await small.post(CAPTURE, json={"events": [{"pad": "x" * 100}]}, headers=AUTH)
        assert response.status == 200


class TestRegister:
    async def test_a_registration_is_recorded_and_echoed(
        self, client: TestClient[Any, Any]
    ) -> None:
        body = {
            "targetingKey": "u1",
            "kind": "user",
            "environment": "test",
            "properties": {"plan": "pro"},
        }
        response = await client.post(REGISTER, json=body, headers=AUTH)
        assert await response.json() == {"ok": True, "targetingKey": "u1"}
        assert (await (await client.get("/_test/events")).json())["targets"] == [body]

    async def test_targeting_key_is_required(self, client: TestClient[Any, Any]) -> None:
        response = await client.post(REGISTER, json={"kind": "user"}, headers=AUTH)
        assert (await error_of(response, 400))["error"] == "TARGETING_KEY_REQUIRED"

    @pytest.mark.parametrize(
        ("field", "value", "message"),
        [
            ("kind", 3, "kind: expected a string, got a number"),
            ("environment", [], "environment: expected a string, got an array"),
            ("properties", "x", "properties: expected an object, got a string"),
        ],
    )
    async def test_optional_fields_are_type_checked(
        self, client: TestClient[Any, Any], field: str, value: object, message: str
    ) -> None:
        response = await client.post(
            REGISTER, json={"targetingKey": "u1", field: value}, headers=AUTH
        )
        assert (await error_of(response, 400))["message"] == message


class TestEveryAnswerIsJson:
    async def test_an_unknown_route_is_a_json_404(self, client: TestClient[Any, Any]) -> None:
        error = await error_of(await client.get("/v2/nothing"), 404)
        assert error == {"ok": False, "error": "NOT_FOUND", "message": "no route GET /v2/nothing"}

    async def test_a_wrong_method_is_a_json_405_with_allow(
        self, client: TestClient[Any, Any]
    ) -> None:
        response = await client.get(EVALUATE)
        error = await error_of(response, 405)
        assert error["error"] == "METHOD_NOT_ALLOWED"
        assert response.headers["Allow"] == "POST"

    async def test_an_unexpected_exception_is_a_json_500_naming_no_internals(
        self, client: TestClient[Any, Any], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def broken(*args: object) -> bytes:
            raise RuntimeError("secret internals /etc/passwd")

        monkeypatch.setattr(DecisionTable, "encode", broken)  # a bug inside a real route
        response = await client.post(EVALUATE, json={"targetingKey": "u"}, headers=AUTH)
        error = await error_of(response, 500)
        assert error["error"] == "INTERNAL"
        assert "secret" not in await response.text()
        (entry,) = (await (await client.get("/_test/requests")).json())["requests"]
        assert (entry["route"], entry["status"]) == ("evaluate", 500)
        assert (await client.get("/health")).status == 200
