"""Namespaces on one stub: every plane isolated, the three ways a request picks one and their
order, the lifecycle (create, list, delete, evict) and every bad input, in process."""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from conftest import AUTH, AiohttpClient
from stub import StubConfig, create_app
from stub.http.connection import REQUEST_FACTORY as HOOK
from stub.namespaces import NAMESPACES
from stub.wire import MAX_WAIT_MS

Client = TestClient[Any, Any]
ORG_KEY = {"Authorization": "Bearer svc_org_default"}
EVALUATE = {"targetingKey": "u1", "flagKeys": ["new-checkout"]}
CAPTURE = {"events": [{"type": "signal", "targetingKey": "u1", "name": "n"}]}
LONG_WAIT_MS = MAX_WAIT_MS
"""A long poll's `waitMs`, the longest the stub takes: one no test waits out."""
LONG_POLL_GUARD_S = LONG_WAIT_MS / 1000 / 2
"""How long a test awaits a long poll that something it did must end: well below its wait,
so an answer within it was woken, not timed out. It guards a poll never woken and is not a
speed budget (it was 5 s against a 5 s wait, which a busy machine could exceed)."""


async def polled(client: Client, namespace: str) -> None:
    """Returns once a long poll waits in `namespace`: what a test of a waiting poll waits
    for, rather than a sleep a busy machine can outlast. The bound guards a poll that never
    comes to wait; it is not a speed budget."""
    namespaces = client.app[NAMESPACES]
    deadline = time.monotonic() + LONG_POLL_GUARD_S
    while (state := namespaces._named.get(namespace)) is None or not state.recorded._waiters:
        assert time.monotonic() < deadline, f"no long poll came to wait in {namespace!r}"
        await asyncio.sleep(0.01)


async def stub_with(aiohttp_client: AiohttpClient, **settings: Any) -> Client:
    return await aiohttp_client(create_app(StubConfig(**settings)))


async def json_of(client: Client, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
    async with client.request(method, path, **kwargs) as answer:
        return answer.status, await answer.json()


async def evaluate(client: Client, prefix: str = "", **kwargs: Any) -> int:
    headers = {**AUTH, **kwargs.pop("headers", {})}
    async with client.post(f"{prefix}/v1/flags/evaluate", json=EVALUATE, headers=headers) as r:
        return r.status


async def recorded(client: Client, prefix: str = "") -> dict[str, Any]:
    status, body = await json_of(client, "GET", f"{prefix}/_test/events")
    assert status == 200
    return body  # type: ignore[no-any-return]


async def routes(client: Client, prefix: str = "", **kwargs: Any) -> list[str]:
    status, body = await json_of(client, "GET", f"{prefix}/_test/requests", **kwargs)
    assert status == 200, body
    return [entry["route"] for entry in body["requests"]]


async def raw_get(client: Client, target: str) -> tuple[int, Any]:
    """A GET sent byte for byte, as no HTTP client library would rewrite it."""
    assert client.port is not None
    reader, writer = await asyncio.open_connection("127.0.0.1", client.port)
    writer.write(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    answer = await reader.read()
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


class TestIsolation:
    @pytest.mark.parametrize(
        ("selector", "method", "path", "kwargs"),
        [
            ("evaluate", "POST", "/v1/flags/evaluate", {"json": EVALUATE, "headers": AUTH}),
            ("flags", "POST", "/flags", {"json": {"api_key": "phc_x", "distinct_id": "u"}}),
            ("projects", "GET", "/v1/projects", {"headers": ORG_KEY}),
        ],
    )
    async def test_a_fault_armed_in_one_namespace_fires_only_there(
        self, client: Client, selector: str, method: str, path: str, kwargs: dict[str, Any]
    ) -> None:
        status, _ = await json_of(
            client, "POST", "/ns/a/_test/fault", json={"mode": "500", "applyTo": selector}
        )
        assert status == 200
        for prefix in ("", "/ns/b"):
            async with client.request(method, prefix + path, **kwargs) as answer:
                assert answer.status == 200, prefix
        async with client.request(method, "/ns/a" + path, **kwargs) as answer:
            assert answer.status == 500
        status, body = await json_of(client, "GET", "/_test/fault")
        assert body["armed"] == []

    async def test_recordings_stay_in_their_namespace(self, client: Client) -> None:
        async with client.post("/ns/a/v1/capture", json=CAPTURE, headers=AUTH) as answer:
            assert answer.status == 200
        body = {"targetingKey": "t-b"}
        async with client.post("/ns/b/v1/targets/register", json=body, headers=AUTH) as answer:
            assert answer.status == 200
        batch = {"api_key": "phc_x", "batch": [{"event": "e"}]}
        async with client.post("/batch", json=batch) as answer:
            assert answer.status == 200
        a, b, default = [await recorded(client, p) for p in ("/ns/a", "/ns/b", "")]
        assert (a["svcEvents"], a["targets"], a["events"]) == (CAPTURE["events"], [], [])
        assert (b["svcEvents"], b["targets"], b["events"]) == ([], [body], [])
        assert (default["svcEvents"], default["targets"]) == ([], [])
        assert default["events"] == [{"event": "e"}]
        assert await routes(client, "/ns/a") == ["capture"]
        assert await routes(client, "/ns/b") == ["register"]
        assert await routes(client) == ["batch"]

    async def test_the_prefix_is_not_part_of_the_recorded_path(self, client: Client) -> None:
        async with client.post("/ns/a/v1/flags/evaluate?x=1", json=EVALUATE, headers=AUTH):
            pass
        _, body = await json_of(client, "GET", "/ns/a/_test/requests")
        [entry] = body["requests"]
        assert (entry["path"], entry["query"], entry["route"]) == (
            "/v1/flags/evaluate",
            {"x": "1"},
            "evaluate",
        )

    async def test_management_writes_stay_in_their_namespace(self, client: Client) -> None:
        project = {"name": "Only in A", "slug": "only-in-a"}
        status, created = await json_of(
            client, "POST", "/ns/a/v1/projects", json=project, headers=ORG_KEY
        )
        assert status == 201, created
        slugs = {}
        for prefix in ("/ns/a", "/ns/b", ""):
            _, listed = await json_of(client, "GET", f"{prefix}/v1/projects", headers=ORG_KEY)
            slugs[prefix] = {p["slug"] for p in listed["projects"]}
        assert "only-in-a" in slugs["/ns/a"]
        assert slugs["/ns/b"] == slugs[""] == slugs["/ns/a"] - {"only-in-a"}

    async def test_fixtures_reset_and_rate_limits_are_per_namespace(self, client: Client) -> None:
        document = {"flags": {"new-checkout": {"type": "boolean", "value": False}}}
        status, _ = await json_of(client, "POST", "/ns/a/_test/fixtures", json=document)
        assert status == 200
        status, _ = await json_of(client, "POST", "/ns/a/_test/rate-limit", json={"perSecond": 1})
        assert status == 200

        async def value(prefix: str) -> object:
            _, body = await json_of(
                client, "POST", f"{prefix}/v1/flags/evaluate", json=EVALUATE, headers=AUTH
            )
            return body["decisions"][0]["value"] if "decisions" in body else body["error"]

        assert await value("/ns/a") is False
        assert await value("/ns/a") == "RATE_LIMITED"
        assert [await value(""), await value("")] == [True, True]
        await json_of(client, "POST", "/ns/a/_test/reset")
        assert await value("/ns/a") is True
        assert await routes(client) == ["evaluate", "evaluate"]  # the reset left default alone

    async def test_a_wait_in_one_namespace_is_answered_by_its_own_recording(
        self, client: Client
    ) -> None:
        waiting = asyncio.ensure_future(
            json_of(client, "GET", f"/ns/a/_test/events?minSvcEvents=1&waitMs={LONG_WAIT_MS}")
        )
        await polled(client, "a")
        async with client.post("/ns/b/v1/capture", json=CAPTURE, headers=AUTH):
            pass
        await asyncio.sleep(0.05)
        assert not waiting.done()
        async with client.post("/ns/a/v1/capture", json=CAPTURE, headers=AUTH):
            pass
        _, body = await asyncio.wait_for(waiting, LONG_POLL_GUARD_S)
        assert body["svcEvents"] == CAPTURE["events"]


class TestSelection:
    async def test_the_header_picks_a_namespace(self, client: Client) -> None:
        header = {"X-Svc-Test-Namespace": "h"}
        assert await evaluate(client, headers=header) == 200
        assert await routes(client, "/ns/h") == ["evaluate"]
        assert await routes(client, headers=header) == ["evaluate"]
        assert await routes(client) == []

    async def test_the_prefix_wins_over_the_header_which_wins_over_a_bound_key(
        self, client: Client
    ) -> None:
        bound = {"name": "by-key", "keys": ["bound-key"]}
        assert (await json_of(client, "POST", "/_test/namespaces", json=bound))[0] == 201
        key = {"Authorization": "Bearer bound-key"}
        header = {"X-Svc-Test-Namespace": "by-header"}
        assert await evaluate(client, "/ns/by-prefix", headers={**key, **header}) == 200
        assert await evaluate(client, headers={**key, **header}) == 200
        assert await evaluate(client, headers={**key, **header}) == 200
        assert await evaluate(client, headers=key) == 200
        assert await evaluate(client) == 200
        counts = {
            name: len(await routes(client, f"/ns/{name}"))
            for name in ("by-prefix", "by-header", "by-key", "default")
        }
        assert counts == {"by-prefix": 1, "by-header": 2, "by-key": 1, "default": 1}

    @pytest.mark.parametrize(
        ("method", "path", "kwargs"),
        [
            ("POST", "/v1/capture", {"json": CAPTURE, "headers": {"Authorization": "Bearer K"}}),
            ("POST", "/v1/capture", {"json": CAPTURE, "headers": {"x-api-key": "K"}}),
            ("POST", "/batch/", {"json": {"api_key": "K", "batch": [{"event": "e"}]}}),
            ("POST", "/flags?v=2", {"json": {"token": "K", "distinct_id": "u"}}),
            ("GET", "/flags/definitions?token=K", {"headers": {"Authorization": "Bearer s"}}),
            ("GET", "/v1/projects", {"headers": {"Authorization": "Bearer K"}}),
        ],
    )
    async def test_a_bound_key_routes_requests_wherever_the_client_puts_it(
        self, client: Client, method: str, path: str, kwargs: dict[str, Any]
    ) -> None:
        bound = {"name": "owner", "keys": ["K"]}
        assert (await json_of(client, "POST", "/_test/namespaces", json=bound))[0] == 201
        async with client.request(method, path, **kwargs):
            pass
        assert len(await routes(client, "/ns/owner")) == 1
        assert await routes(client) == []

    async def test_unbound_keys_and_bad_bodies_stay_in_the_default_namespace(
        self, client: Client
    ) -> None:
        bound = {"name": "owner", "keys": ["K"]}
        await json_of(client, "POST", "/_test/namespaces", json=bound)
        async with client.post("/batch", json={"api_key": "other", "batch": []}) as answer:
            assert answer.status == 200
        async with client.post("/batch", data=b"{not json") as answer:
            assert answer.status == 400
        assert await routes(client) == ["batch", "batch"]
        assert await routes(client, "/ns/owner") == []

    async def test_default_is_the_default_namespace(self, client: Client) -> None:
        assert await evaluate(client, "/ns/default") == 200
        assert await evaluate(client, headers={"X-Svc-Test-Namespace": "default"}) == 200
        assert await routes(client) == ["evaluate", "evaluate"]

    async def test_health_and_the_openapi_document_create_no_namespace(
        self, client: Client
    ) -> None:
        for path in ("/ns/h1/health", "/ns/h2/_test/openapi.json"):
            async with client.get(path) as answer:
                assert answer.status == 200
        _, listed = await json_of(client, "GET", "/_test/namespaces")
        assert listed["count"] == 0

    async def test_without_the_control_token_a_prefixed_control_call_creates_nothing(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await stub_with(aiohttp_client, control_token="sekrit", max_namespaces=1)
        token = {"Authorization": "Bearer sekrit"}
        await json_of(client, "POST", "/_test/namespaces", json={"name": "live"}, headers=token)
        for name in ("x1", "x2"):
            status, _ = await json_of(client, "POST", f"/ns/{name}/_test/fault", json={})
            assert status == 401
        _, listed = await json_of(client, "GET", "/_test/namespaces", headers=token)
        assert ([n["name"] for n in listed["namespaces"]], listed["evicted"]) == (
            ["default", "live"],
            0,
        )

    async def test_a_too_large_body_is_a_413_when_keys_are_bound(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await stub_with(aiohttp_client, max_body_bytes=1000)
        await json_of(client, "POST", "/_test/namespaces", json={"name": "o", "keys": ["K"]})
        big = {"api_key": "K", "batch": [{"event": "x" * 2000}]}
        status, body = await json_of(client, "POST", "/batch", json=big)
        assert (status, body["error"]) == (413, "PAYLOAD_TOO_LARGE")

    async def test_a_namespace_without_a_path_after_it_is_its_root(self, client: Client) -> None:
        status, body = await json_of(client, "GET", "/ns/a")
        assert (status, body["error"]) == (404, "NOT_FOUND")
        assert body["message"] == "no route GET /"


class TestNames:
    @pytest.mark.parametrize("name", ["-lead", "sp%20ace", "x" * 65, "dot%2Fslash", "%C3%A9"])
    async def test_a_bad_prefix_is_a_400_that_states_the_rule(
        self, client: Client, name: str
    ) -> None:
        status, body = await json_of(client, "POST", f"/ns/{name}/v1/flags/evaluate", json={})
        assert (status, body["error"]) == (400, "INVALID_NAMESPACE")
        assert "is not a namespace name (1 to 64 of A-Z a-z 0-9 . _ -" in body["message"]
        assert await routes(client) == []

    async def test_a_bad_prefix_on_the_management_plane_answers_in_its_envelope(
        self, client: Client
    ) -> None:
        status, body = await json_of(client, "GET", "/ns/b%21d/v1/projects")
        assert status == 400
        assert body["error"]["code"] == "INVALID_NAMESPACE"
        assert "'b!d' is not a namespace name" in body["error"]["message"]

    async def test_a_percent_encoded_name_is_read_decoded(self, client: Client) -> None:
        assert await evaluate(client, "/ns/t%2D1") == 200
        assert await routes(client, "/ns/t-1") == ["evaluate"]

    async def test_a_percent_encoded_prefix_says_to_write_it_plainly(self, client: Client) -> None:
        """Sent raw: aiohttp's client would normalise `%6E` to `n` before sending."""
        status, body = await raw_get(client, "/%6Es/t1/_test/events")
        assert status == 400
        assert body["message"] == "path: write the namespace prefix as /ns/t1/, not percent-encoded"

    async def test_an_absolute_form_target_picks_its_namespace_too(self, client: Client) -> None:
        status, body = await raw_get(client, f"http://127.0.0.1:{client.port}/ns/abs/_test/events")
        assert (status, body["svcEvents"]) == (200, [])
        _, listed = await json_of(client, "GET", "/_test/namespaces")
        assert [n["name"] for n in listed["namespaces"]] == ["default", "abs"]

    async def test_a_prefix_given_twice_is_a_400(self, client: Client) -> None:
        status, body = await json_of(client, "GET", "/ns/a/ns/b/_test/events")
        assert (status, body["error"]) == (400, "INVALID_NAMESPACE")
        assert body["message"] == "path: a namespace prefix is given twice (/ns/b/_test/events)"

    @pytest.mark.parametrize("path", ["/v1/flags/evaluate", "/_test/events"])
    async def test_a_bad_header_is_a_400_naming_the_header(self, client: Client, path: str) -> None:
        headers = {**AUTH, "X-Svc-Test-Namespace": "no/slash"}
        status, body = await json_of(client, "POST", path, json=EVALUATE, headers=headers)
        if path == "/_test/events":
            status, body = await json_of(client, "GET", path, headers=headers)
        assert (status, body["error"]) == (400, "INVALID_NAMESPACE")
        assert body["message"].startswith("X-Svc-Test-Namespace: 'no/slash' is not a namespace")


class TestLifecycle:
    async def test_created_with_its_own_fixtures_and_listed_with_what_it_holds(
        self, client: Client
    ) -> None:
        document = {
            "name": "own",
            "fixtures": {"flags": {"only-here": {"type": "number", "value": 7}}},
        }
        status, created = await json_of(client, "POST", "/_test/namespaces", json=document)
        assert status == 201
        assert created == {
            "name": "own",
            "boundKeys": 0,
            "flags": 1,
            "armedFaults": 0,
            "recorded": {"requests": 0, "events": 0, "svcEvents": 0, "targets": 0},
        }
        async with client.post("/ns/own/v1/capture", json=CAPTURE, headers=AUTH):
            pass
        await json_of(client, "POST", "/ns/own/_test/fault", json={"mode": "500"})
        await json_of(client, "POST", "/ns/own/_test/reset")  # back to its own fixtures
        _, described = await json_of(client, "GET", "/_test/namespaces/own")
        assert (described["flags"], described["recorded"]["svcEvents"]) == (1, 0)
        _, listed = await json_of(client, "GET", "/_test/namespaces")
        assert [n["name"] for n in listed["namespaces"]] == ["default", "own"]
        assert (listed["count"], listed["max"], listed["evicted"]) == (1, 1000, 0)
        assert (listed["recorded"], listed["maxRecorded"]) == (0, 50_000)  # reset: none kept

    async def test_created_from_a_yaml_body(self, client: Client) -> None:
        document = (
            "name: from-yaml\nkeys: [K]\nfixtures:\n  flags: {only: {type: number, value: 7}}\n"
        )
        status, created = await json_of(
            client,
            "POST",
            "/_test/namespaces",
            data=document,
            headers={"Content-Type": "application/yaml"},
        )
        assert (status, created["flags"], created["boundKeys"]) == (201, 1, 1)
        async with client.post(
            "/v1/flags/evaluate", json={"targetingKey": "u"}, headers={"Authorization": "Bearer K"}
        ) as answer:
            assert [d["value"] for d in (await answer.json())["decisions"]] == [7]

    async def test_deleted_means_gone_and_a_later_use_starts_afresh(self, client: Client) -> None:
        async with client.post("/ns/gone/v1/capture", json=CAPTURE, headers=AUTH):
            pass
        status, body = await json_of(client, "DELETE", "/_test/namespaces/gone")
        assert (status, body) == (200, {"ok": True, "deleted": "gone"})
        status, body = await json_of(client, "GET", "/_test/namespaces/gone")
        assert (status, body["message"]) == (404, "name: no namespace 'gone'")
        assert (await recorded(client, "/ns/gone"))["svcEvents"] == []
        status, body = await json_of(client, "DELETE", "/_test/namespaces/never")
        assert (status, body["error"]) == (404, "NOT_FOUND")

    async def test_deleting_every_namespace_leaves_the_default_one(self, client: Client) -> None:
        for name in ("a", "b"):
            await json_of(client, "POST", f"/ns/{name}/_test/reset")
        assert await evaluate(client) == 200
        status, body = await json_of(client, "DELETE", "/_test/namespaces")
        assert (status, body) == (200, {"ok": True, "deleted": 2})
        _, listed = await json_of(client, "GET", "/_test/namespaces")
        assert [n["name"] for n in listed["namespaces"]] == ["default"]
        assert await routes(client) == ["evaluate"]
        status, _ = await json_of(client, "DELETE", "/_test/namespaces/default")
        assert status == 404

    async def test_a_name_in_use_or_a_key_bound_elsewhere_is_a_409(self, client: Client) -> None:
        first = {"name": "one", "keys": ["shared-key"]}
        assert (await json_of(client, "POST", "/_test/namespaces", json=first))[0] == 201
        status, body = await json_of(client, "POST", "/_test/namespaces", json={"name": "one"})
        assert (status, body["error"]) == (409, "NAMESPACE_EXISTS")
        second = {"name": "two", "keys": ["shared-key"]}
        status, body = await json_of(client, "POST", "/_test/namespaces", json=second)
        assert (status, body["error"]) == (409, "KEY_BOUND")
        assert body["message"] == (
            "keys[0]: already bound to namespace 'one'; a key routes to one namespace at a "
            "time (if its test never finished, DELETE /_test/namespaces/one)"
        )
        assert "shared-key" not in body["message"]
        await json_of(client, "DELETE", "/_test/namespaces/one")  # unbinds its keys
        assert (await json_of(client, "POST", "/_test/namespaces", json=second))[0] == 201

    @pytest.mark.parametrize(
        ("body", "message"),
        [
            ({}, "name: give a name, or test (a test's identity) to have one made"),
            (
                {"name": "a", "test": "t"},
                "name: give a name, or test (a test's identity) to have one made",
            ),
            ({"test": 1}, "test: expected a string, got a number"),
            ({"name": 7}, "name: expected a string, got a number"),
            ({"name": "a b"}, "name: 'a b' is not a namespace name"),
            ({"name": "default"}, "name: 'default' is the default namespace, always there"),
            ({"name": "a", "keys": "k"}, "keys: expected a list of strings, got a string"),
            (
                {"name": "a", "keys": [""]},
                "keys[0]: expected a non-empty string, got an empty string",
            ),
            (
                {"name": "a", "colour": 1},
                "colour: unknown field (expected name, test, keys, fixtures)",
            ),
            ({"name": "a", "fixtures": {"flags": 3}}, "fixtures: flags: expected a mapping"),
        ],
    )
    async def test_a_bad_create_body_names_the_field(
        self, client: Client, body: dict[str, Any], message: str
    ) -> None:
        status, answer = await json_of(client, "POST", "/_test/namespaces", json=body)
        assert status in (400, 409)
        assert answer["message"].startswith(message), answer
        _, listed = await json_of(client, "GET", "/_test/namespaces")
        assert listed["count"] == 0


class TestEviction:
    async def test_the_least_recently_used_goes_and_a_late_use_is_a_clear_410(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await stub_with(aiohttp_client, max_namespaces=2)
        for prefix in ("/ns/a", "/ns/b", "/ns/a", "/ns/c"):  # a was used after b: b goes
            assert await evaluate(client, prefix) == 200
        _, listed = await json_of(client, "GET", "/_test/namespaces")
        assert [n["name"] for n in listed["namespaces"]] == ["default", "a", "c"]
        assert (listed["count"], listed["evicted"]) == (2, 1)
        status, body = await json_of(
            client, "POST", "/ns/b/v1/flags/evaluate", json=EVALUATE, headers=AUTH
        )
        assert (status, body["error"]) == (410, "NAMESPACE_EVICTED")
        assert "namespace 'b' was evicted" in body["message"]
        assert "--max-namespaces" in body["message"]
        status, body = await json_of(client, "GET", "/ns/b/v1/projects", headers=ORG_KEY)
        assert (status, body["error"]["code"]) == (410, "NAMESPACE_EVICTED")
        status, _ = await json_of(client, "GET", "/ns/b/_test/events")
        assert status == 410
        status, _ = await json_of(client, "POST", "/_test/namespaces", json={"name": "b"})
        assert status == 201  # created again: afresh, and it evicted `a`
        assert await evaluate(client, "/ns/b") == 200

    async def test_over_the_recording_bound_the_least_recently_used_go(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await stub_with(aiohttp_client, max_recorded_in_namespaces=6)
        three = {"events": CAPTURE["events"] * 3}
        for name in ("a", "b"):  # a request and three events each: 8 together, over 6
            async with client.post(f"/ns/{name}/v1/capture", json=three, headers=AUTH) as answer:
                assert answer.status == 200
        assert await evaluate(client, "/ns/b") == 200  # the next request sheds `a`, never `b`
        _, listed = await json_of(client, "GET", "/_test/namespaces")
        assert [n["name"] for n in listed["namespaces"]] == ["default", "b"]
        assert (listed["evicted"], listed["recorded"]) == (1, 5)
        status, body = await json_of(client, "GET", "/ns/a/_test/events")
        assert (status, body["error"]) == (410, "NAMESPACE_EVICTED")
        assert "6 recorded entries or" in body["message"]
        await json_of(client, "DELETE", "/_test/namespaces/b")
        _, listed = await json_of(client, "GET", "/_test/namespaces")
        assert listed["recorded"] == 0  # a deleted namespace's recordings no longer count

    async def test_a_key_of_an_evicted_namespace_gets_the_same_410(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await stub_with(aiohttp_client, max_namespaces=1)
        bound = {"name": "owner", "keys": ["K"]}
        await json_of(client, "POST", "/_test/namespaces", json=bound)
        assert await evaluate(client, "/ns/other") == 200  # evicts `owner`
        key = {"Authorization": "Bearer K"}
        assert await evaluate(client, headers=key) == 410
        batch = {"api_key": "K", "batch": [{"event": "e"}]}
        async with client.post("/batch", json=batch) as answer:
            assert answer.status == 410
        assert await routes(client) == []  # never quietly served in the default namespace
        await json_of(client, "DELETE", "/_test/namespaces/owner")  # forget it: unbound now
        assert await evaluate(client, headers=key) == 200
        assert await routes(client) == ["evaluate"]

    async def test_a_namespace_a_test_is_waiting_on_is_not_evicted_for_its_recordings(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await stub_with(aiohttp_client, max_recorded_in_namespaces=3)
        three = {"events": CAPTURE["events"] * 3}
        async with client.post("/ns/waited/v1/capture", json=three, headers=AUTH):
            pass
        waiting = asyncio.ensure_future(
            json_of(client, "GET", f"/ns/waited/_test/events?minTargets=1&waitMs={LONG_WAIT_MS}")
        )
        await polled(client, "waited")
        assert await evaluate(client, "/ns/other") == 200  # over the bound: sheds what it can
        _, listed = await json_of(client, "GET", "/_test/namespaces")
        assert [n["name"] for n in listed["namespaces"]] == ["default", "waited", "other"]
        target = {"targetingKey": "t"}
        async with client.post("/ns/waited/v1/targets/register", json=target, headers=AUTH):
            pass
        status, body = await asyncio.wait_for(waiting, LONG_POLL_GUARD_S)
        assert (status, body["targets"]) == (200, [target])

    async def test_each_named_namespace_keeps_its_own_recording_bound(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await stub_with(aiohttp_client, max_recorded=5, namespace_max_recorded=2)
        for prefix in ("", "/ns/a"):
            for _ in range(3):
                await evaluate(client, prefix)
        _, default = await json_of(client, "GET", "/_test/requests")
        _, named = await json_of(client, "GET", "/ns/a/_test/requests")
        assert (len(default["requests"]), default["dropped"]) == (3, 0)
        assert (len(named["requests"]), named["dropped"]) == (2, 1)


class TestTheRequestFactoryHook:
    """The private aiohttp attribute namespace prefixes need (stub/http/connection.py,
    REQUEST_FACTORY): if an aiohttp release changes it, these fail first and say where to
    look, before any namespaced request turns into a 500."""

    WHERE = (
        "aiohttp changed Application._make_request: see REQUEST_FACTORY in stub/http/connection.py"
    )

    def test_the_factory_takes_what_the_prefix_stripper_passes_on(self) -> None:
        factory = getattr(web.Application, HOOK, None)
        assert factory is not None, self.WHERE
        parameters = list(inspect.signature(factory).parameters)
        assert parameters == [
            "self", "message", "payload", "protocol", "writer", "task", "_cls"
        ], self.WHERE  # fmt: skip

    def test_the_server_makes_every_request_through_it(self) -> None:
        made_by = inspect.getsource(web.Application._make_handler)
        assert f"request_factory=self.{HOOK}" in made_by, self.WHERE

    async def test_a_prefixed_request_is_routed_without_its_prefix(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await stub_with(aiohttp_client)
        status, body = await json_of(client, "GET", "/ns/hook-check/health")
        assert (status, body) == (200, {"ok": True}), self.WHERE
