"""The legacy vendor routes over raw HTTP: every spelling, both key fields, derived documents."""

from __future__ import annotations

import gzip
import json
from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient

from conftest import AiohttpClient
from stub import StubConfig, create_app, parse_fixture_document

FLAGS_PATHS = ["/flags", "/flags/", "/flags?v=2", "/flags/?v=2", "/flags/?v=4", "/flags?v=3&ip=1"]
DEFINITIONS_PATHS = [
    "/flags/definitions",
    "/flags/definitions/",
    "/api/feature_flag/local_evaluation",
    "/api/feature_flag/local_evaluation/",
]
SECRET = {"Authorization": "Bearer phs_secret"}


async def flags(
    client: TestClient[Any, Any], body: dict[str, Any], path: str = "/flags/?v=2"
) -> Any:
    response = await client.post(path, json={"api_key": "phc_project", "distinct_id": "u1", **body})
    assert response.status == 200, await response.text()
    return await response.json()


async def definitions(client: TestClient[Any, Any], path: str = "/flags/definitions") -> Any:
    response = await client.get(f"{path}?token=phc_project&send_cohorts", headers=SECRET)
    assert response.status == 200, await response.text()
    return await response.json()


class TestRemoteFlags:
    @pytest.mark.parametrize("path", FLAGS_PATHS)
    async def test_every_spelling_answers_the_v2_body(
        self, client: TestClient[Any, Any], path: str
    ) -> None:
        body = await flags(client, {}, path)
        assert set(body) == {"flags", "errorsWhileComputingFlags", "quotaLimited", "requestId"}
        assert body["errorsWhileComputingFlags"] is False
        assert "new-checkout" in body["flags"]

    @pytest.mark.parametrize("field", ["api_key", "token"])
    async def test_the_project_key_may_be_either_body_field(
        self, client: TestClient[Any, Any], field: str
    ) -> None:
        response = await client.post("/flags/?v=2", json={field: "phc_x", "distinct_id": "u"})
        assert response.status == 200

    async def test_no_project_key_is_a_json_401(self, client: TestClient[Any, Any]) -> None:
        response = await client.post("/flags/?v=2", json={"distinct_id": "u"})
        assert response.status == 401
        assert (await response.json())["message"] == (
            "missing API key: send the project key as body 'api_key' or 'token'"
        )

    async def test_configured_keys_are_honoured(self, aiohttp_client: AiohttpClient) -> None:
        client = await aiohttp_client(create_app(StubConfig(api_keys=frozenset({"phc_good"}))))
        assert (await client.post("/flags", json={"token": "phc_good"})).status == 200
        assert (await client.post("/flags", json={"api_key": "phc_bad"})).status == 401

    async def test_records_follow_the_fixture_types(self, client: TestClient[Any, Any]) -> None:
        records = (await flags(client, {}))["flags"]
        summary = {
            key: (r["enabled"], r["variant"], r["metadata"]["payload"])
            for key, r in records.items()
        }
        assert summary == {
            "new-checkout": (True, None, None),
            "dark-mode": (False, None, None),
            "legacy-banner": (False, None, None),
            "checkout-v2": (True, "treatment-b", None),
            "pricing-page": (
                True,
                "annual-first",
                '{"rolloutId":"r1","headline":"Save 20% yearly"}',
            ),
            "max-items": (True, None, "25"),
            "discount-rate": (True, None, "0.15"),
            "ui-config": (True, None, '{"theme":"dark","columns":3,"beta":false}'),
            "enterprise-dashboard": (False, None, None),
        }

    async def test_a_record_has_key_reason_and_metadata_and_never_a_value(
        self, client: TestClient[Any, Any]
    ) -> None:
        record = (await flags(client, {}))["flags"]["checkout-v2"]
        assert record == {
            "key": "checkout-v2",
            "enabled": True,
            "variant": "treatment-b",
            "reason": {
                "code": "condition_match",
                "condition_index": 0,
                "description": "Condition set 1 matched",
            },
            "metadata": {"id": 4, "version": 7, "payload": None},
        }

    async def test_match_attribute_is_checked_against_person_properties(
        self, client: TestClient[Any, Any]
    ) -> None:
        on = await flags(client, {"person_properties": {"plan": "enterprise"}})
        off = await flags(client, {"person_properties": {"plan": "free"}})
        assert on["flags"]["enterprise-dashboard"]["enabled"] is True
        assert off["flags"]["enterprise-dashboard"]["enabled"] is False
        assert off["flags"]["enterprise-dashboard"]["reason"]["code"] == "no_condition_match"

    async def test_flag_keys_to_evaluate_limits_the_answer(
        self, client: TestClient[Any, Any]
    ) -> None:
        body = await flags(client, {"flag_keys_to_evaluate": ["max-items", "nope"]})
        assert list(body["flags"]) == ["max-items"]

    async def test_a_verbatim_vendor_body_from_the_fixture_file_is_served(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        vendor_body = {"flags": {"a": {"key": "a", "enabled": True}}, "custom": [1]}
        fixtures = parse_fixture_document({"vendor": {"flags": vendor_body}}, "x.yaml")
        client = await aiohttp_client(create_app(StubConfig(), fixtures))
        assert await flags(client, {}) == vendor_body
        assert await flags(client, {"flag_keys_to_evaluate": ["b"]}) == {"flags": {}, "custom": [1]}

    async def test_post_test_flags_replaces_the_answer_until_reset(
        self, client: TestClient[Any, Any]
    ) -> None:
        replacement = {"flags": {"beta": {"key": "beta", "enabled": True, "variant": None}}}
        await client.post("/_test/flags", json=replacement)
        assert await flags(client, {}) == replacement
        await client.post("/_test/reset")
        assert "beta" not in (await flags(client, {}))["flags"]

    @pytest.mark.parametrize(
        ("body", "message"),
        [
            ({"flag_keys_to_evaluate": "a"}, "flag_keys_to_evaluate: expected an array of strings"),
            ({"flag_keys_to_evaluate": [1]}, "flag_keys_to_evaluate[0]: expected a string"),
            ({"person_properties": []}, "person_properties: expected an object, got an array"),
        ],
    )
    async def test_bad_fields_are_a_400_naming_them(
        self, client: TestClient[Any, Any], body: dict[str, Any], message: str
    ) -> None:
        response = await client.post("/flags", json={"api_key": "k", **body})
        assert response.status == 400
        assert (await response.json())["message"].startswith(message)


class TestDefinitions:
    @pytest.mark.parametrize("path", DEFINITIONS_PATHS)
    async def test_every_spelling_answers_the_same_document(
        self, client: TestClient[Any, Any], path: str
    ) -> None:
        document = await definitions(client, path)
        assert set(document) == {"flags", "group_type_mapping", "cohorts"}
        assert document == await definitions(client)

    async def test_the_secret_key_is_required(self, client: TestClient[Any, Any]) -> None:
        response = await client.get("/flags/definitions?token=phc&send_cohorts")
        assert response.status == 401
        assert (await response.json())["message"] == (
            "missing API key: send the secret key as 'Authorization: Bearer <key>'"
        )

    async def test_the_project_token_is_required(self, client: TestClient[Any, Any]) -> None:
        response = await client.get("/flags/definitions?send_cohorts", headers=SECRET)
        assert response.status == 401

    async def test_the_document_is_derived_from_the_fixtures(
        self, client: TestClient[Any, Any]
    ) -> None:
        by_key = {f["key"]: f for f in (await definitions(client))["flags"]}
        assert by_key["new-checkout"]["filters"] == {
            "groups": [{"properties": [], "rollout_percentage": 100}],
            "multivariate": None,
            "payloads": {},
        }
        assert by_key["dark-mode"]["filters"]["groups"][0]["rollout_percentage"] == 0
        assert by_key["legacy-banner"]["active"] is False
        pricing = by_key["pricing-page"]["filters"]
        assert pricing["multivariate"] == {
            "variants": [{"key": "annual-first", "rollout_percentage": 100}]
        }
        assert pricing["groups"][0]["variant"] == "annual-first"
        assert json.loads(pricing["payloads"]["annual-first"])["rolloutId"] == "r1"
        assert by_key["ui-config"]["filters"]["payloads"] == {
            "true": '{"theme":"dark","columns":3,"beta":false}'
        }
        assert by_key["enterprise-dashboard"]["filters"]["groups"][0]["properties"] == [
            {"key": "plan", "type": "person", "value": ["enterprise"], "operator": "exact"}
        ]
        assert (by_key["checkout-v2"]["id"], by_key["checkout-v2"]["version"]) == (4, 7)

    async def test_an_etag_and_a_304_for_a_matching_if_none_match(
        self, client: TestClient[Any, Any]
    ) -> None:
        first = await client.get("/flags/definitions?token=phc", headers=SECRET)
        etag = first.headers["ETag"]
        again = await client.get(
            "/flags/definitions?token=phc", headers={**SECRET, "If-None-Match": etag}
        )
        assert (again.status, again.headers["ETag"], await again.read()) == (304, etag, b"")
        stale = await client.get(
            "/flags/definitions?token=phc", headers={**SECRET, "If-None-Match": '"old"'}
        )
        assert stale.status == 200

    async def test_a_verbatim_document_from_the_fixture_file_is_served(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        document = {"flags": [], "group_type_mapping": {"0": "company"}, "cohorts": {"1": {}}}
        fixtures = parse_fixture_document({"vendor": {"definitions": document}}, "x.yaml")
        client = await aiohttp_client(create_app(StubConfig(), fixtures))
        assert await definitions(client) == document

    async def test_new_fixtures_change_the_etag(self, client: TestClient[Any, Any]) -> None:
        before = (await client.get("/flags/definitions?token=phc", headers=SECRET)).headers["ETag"]
        await client.post(
            "/_test/fixtures", json={"flags": {"x": {"type": "boolean", "value": True}}}
        )
        after = await client.get(
            "/flags/definitions?token=phc", headers={**SECRET, "If-None-Match": before}
        )
        assert after.status == 200
        assert [f["key"] for f in (await after.json())["flags"]] == ["x"]


class TestBatch:
    @pytest.mark.parametrize("path", ["/batch", "/batch/"])
    @pytest.mark.parametrize("field", ["api_key", "token"])
    async def test_items_are_recorded_verbatim_in_arrival_order(
        self, client: TestClient[Any, Any], path: str, field: str
    ) -> None:
        items = [
            {"event": "$pageview", "distinct_id": "u1", "properties": {"a": None}, "uuid": "1"},
            {"event": "$feature_flag_called", "distinct_id": "u1", "properties": {}},
        ]
        response = await client.post(path, json={field: "phc", "batch": items, "sent_at": "x"})
        assert (response.status, await response.json()) == (200, {"status": 1})
        assert (await (await client.get("/_test/events")).json())["events"] == items

    async def test_a_gzip_batch_is_decompressed(self, client: TestClient[Any, Any]) -> None:
        items = [{"event": "e", "distinct_id": "u"}]
        payload = gzip.compress(orjson.dumps({"api_key": "phc", "batch": items}))
        response = await client.post("/batch/", data=payload, headers={"Content-Encoding": "gzip"})
        assert response.status == 200
        assert (await (await client.get("/_test/events")).json())["events"] == items

    @pytest.mark.parametrize(
        ("body", "status", "message"),
        [
            (
                {"batch": []},
                401,
                "missing API key: send the project key as body 'api_key' or 'token'",
            ),
            ({"api_key": "k"}, 400, "batch: expected an array of events, got null"),
            ({"api_key": "k", "batch": [{}, 3]}, 400, "batch[1]: expected an object, got a number"),
        ],
    )
    async def test_bad_batches_record_nothing(
        self, client: TestClient[Any, Any], body: dict[str, Any], status: int, message: str
    ) -> None:
        response = await client.post("/batch/", json=body)
        assert (response.status, (await response.json())["message"]) == (status, message)
        assert (await (await client.get("/_test/events")).json())["events"] == []


class TestVendorFaults:
    async def test_quota_limited_flags_is_a_200_with_the_vendor_marker(
        self, client: TestClient[Any, Any]
    ) -> None:
        response = await client.post(
            "/flags/?v=2", json={"api_key": "k"}, headers={"X-Svc-Test-Fault": "quota_limited"}
        )
        body = await response.json()
        assert response.status == 200
        assert (body["flags"], body["quotaLimited"]) == ({}, ["feature_flags"])

    async def test_quota_limited_definitions_is_a_402(self, client: TestClient[Any, Any]) -> None:
        response = await client.get(
            "/api/feature_flag/local_evaluation/?token=p&fault=quota_limited"
        )
        assert response.status == 402

    async def test_quota_limited_batch_is_a_402_that_records_nothing(
        self, client: TestClient[Any, Any]
    ) -> None:
        response = await client.post(
            "/batch/",
            json={"api_key": "k", "batch": [{"event": "e"}]},
            headers={"X-Svc-Test-Fault": "quota_limited"},
        )
        assert response.status == 402
        assert (await (await client.get("/_test/events")).json())["events"] == []

    @pytest.mark.parametrize(
        ("selector", "method", "path"),
        [
            ("flags", "POST", "/flags/?v=2"),
            ("definitions", "GET", "/flags/definitions?token=p"),
            ("definitions", "GET", "/api/feature_flag/local_evaluation?token=p"),
            ("batch", "POST", "/batch/"),
        ],
    )
    async def test_each_vendor_selector_reaches_its_route_only(
        self, client: TestClient[Any, Any], selector: str, method: str, path: str
    ) -> None:
        await client.post("/_test/fault", json={"mode": "500", "applyTo": selector})
        body = {"api_key": "k", "batch": []}
        response = await client.request(method, path, json=body, headers=SECRET)
        assert response.status == 500
        runtime = await client.post("/v1/capture", json={"events": []}, headers={"x-api-key": "k"})
        assert runtime.status == 200
        (entry, _) = (await (await client.get("/_test/requests")).json())["requests"]
        assert (entry["route"], entry["fault"]["mode"]) == (selector, "500")
