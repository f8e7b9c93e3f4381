"""The journal in full (bodies, answers, curl), its bound in bytes, and the inspector's feed,
page and snapshot, over HTTP (the page in a real browser: test_inspector_browser.py)."""

from __future__ import annotations

import asyncio
import gzip
import json
import re
import time
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient

from conftest import AUTH, AiohttpClient
from stub import StubConfig, create_app
from stub.namespaces import NAMESPACES
from stub.wire import MAX_WAIT_MS

EVALUATE = "/v1/flags/evaluate"
CAPTURE = "/v1/capture"


async def json_of(response: Any) -> Any:
    assert response.content_type == "application/json", await response.text()
    return await response.json()


async def unreadable(client: TestClient[Any, Any], headers: dict[str, str]) -> None:
    """An evaluate whose answer a fault spoils: the client cannot read it, which is the point."""
    with pytest.raises(aiohttp.ClientError):
        await (await client.post(EVALUATE, json={}, headers=headers)).read()


FEED_WAIT_MS = MAX_WAIT_MS
"""A waiting page's `waitMs`, the longest the stub takes: one no test waits out."""
FEED_GUARD_S = FEED_WAIT_MS / 1000 / 2
"""How long a test awaits a waiting page that something it did must wake: well below its
wait, so an answer within it was woken, not timed out. It guards a page never woken and is
not a speed budget (it was 5 s against a 10 s wait, which a busy machine could exceed)."""


async def watching(client: TestClient[Any, Any], namespace: str | None = None) -> None:
    """Returns once a page waits on the feed of `namespace` (the default one if None): what a
    test of a waiting page waits for, rather than a sleep a busy machine can outlast. The
    bound guards a page that never comes to wait; it is not a speed budget."""
    namespaces = client.app[NAMESPACES]
    deadline = time.monotonic() + FEED_GUARD_S
    while True:
        state = namespaces.default if namespace is None else namespaces._named.get(namespace)
        if state is not None and state.recorded._waiters:
            return
        assert time.monotonic() < deadline, "no page came to wait"
        await asyncio.sleep(0.01)


async def pasted(line: str) -> bytes:
    """What a curl line prints, pasted into bash (on stdin: a line has no argument limit)."""
    shell = await asyncio.create_subprocess_exec(
        "bash", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    printed, _ = await asyncio.wait_for(shell.communicate(line.encode()), 20)
    assert shell.returncode == 0, line[:300]
    return printed


async def newest(client: TestClient[Any, Any], prefix: str = "") -> dict[str, Any]:
    """The newest recorded request, in full."""
    log = await json_of(await client.get(f"{prefix}/_test/requests"))
    seq = log["requests"][-1]["seq"]
    full: dict[str, Any] = await json_of(await client.get(f"{prefix}/_test/requests/{seq}"))
    return full


class TestTheJournalInFull:
    async def test_a_request_reads_with_its_body_and_its_answer_never_cut(
        self, client: TestClient[Any, Any]
    ) -> None:
        events = [{"type": "exposure", "targetingKey": f"u{i}", "flagKey": "k"} for i in range(400)]
        sent = json.dumps({"events": events})
        answered = await client.post(CAPTURE, data=sent, headers=AUTH)

        full = await newest(client)
        assert full["body"] == {"text": sent, "bytes": len(sent)}
        assert full["bodyBytes"] == len(sent) > 20_000
        answer = full["answer"]
        assert answer["status"] == 200
        assert json.loads(answer["body"]["text"]) == await answered.json()
        assert answer["headers"]["Content-Type"] == "application/json"
        assert full["answerBytes"] == answer["body"]["bytes"]

    async def test_the_listing_gives_every_request_in_full_when_asked(
        self, client: TestClient[Any, Any]
    ) -> None:
        await client.post(CAPTURE, json={"events": []}, headers=AUTH)
        await client.get("/v1/nowhere")

        summary = await json_of(await client.get("/_test/requests"))
        full = await json_of(await client.get("/_test/requests?bodies=true"))
        assert [
            set(e) - set(s) for e, s in zip(full["requests"], summary["requests"], strict=True)
        ] == [{"body", "answer", "curl"}] * 2
        assert "body" not in summary["requests"][0]

    async def test_a_gzip_body_is_kept_as_the_stub_read_it(
        self, client: TestClient[Any, Any]
    ) -> None:
        sent = json.dumps({"events": [{"type": "signal", "name": "h"}]}).encode()
        headers = {**AUTH, "Content-Encoding": "gzip", "Content-Type": "application/json"}
        await client.post(CAPTURE, data=gzip.compress(sent), headers=headers)

        full = await newest(client)
        assert full["body"]["text"] == sent.decode()
        assert "content-encoding" not in full["curl"]

    async def test_a_body_that_is_not_utf8_is_kept_as_base64(
        self, client: TestClient[Any, Any]
    ) -> None:
        await client.post(CAPTURE, data=b"\xff\xfe{", headers=AUTH)

        full = await newest(client)
        assert full["body"] == {"base64": "//57", "bytes": 3}
        assert full["answer"]["status"] == 400

    async def test_a_key_in_a_posthog_body_shows_only_its_family(
        self, client: TestClient[Any, Any]
    ) -> None:
        await client.post("/flags/?v=2", json={"api_key": "phc_secret", "distinct_id": "d"})
        await client.post("/batch/", json={"token": "phc_other", "batch": []})

        for seq_of in (-2, -1):
            log = await json_of(await client.get("/_test/requests?bodies=true"))
            full = log["requests"][seq_of]
            assert "secret" not in json.dumps(full)
            assert "phc_other" not in json.dumps(full)
        bodies = [json.loads(e["body"]["text"]) for e in log["requests"]]
        assert bodies[0] == {"api_key": "phc_[redacted]", "distinct_id": "d"}
        assert bodies[1]["token"] == "phc_[redacted]"

    async def test_a_truncated_answer_is_kept_as_far_as_it_was_sent(
        self, client: TestClient[Any, Any]
    ) -> None:
        await unreadable(client, {**AUTH, "X-Svc-Test-Fault": "truncated"})

        full = await newest(client)
        sent, declared = full["answer"]["body"]["bytes"], full["answer"]["headers"]
        assert sent == int(declared["Content-Length"]) // 2  # the half it sent, of all it said
        assert full["fault"]["mode"] == "truncated"

    async def test_a_request_given_no_answer_has_none(self, client: TestClient[Any, Any]) -> None:
        await unreadable(client, {**AUTH, "X-Svc-Test-Fault": "reset"})

        full = await newest(client)
        assert (full["status"], full["answer"], full["answerBytes"]) == (None, None, None)

    async def test_an_unknown_path_says_what_it_resembles(
        self, client: TestClient[Any, Any]
    ) -> None:
        await client.post("/v1/flags/evaluat", json={}, headers=AUTH)

        log = await json_of(await client.get("/_test/requests"))
        (entry,) = log["requests"]
        assert entry["route"] is None
        assert entry["unmatched"].endswith("did you mean POST /v1/flags/evaluate?")

    async def test_reading_a_request_creates_no_namespace(
        self, client: TestClient[Any, Any]
    ) -> None:
        assert (await client.get("/ns/ghost/_test/requests/5")).status == 404
        assert (await client.get("/_test/namespaces/ghost")).status == 404

    async def test_a_request_no_longer_kept_is_a_404_that_says_why(
        self, client: TestClient[Any, Any]
    ) -> None:
        for seq in ("999", "abc"):
            answer = await client.get(f"/_test/requests/{seq}")
            assert answer.status == 404
            assert (await answer.json())["message"].startswith(f"seq: no request '{seq}'")


class TestKeysInBodies:
    async def redacted_body(self, client: TestClient[Any, Any], path: str, sent: bytes) -> str:
        await client.post(path, data=sent, headers={"Content-Type": "application/json"})
        full = await newest(client)
        if b"sk_phc_secret" not in sent:  # a word that ends in a key's prefix is no key
            assert "secret" not in json.dumps(full)
        text: str = full["body"]["text"]
        return text

    @pytest.mark.parametrize(
        ("sent", "shown"),
        [
            (b'{"api_key": "phc_secret1", "x": 1}', '{"api_key": "phc_[redacted]", "x": 1}'),
            (b'{"api_key":"phc_secret1",}', '{"api_key":"phc_[redacted]",}'),  # not JSON
            (b'{"token":"any-secret","token":5}', '{"token":"[redacted]","token":5}'),
            (b'[{"properties": {"token": "secret"}}]', '[{"properties": {"token": "[redacted]"}}]'),
            (b"api_key=phc_secret&x=1", "api_key=phc_[redacted]&x=1"),
            (
                b'{"note": "sent svc_org_secret9 by mistake"}',
                '{"note": "sent svc_org_[redacted] by mistake"}',
            ),
        ],
    )
    async def test_a_key_reads_as_its_family_and_the_rest_as_sent(
        self, client: TestClient[Any, Any], sent: bytes, shown: str
    ) -> None:
        assert await self.redacted_body(client, "/batch/", sent) == shown

    async def test_a_key_in_a_referer_reads_as_its_family(
        self, client: TestClient[Any, Any]
    ) -> None:
        await client.get("/v1/nowhere", headers={"Referer": "http://app/?api_key=secret&x=1"})
        assert (await newest(client))["headers"]["referer"] == "http://app/?api_key=[redacted]&x=1"

    async def test_a_body_nested_too_deep_to_write_back_still_reads(
        self, client: TestClient[Any, Any]
    ) -> None:
        sent = b'{"api_key":"phc_secret","a":' + b"[" * 300 + b"]" * 300 + b"}"
        shown = await self.redacted_body(client, "/batch/", sent)
        assert shown.startswith('{"api_key":"phc_[redacted]","a":[[[')
        assert (await client.get("/_test/ui/snapshot")).status == 200

    async def test_a_key_in_any_header_reads_as_its_family(
        self, client: TestClient[Any, Any]
    ) -> None:
        await client.get("/v1/nowhere", headers={"X-Forwarded-Key": "project-api-key_secret"})
        full = await newest(client)
        assert full["headers"]["x-forwarded-key"] == "project-api-key_[redacted]"
        assert "secret" not in full["curl"]

    async def test_recorded_items_show_keys_by_family_on_the_page(
        self, client: TestClient[Any, Any]
    ) -> None:
        event = {"event": "$pageview", "properties": {"token": "phc_secret", "note": "phc_x9"}}
        await client.post("/batch/", json={"api_key": "phc_k", "batch": [event]})

        shown = await json_of(await client.get("/_test/ui/feed"))
        assert shown["recorded"]["events"][0]["properties"] == {
            "token": "phc_[redacted]",
            "note": "phc_[redacted]",
        }
        assert (await json_of(await client.get("/_test/events")))["events"][0] == event

    async def test_per_key_rate_limits_show_only_the_family(
        self, client: TestClient[Any, Any]
    ) -> None:
        limits = {"perSecond": 10, "perKey": {"phc_secret": 5, "phc_other": 1}}
        await client.post("/_test/rate-limit", json=limits)
        shown = await json_of(await client.get("/_test/ui/feed"))
        assert "secret" not in json.dumps(shown)
        assert shown["rateLimit"] == {
            "perSecond": 10,
            "perKey": [
                {"key": "phc_[redacted] #1", "perSecond": 5},
                {"key": "phc_[redacted] #2", "perSecond": 1},
            ],
        }


class TestCurl:
    async def test_the_curl_line_sends_the_same_request_again(
        self, client: TestClient[Any, Any]
    ) -> None:
        sent = {"events": [{"type": "exposure", "targetingKey": "it's", "flagKey": "k"}]}
        headers = {**AUTH, "X-Svc-Test-Namespace": "replay", "Content-Encoding": "gzip"}
        await client.post(
            CAPTURE + "?trace=1", data=gzip.compress(json.dumps(sent).encode()), headers=headers
        )
        original = await newest(client, "/ns/replay")

        printed = await pasted(original["curl"])

        assert json.loads(printed) == {"ok": True, "accepted": 1}
        again = await newest(client, "/ns/replay")
        assert again["seq"] != original["seq"]
        for field in ("method", "path", "query", "route", "status"):
            assert again[field] == original[field]
        assert json.loads(again["body"]["text"]) == sent
        assert again["headers"]["authorization"] == "Bearer [redacted]"
        assert again["curl"] == original["curl"]

    @pytest.mark.parametrize(
        ("method", "path", "body", "extra"),
        [
            ("GET", "/v1/nowhere?filter[name]=x&token=phc_secret", None, {}),
            ("POST", CAPTURE, b"\xff{not utf-8", {}),
            ("POST", CAPTURE, b"nul \x00 inside", {}),
            ("POST", CAPTURE, b"@/etc/hostname", {}),
            ("POST", CAPTURE, b'{"pad": "' + b"x" * 300_000 + b'"}', {}),
            ("HEAD", "/v1/nowhere", None, {}),
            ("POST", CAPTURE, b"{'quoted': \"it's\"}\n", {"X-Empty": "", "X-Q": "it's"}),
            ("GET", "/v1/a%20b/c d", None, {}),
        ],
    )
    async def test_any_request_comes_again_as_it_came(
        self,
        client: TestClient[Any, Any],
        method: str,
        path: str,
        body: bytes | None,
        extra: dict[str, str],
    ) -> None:
        headers = {"X-Svc-Test-Namespace": "again", **extra}
        await client.request(method, path, data=body, headers=headers)
        original = await newest(client, "/ns/again")

        await pasted(original["curl"])

        again = await newest(client, "/ns/again")
        assert again["seq"] == original["seq"] + 1
        for field in ("method", "path", "query", "route", "status", "body", "bodyBytes"):
            assert again[field] == original[field], field
        sent = {n: v for n, v in original["headers"].items() if n.startswith(("x-", "content-t"))}
        assert {n: again["headers"].get(n) for n in sent} == sent

    async def test_a_request_sent_to_an_absolute_url_comes_again_to_the_stub(
        self, client: TestClient[Any, Any]
    ) -> None:
        host, port = client.host, client.port
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(
            f"GET http://{host}:{port}/v1/nowhere?x=1 HTTP/1.1\r\nHost: {host}\r\n"
            "Connection: close\r\n\r\n".encode()
        )
        await reader.read()
        writer.close()
        original = await newest(client)
        await pasted(original["curl"])
        assert (await newest(client))["seq"] == original["seq"] + 1

    async def test_it_never_holds_a_key(self, client: TestClient[Any, Any]) -> None:
        await client.get("/flags/definitions?token=phc_secret", headers={"X-Api-Key": "sk_1"})
        await client.post("/flags/", json={"api_key": "phc_secret", "distinct_id": "d"})

        log = await json_of(await client.get("/_test/requests?bodies=true"))
        curls = [entry["curl"] for entry in log["requests"]]
        assert not any("secret" in curl or "sk_1" in curl for curl in curls)
        assert "token=phc_[redacted]" in curls[0]


class TestTheBoundInBytes:
    async def test_the_oldest_requests_go_once_their_bodies_weigh_too_much(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(max_recorded_bytes=50_000)))
        for i in range(10):
            padding = "x" * 10_000
            await client.post(CAPTURE, json={"events": [], "pad": padding, "i": i}, headers=AUTH)

        log = await json_of(await client.get("/_test/requests"))
        kept = log["requests"]
        assert 3 <= len(kept) < 10
        assert log["dropped"] == 10 - len(kept)
        assert sum(e["bodyBytes"] + e["answerBytes"] for e in kept) <= 50_000
        last = await newest(client)
        assert json.loads(last["body"]["text"])["i"] == 9

    async def test_a_request_heavier_than_the_bound_is_still_kept_alone(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(max_recorded_bytes=1_000)))
        await client.post(CAPTURE, json={"events": [], "pad": "x" * 5_000}, headers=AUTH)

        log = await json_of(await client.get("/_test/requests"))
        assert len(log["requests"]) == 1
        assert len((await newest(client))["body"]["text"]) > 5_000

    async def test_named_namespaces_together_are_bounded_the_least_recently_used_evicted(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(max_recorded_bytes=30_000)))
        for name in ("first", "second", "third"):
            body = {"events": [], "pad": "x" * 12_000}
            await client.post(f"/ns/{name}{CAPTURE}", json=body, headers=AUTH)

        await client.get("/ns/fourth/_test/requests")  # checked whenever a namespace is used
        listed = await json_of(await client.get("/_test/namespaces"))
        assert listed["recordedBytes"] <= 30_000
        assert listed["maxRecordedBytes"] == 30_000
        assert listed["evicted"] >= 1
        gone = await client.get("/ns/first/_test/requests")
        assert gone.status == 410
        assert "--max-recorded-bytes" in (await gone.json())["message"]

    async def test_a_named_namespace_keeps_an_eighth_of_the_pool(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(max_recorded_bytes=80_000)))
        for _ in range(10):
            await client.post(f"/ns/heavy{CAPTURE}", json={"pad": "x" * 4_000}, headers=AUTH)

        log = await json_of(await client.get("/ns/heavy/_test/requests"))
        kept = log["requests"]
        assert sum(e["bodyBytes"] + e["answerBytes"] for e in kept) <= 10_000
        assert len(kept) == 2

    async def test_light_requests_after_a_heavy_one_drop_it(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(max_recorded_bytes=10_000)))
        await client.post(CAPTURE, json={"events": [], "pad": "x" * 20_000}, headers=AUTH)
        for _ in range(3):
            await client.head("/v1/nowhere")  # no body, and an answer with none

        log = await json_of(await client.get("/_test/requests"))
        assert [e["method"] for e in log["requests"]] == ["HEAD"] * 3
        assert log["dropped"] == 1

    async def test_a_reset_gives_its_bytes_back(self, aiohttp_client: AiohttpClient) -> None:
        client = await aiohttp_client(create_app(StubConfig(max_recorded_bytes=30_000)))
        for _ in range(5):
            await client.post(f"/ns/a{CAPTURE}", json={"pad": "x" * 4_000}, headers=AUTH)
            await client.post("/ns/a/_test/reset")

        listed = await json_of(await client.get("/_test/namespaces"))
        assert listed["recordedBytes"] == 0
        assert listed["evicted"] == 0


class TestTheFeed:
    async def test_the_first_look_is_everything_and_the_next_waits_for_something_new(
        self, client: TestClient[Any, Any]
    ) -> None:
        await client.post(CAPTURE, json={"events": [{"type": "signal", "name": "h"}]}, headers=AUTH)
        first = await json_of(await client.get("/_test/ui/feed"))
        assert first["fresh"] is True
        assert [r["route"] for r in first["requests"]] == ["capture"]
        assert first["recorded"]["svcEvents"] == [{"type": "signal", "name": "h"}]
        assert {f["key"] for f in first["flags"]} >= {"new-checkout"}

        since = first["cursor"]
        waiting = asyncio.ensure_future(
            client.get(f"/_test/ui/feed?since={since}&waitMs={FEED_WAIT_MS}")
        )
        await watching(client)
        assert not waiting.done(), "answered with nothing new"
        await client.post(EVALUATE, json={"flagKeys": ["new-checkout"]}, headers=AUTH)
        later = await json_of(await asyncio.wait_for(waiting, FEED_GUARD_S))

        assert later["fresh"] is False
        assert "flags" not in later
        assert [r["route"] for r in later["requests"]] == ["evaluate"]
        assert later["recorded"]["svcEvents"] == []

    async def test_arming_a_fault_wakes_a_waiting_page(self, client: TestClient[Any, Any]) -> None:
        since = (await json_of(await client.get("/_test/ui/feed")))["cursor"]
        waiting = asyncio.ensure_future(
            client.get(f"/_test/ui/feed?since={since}&waitMs={FEED_WAIT_MS}")
        )
        await watching(client)
        await client.post("/_test/fault", json={"mode": "500", "applyTo": "evaluate"})
        later = await json_of(await asyncio.wait_for(waiting, FEED_GUARD_S))

        assert [f["mode"] for f in later["faults"]] == ["500"]
        assert later["requests"] == []

    async def test_a_burst_is_one_answer(self, client: TestClient[Any, Any]) -> None:
        since = (await json_of(await client.get("/_test/ui/feed")))["cursor"]
        waiting = asyncio.ensure_future(
            client.get(f"/_test/ui/feed?since={since}&waitMs={FEED_WAIT_MS}")
        )
        await watching(client)
        await asyncio.gather(*(client.post(CAPTURE, json={}, headers=AUTH) for _ in range(20)))
        later = await json_of(await asyncio.wait_for(waiting, FEED_GUARD_S))

        assert len(later["requests"]) == 20

    async def test_after_a_reset_the_page_starts_over(self, client: TestClient[Any, Any]) -> None:
        await client.post(CAPTURE, json={}, headers=AUTH)
        since = (await json_of(await client.get("/_test/ui/feed")))["cursor"]
        await client.post("/_test/reset")
        later = await json_of(await client.get(f"/_test/ui/feed?since={since}&waitMs=5000"))

        assert later["fresh"] is True
        assert later["requests"] == []

    async def test_a_namespace_made_again_under_its_name_is_a_fresh_look(
        self, client: TestClient[Any, Any]
    ) -> None:
        for _ in range(3):
            await client.post(f"/ns/again{CAPTURE}", json={}, headers=AUTH)
        since = (await json_of(await client.get("/ns/again/_test/ui/feed")))["cursor"]
        await client.delete("/_test/namespaces/again")
        await client.post(f"/ns/again{CAPTURE}", json={}, headers=AUTH)

        later = await json_of(
            await client.get(f"/ns/again/_test/ui/feed?since={since}&waitMs=5000")
        )
        assert later["fresh"] is True
        assert len(later["requests"]) == 1

    async def test_a_cursor_ahead_of_the_namespace_is_a_fresh_look(
        self, client: TestClient[Any, Any]
    ) -> None:
        await client.post(CAPTURE, json={}, headers=AUTH)
        origin, generation, *_ = (await json_of(await client.get("/_test/ui/feed")))[
            "cursor"
        ].split(".")
        since = f"{origin}.{generation}.9.0.0.0.0"
        later = await json_of(await client.get(f"/_test/ui/feed?since={since}&waitMs=5000"))
        assert later["fresh"] is True
        assert len(later["requests"]) == 1

    async def test_what_the_journal_dropped_long_ago_is_not_skipped(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(max_recorded=3)))
        for _ in range(8):
            await client.get("/v1/nowhere")
        shown = await json_of(await client.get("/_test/ui/feed"))
        assert (len(shown["requests"]), shown["skipped"], shown["journal"]["dropped"]) == (3, 0, 5)

    async def test_watching_a_namespace_creates_none(self, client: TestClient[Any, Any]) -> None:
        for path in ("/ns/typo/_test/ui/feed", "/ns/typo/_test/ui/snapshot"):
            answer = await client.get(path)
            assert answer.status == 404
            assert (await answer.json())["message"] == (
                "namespace: no namespace 'typo' (not made yet, or deleted)"
            )
        assert (await client.get("/ns/typo/_test/ui")).status == 200  # the page waits for it
        listed = await json_of(await client.get("/_test/namespaces"))
        assert [n["name"] for n in listed["namespaces"]] == ["default"]

    async def test_no_answer_of_the_feed_is_kept_by_a_browser(
        self, client: TestClient[Any, Any]
    ) -> None:
        for path in ("/_test/ui/feed", "/ns/nobody/_test/ui/feed", "/_test/ui/snapshot"):
            assert (await client.get(path)).headers["Cache-Control"] == "no-store"

    async def test_a_cursor_it_did_not_write_reads_as_none(
        self, client: TestClient[Any, Any]
    ) -> None:
        for since in ("", "nonsense", "1.2.3", "-1.0.0.0.0.0.0"):
            shown = await json_of(await client.get(f"/_test/ui/feed?since={since}&waitMs=5000"))
            assert shown["fresh"] is True

    async def test_a_page_behind_by_more_than_a_look_is_told_how_much_it_missed(
        self, aiohttp_client: AiohttpClient, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr("stub.inspector.view.MAX_PER_LOOK", 5)
        client = await aiohttp_client(create_app(StubConfig()))
        for _ in range(8):
            await client.get("/v1/nowhere")
        shown = await json_of(await client.get("/_test/ui/feed"))

        assert (len(shown["requests"]), shown["skipped"]) == (5, 3)
        assert shown["requests"][-1]["seq"] - shown["requests"][0]["seq"] == 4

    async def test_a_namespace_deleted_under_a_waiting_page_says_so(
        self, client: TestClient[Any, Any]
    ) -> None:
        await client.post("/_test/namespaces", json={"name": "gone"})
        since = (await json_of(await client.get("/ns/gone/_test/ui/feed")))["cursor"]
        waiting = asyncio.ensure_future(
            client.get(f"/ns/gone/_test/ui/feed?since={since}&waitMs={FEED_WAIT_MS}")
        )
        await watching(client, "gone")
        await client.delete("/_test/namespaces/gone")
        answer = await asyncio.wait_for(waiting, FEED_GUARD_S)

        assert answer.status == 410
        assert "while this page watched it" in (await answer.json())["message"]

    async def test_it_shows_every_namespace_and_the_management_plane_once_used(
        self, client: TestClient[Any, Any]
    ) -> None:
        await client.post("/ns/other/_test/fault", json={"mode": "500"})
        shown = await json_of(await client.get("/_test/ui/feed"))
        assert "management" not in shown
        names = [n["name"] for n in shown["namespaces"]["namespaces"]]
        assert names == ["default", "other"]

        await client.get("/v1/projects", headers={"Authorization": "Bearer svc_org_default"})
        shown = await json_of(await client.get("/_test/ui/feed"))
        assert "org_default" in shown["management"]["orgs"]

    async def test_pages_that_never_read_their_answers_hold_up_nothing(
        self, client: TestClient[Any, Any]
    ) -> None:
        for _ in range(500):
            await client.post(CAPTURE, json={"events": [], "pad": "x" * 200}, headers=AUTH)
        stalled = []
        for _ in range(20):  # each asks for a look of ~300 KB and never reads a byte of it
            _, writer = await asyncio.open_connection(client.host, client.port)
            writer.write(b"GET /_test/ui/feed HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            stalled.append(writer)
        try:
            await asyncio.sleep(0.5)
            started = asyncio.get_running_loop().time()
            assert (await client.get("/health")).status == 200
            served = await client.post(EVALUATE, json={"targetingKey": "u"}, headers=AUTH)
            assert served.status == 200
            assert asyncio.get_running_loop().time() - started < 5  # held up: the wait
        finally:
            for writer in stalled:
                writer.close()

    async def test_a_wait_without_a_page_costs_nothing_afterwards(
        self, client: TestClient[Any, Any]
    ) -> None:
        """A page that went away leaves no waiter behind once its wait ran out."""
        app = client.app
        assert app is not None

        since = (await json_of(await client.get("/_test/ui/feed")))["cursor"]
        await client.get(f"/_test/ui/feed?since={since}&waitMs=200")
        assert app[NAMESPACES].default.recorded._waiters == []


class TestThePage:
    async def test_the_page_and_its_files_are_served_with_a_policy_that_keeps_it_home(
        self, client: TestClient[Any, Any]
    ) -> None:
        page = await client.get("/_test/ui")
        assert page.status == 200
        assert page.content_type == "text/html"
        policy = page.headers["Content-Security-Policy"]
        assert "default-src 'none'" in policy
        assert "connect-src 'self'" in policy
        html = await page.text()
        for asset, kind in (("inspector.js", "text/javascript"), ("inspector.css", "text/css")):
            assert f"ui/{asset}" in html
            served = await client.get(f"/_test/ui/{asset}")
            assert (served.status, served.content_type) == (200, kind)
        assert not re.search(r"(src|href)=\"(https?:)?//", html)

    async def test_with_a_control_token_the_page_loads_and_its_data_needs_the_token(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(control_token="sesame")))
        for path in ("/_test/ui", "/_test/ui/inspector.js", "/ns/x/_test/ui"):
            assert (await client.get(path)).status == 200
        for path in ("/_test/ui/feed", "/_test/ui/snapshot", "/_test/requests/1"):
            assert (await client.get(path)).status == 401
        token = {"Authorization": "Bearer sesame"}
        assert (await client.get("/_test/ui/feed", headers=token)).status == 200

    async def test_the_assets_create_no_namespace(self, client: TestClient[Any, Any]) -> None:
        await client.get("/ns/never/_test/ui/inspector.js")
        listed = await json_of(await client.get("/_test/namespaces"))
        assert [n["name"] for n in listed["namespaces"]] == ["default"]


class TestTheSnapshot:
    async def test_it_is_one_file_with_every_request_in_full_inside(
        self, client: TestClient[Any, Any]
    ) -> None:
        body = {"events": [{"type": "signal", "name": "</script><script>alert(1)</script>"}]}
        await client.post(f"/ns/snap{CAPTURE}", json=body, headers=AUTH)
        answer = await client.get("/ns/snap/_test/ui/snapshot?download=true")

        html = await answer.text()
        assert (await client.get("/ns/snap/_test/ui/snapshot?download=yes")).status == 400
        assert answer.headers["Content-Disposition"] == 'attachment; filename="svc-stub-snap.html"'
        assert "ui/inspector.js" not in html
        assert "<style>" in html
        assert html.count("</script>") == 2  # the inline script and the data: a body ends none
        data = re.search(r'id="svc-stub-snapshot">(.*?)</script>', html, re.S)
        assert data is not None
        shown = json.loads(data.group(1))
        (request,) = shown["requests"]
        assert json.loads(request["body"]["text"]) == body
        assert request["curl"].startswith("printf %s '{")
        assert "/ns/snap/" in request["curl"]
        assert shown["namespace"] == "snap"
        assert shown["snapshotAt"] <= time.time() * 1000

    async def test_the_client_takes_one(self, live_stub: Any) -> None:
        from stub.client import StubClient

        stub = StubClient(live_stub.url)
        assert "svc-stub-snapshot" in stub.snapshot()


class TestTheCoverage:
    """The coverage tab's data: the namespace's coverage as `/_test/coverage` gives it, and
    each request's outcome, the words of the cell it counted in (stub/coverage.py)."""

    async def _met_everything(self, client: TestClient[Any, Any], prefix: str = "") -> None:
        ask = {"targetingKey": "user-1", "flagKeys": ["new-checkout"]}
        await client.post(
            f"{prefix}/_test/fault", json={"mode": "500", "applyTo": "evaluate", "ttlRequests": 1}
        )
        for _ in range(3):
            await client.post(f"{prefix}{EVALUATE}", json=ask, headers=AUTH)
        await client.post(f"{prefix}{EVALUATE}", json=ask)  # no key: the stub's own 401
        fault = {"X-Svc-Test-Fault": "invalid_json"}
        await client.post(f"{prefix}{CAPTURE}", json={"events": []}, headers=AUTH | fault)
        await client.post(
            f"{prefix}{CAPTURE}", json={"events": []}, headers=AUTH | {"X-Svc-Test-Fault": "none"}
        )
        await client.get(f"{prefix}/v1/flag/evaluate")  # an unknown path

    async def test_the_feed_carries_the_coverage_and_each_requests_outcome(
        self, client: TestClient[Any, Any]
    ) -> None:
        await self._met_everything(client)
        shown = await json_of(await client.get("/_test/ui/feed"))
        reported = await json_of(await client.get("/_test/coverage"))

        assert shown["coverage"] == reported
        assert [(r["route"], r["outcome"]) for r in shown["requests"]] == [
            ("evaluate", "fault 500"),
            ("evaluate", "ok"),
            ("evaluate", "ok"),
            ("evaluate", "401"),
            ("capture", "fault invalid_json"),
            ("capture", "ok"),  # a per-request "none": served as it would be
            (None, "404"),
        ]
        runtime = shown["coverage"]["profiles"]["runtime"]
        assert (runtime["met"], runtime["of"]) == (5, 15)

    async def test_a_cells_count_is_the_requests_with_its_route_and_outcome(
        self, aiohttp_client: AiohttpClient
    ) -> None:
        client = await aiohttp_client(create_app(StubConfig(rate_limit=1)))
        await self._met_everything(client, "/ns/cells")
        for _ in range(2):
            await client.post(f"/ns/cells{CAPTURE}", json={"events": []}, headers=AUTH)
        shown = await json_of(await client.get("/ns/cells/_test/ui/feed"))

        counted: dict[tuple[str, str], int] = {}
        for r in shown["requests"]:
            cell = (r["route"] or "unknown path", r["outcome"])
            counted[cell] = counted.get(cell, 0) + 1
        cells = {(c["route"], c["outcome"]): c["count"] for c in shown["coverage"]["cells"]}
        assert counted == cells
        assert ("capture", "rate limited") in cells

    async def test_the_coverage_outlives_a_reset_the_journal_does_not(
        self, client: TestClient[Any, Any]
    ) -> None:
        await client.post(CAPTURE, json={"events": []}, headers=AUTH)
        await client.post("/_test/reset")
        shown = await json_of(await client.get("/_test/ui/feed"))

        assert shown["requests"] == []
        assert shown["coverage"]["cells"] == [{"route": "capture", "outcome": "ok", "count": 1}]

    async def test_a_snapshot_carries_the_coverage_and_each_requests_outcome(
        self, client: TestClient[Any, Any]
    ) -> None:
        await self._met_everything(client, "/ns/snap")
        html = await (await client.get("/ns/snap/_test/ui/snapshot")).text()
        data = re.search(r'id="svc-stub-snapshot">(.*?)</script>', html, re.S)
        assert data is not None
        shown = json.loads(data.group(1))

        assert shown["coverage"] == await json_of(await client.get("/ns/snap/_test/coverage"))
        assert [r["outcome"] for r in shown["requests"]][:2] == ["fault 500", "ok"]
        assert all("curl" in r for r in shown["requests"])  # still in full
        assert 'data-tab="coverage"' in html


class TestTheClients:
    async def test_the_async_client_reads_a_request_in_full_and_a_snapshot(
        self, client: TestClient[Any, Any]
    ) -> None:
        from stub.client import AsyncStubClient

        await client.post(CAPTURE, data=b"\xff{", headers=AUTH)
        await client.post(CAPTURE, json={"events": []}, headers=AUTH)
        stub = AsyncStubClient(str(client.make_url("")))
        try:
            binary, served = await stub.requests()
            full = await stub.request(served.seq)
            assert (full.body, full.answer_status) == ('{"events": []}', 200)
            assert full.answer_body == '{"ok":true,"accepted":0}'
            assert full.curl.startswith("printf %s '{\"events\": []}' | curl -sS")
            assert (await stub.request(binary.seq)).body == b"\xff{"
            assert (served.body_bytes, served.answer_bytes) == (14, 24)
            assert "svc-stub-snapshot" in await stub.snapshot()
        finally:
            await stub.close()
