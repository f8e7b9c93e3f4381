"""`--watch`: a changed fixture file is served at once and whole, a broken one is refused with
one log line while the previous set stays served, and a file replaced by rename is seen."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from fireweave import EvaluationContext

from conftest import AUTH, HANG_GUARD_S, AiohttpClient, OpenFireweave, spawn_stub
from stub import StubConfig, create_app
from stub.watch import stamps

FLAGS = [f"flag-{n}" for n in range(40)]
MANAGEMENT = """
management:
  orgs:
    org_acme:
      keys: [{key: svc_org_acme_admin, scope: "org:management", userId: u1}]
      projects: [{projectId: proj_checkout, name: Checkout, slug: checkout}]
"""


def fixture_text(value: str, *, keys: str = "", management: str = "") -> str:
    """Every flag serves `value`: a response mixing two sets would show two values."""
    flags = "".join(f"  {key}: {{type: string, value: {value}}}\n" for key in FLAGS)
    return f"flags:\n{flags}{keys}{management}"


def replace_by_rename(path: Path, text: str) -> None:
    """As editors save: a new file written beside the old one, renamed over it."""
    fresh = path.with_suffix(".saving")
    fresh.write_text(text)
    os.replace(fresh, path)


async def served_values(client: TestClient[Any, Any], prefix: str = "") -> set[str]:
    answer = await client.post(
        f"{prefix}/v1/flags/evaluate", json={"targetingKey": "u", "flagKeys": FLAGS}, headers=AUTH
    )
    assert answer.status == 200
    return {decision["value"] for decision in (await answer.json())["decisions"]}


async def until(check: Callable[[], Any], timeout_s: float = HANG_GUARD_S) -> None:
    """Returns once `check()` holds. `timeout_s` (was 10 s) guards a watcher that never acts;
    it is not a speed budget."""
    deadline = time.monotonic() + timeout_s
    while not await check():
        assert time.monotonic() < deadline, f"the watcher did not act within {timeout_s} s"
        await asyncio.sleep(0.05)


async def reloads(client: TestClient[Any, Any]) -> dict[str, Any]:
    return await (await client.get("/_test/fixtures")).json()  # type: ignore[no-any-return]


@pytest.fixture
def fixture_file(tmp_path: Path) -> Path:
    path = tmp_path / "flags.yaml"
    path.write_text(fixture_text("v1"))
    return path


@pytest.fixture
async def watched(aiohttp_client: AiohttpClient, fixture_file: Path) -> TestClient[Any, Any]:
    config = StubConfig(fixture_paths=(fixture_file,), watch=True)
    return await aiohttp_client(create_app(config))


async def reloaded(client: TestClient[Any, Any], count: int) -> None:
    async def done() -> bool:
        return bool((await reloads(client))["reloads"] >= count)

    await until(done)


class TestReload:
    async def test_a_valid_change_is_served(
        self, watched: TestClient[Any, Any], fixture_file: Path
    ) -> None:
        assert await served_values(watched) == {"v1"}
        fixture_file.write_text(fixture_text("v2"))
        await reloaded(watched, 1)
        assert await served_values(watched) == {"v2"}
        assert await reloads(watched) == {
            "flags": sorted(FLAGS),
            "watching": True,
            "reloads": 1,
            "reloadError": None,
        }

    async def test_an_invalid_change_keeps_the_old_set_and_logs_one_line(
        self, watched: TestClient[Any, Any], fixture_file: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger="stub")
        fixture_file.write_text(fixture_text("v2") + f"  {FLAGS[0]}: {{type: string, value: x}}\n")

        async def refused() -> bool:
            return (await reloads(watched))["reloadError"] is not None

        await until(refused)
        said = await reloads(watched)
        assert said["reloadError"] == (  # the flag given twice is on the file's last line, 42
            f"{fixture_file}: invalid YAML at line 42, column 3: the key 'flag-0' appears twice"
        )
        assert said["reloads"] == 0
        assert await served_values(watched) == {"v1"}
        assert [r.getMessage() for r in caplog.records] == [
            f"fixtures not reloaded, the previous set is still served: {said['reloadError']}"
        ]
        fixture_file.write_text(fixture_text("v3"))  # mended: served, and the error is gone
        await reloaded(watched, 1)
        assert (await reloads(watched))["reloadError"] is None
        assert await served_values(watched) == {"v3"}

    async def test_a_file_replaced_by_rename_is_seen(
        self, watched: TestClient[Any, Any], fixture_file: Path
    ) -> None:
        replace_by_rename(fixture_file, fixture_text("renamed"))
        await reloaded(watched, 1)
        assert await served_values(watched) == {"renamed"}

    async def test_a_deleted_file_keeps_the_set_until_it_is_back(
        self, watched: TestClient[Any, Any], fixture_file: Path
    ) -> None:
        fixture_file.unlink()

        async def refused() -> bool:
            said = await reloads(watched)
            return bool(said["reloadError"] == f"{fixture_file}: no such file")

        await until(refused)
        assert await served_values(watched) == {"v1"}
        fixture_file.write_text(fixture_text("back"))
        await reloaded(watched, 1)
        assert await served_values(watched) == {"back"}

    async def test_a_file_added_to_a_watched_directory_is_loaded(
        self, aiohttp_client: AiohttpClient, tmp_path: Path
    ) -> None:
        folder = tmp_path / "fixtures"
        folder.mkdir()
        (folder / "a.yaml").write_text(fixture_text("first"))
        client = await aiohttp_client(create_app(StubConfig(fixture_paths=(folder,), watch=True)))
        (folder / "notes.txt").write_text("not a fixture file: no reload")
        (folder / "sub.yaml").mkdir()  # nor is a directory, whatever its name
        await asyncio.sleep(0.8)  # three polls
        assert (await reloads(client))["reloads"] == 0
        (folder / "b.yaml").write_text(fixture_text("second"))  # later in order: wins per key
        await reloaded(client, 1)
        assert await served_values(client) == {"second"}
        assert (await reloads(client))["reloads"] == 1

    async def test_without_watch_a_change_is_not_served(
        self, aiohttp_client: AiohttpClient, fixture_file: Path
    ) -> None:
        app = create_app(StubConfig(fixture_paths=(fixture_file,)))
        assert len(app.cleanup_ctx) == 0  # nothing polls, nothing is added to a request
        client = await aiohttp_client(app)
        fixture_file.write_text(fixture_text("v2"))
        await asyncio.sleep(0.8)  # three polls' worth, had one been running
        assert await served_values(client) == {"v1"}
        assert (await reloads(client))["watching"] is False


class TestAtomicity:
    async def test_under_concurrent_requests_each_sees_one_whole_set(
        self, watched: TestClient[Any, Any], fixture_file: Path
    ) -> None:
        """Twenty clients evaluate every flag in a loop while the file is rewritten in place,
        replaced by rename and broken: every answer holds one set's value, never two."""
        seen: list[set[str]] = []
        stop = asyncio.Event()

        async def client_loop() -> None:
            while not stop.is_set():
                seen.append(await served_values(watched))

        clients = [asyncio.create_task(client_loop()) for _ in range(20)]
        try:
            fixture_file.write_text(fixture_text("v2"))
            await reloaded(watched, 1)
            replace_by_rename(fixture_file, fixture_text("v3"))
            await reloaded(watched, 2)
            fixture_file.write_text("flags: [not, a, mapping]\n")

            async def refused() -> bool:
                return (await reloads(watched))["reloadError"] is not None

            await until(refused)
            replace_by_rename(fixture_file, fixture_text("v4"))
            await reloaded(watched, 3)
            await asyncio.sleep(0.1)
        finally:
            stop.set()
            await asyncio.gather(*clients)
        assert all(len(values) == 1 for values in seen), [v for v in seen if len(v) > 1][:3]
        order = [next(iter(values)) for values in seen]
        assert set(order) == {"v1", "v2", "v3", "v4"}
        firsts = [order.index(value) for value in ("v1", "v2", "v3", "v4")]
        assert firsts == sorted(firsts)


class TestWhatFollows:
    """Which namespaces move to the new set, and what of theirs a reload leaves alone."""

    async def test_namespaces_made_from_the_file_follow_and_posted_fixtures_stay(
        self, watched: TestClient[Any, Any], fixture_file: Path
    ) -> None:
        await served_values(watched, "/ns/follows")  # made from the start-up set
        posted = {"flags": {key: {"type": "string", "value": "posted"} for key in FLAGS}}
        created = {"name": "own", "fixtures": posted}
        assert (await watched.post("/_test/namespaces", json=created)).status == 201
        assert (await watched.post("/ns/posted/_test/fixtures", json=posted)).status == 200
        fixture_file.write_text(fixture_text("v2"))
        await reloaded(watched, 1)
        assert await served_values(watched, "/ns/follows") == {"v2"}
        assert await served_values(watched, "/ns/own") == {"posted"}
        assert await served_values(watched, "/ns/posted") == {"posted"}
        assert (await watched.post("/ns/posted/_test/reset")).status == 200
        assert await served_values(watched, "/ns/posted") == {"v2"}  # resets to the new set
        assert await served_values(watched, "/ns/new") == {"v2"}

    async def test_keys_and_the_management_seed_change_only_when_their_section_does(
        self, aiohttp_client: AiohttpClient, fixture_file: Path
    ) -> None:
        limited = "keys:\n  rateLimit: {perSecond: 0.01}\n"  # one request in 100 s
        fixture_file.write_text(fixture_text("v1", keys=limited, management=MANAGEMENT))
        config = StubConfig(fixture_paths=(fixture_file,), watch=True)
        client = await aiohttp_client(create_app(config))
        admin = {"Authorization": "Bearer svc_org_acme_admin"}
        made = await client.post(
            "/v1/projects", json={"name": "Made", "slug": "made"}, headers=admin
        )
        assert made.status == 201
        await served_values(client)  # the key's one request this second
        fixture_file.write_text(fixture_text("v2", keys=limited, management=MANAGEMENT))
        await reloaded(client, 1)
        # same sections: the window is not restarted, the project made stays
        assert (await client.post("/v1/flags/evaluate", json={}, headers=AUTH)).status == 429
        listed = await (await client.get("/v1/projects", headers=admin)).json()
        assert "made" in json.dumps(listed)
        fixture_file.write_text(
            fixture_text("v3", management=MANAGEMENT.replace("Checkout", "Till"))
        )
        await reloaded(client, 2)
        assert await served_values(client) == {"v3"}  # no keys section: no limit
        listed = await (await client.get("/v1/projects", headers=admin)).json()
        assert "made" not in json.dumps(listed)  # a changed seed re-seeds the plane
        assert "Till" in json.dumps(listed)

    async def test_a_management_plane_a_test_seeded_is_kept_until_its_reset(
        self, aiohttp_client: AiohttpClient, fixture_file: Path
    ) -> None:
        fixture_file.write_text(fixture_text("v1", management=MANAGEMENT))
        config = StubConfig(fixture_paths=(fixture_file,), watch=True)
        client = await aiohttp_client(create_app(config))
        own = MANAGEMENT.replace("Checkout", "Seeded by the test").replace("management:\n", "")
        seeded = await client.post(
            "/_test/management", data=own, headers={"Content-Type": "application/yaml"}
        )
        assert seeded.status == 200, await seeded.text()
        fixture_file.write_text(
            fixture_text("v2", management=MANAGEMENT.replace("Checkout", "Till"))
        )
        await reloaded(client, 1)

        async def project_names() -> str:
            return json.dumps(await (await client.get("/_test/management")).json())

        assert "Seeded by the test" in await project_names()
        assert (await client.post("/_test/reset")).status == 200
        assert "Till" in await project_names()  # the reset returns to the file's new seed


class TestStamps:
    def test_a_rename_over_the_file_changes_its_stamp(self, fixture_file: Path) -> None:
        before = stamps([fixture_file])
        replace_by_rename(fixture_file, fixture_file.read_text())  # same bytes, new file
        assert stamps([fixture_file]) != before

    def test_a_missing_path_stamps_as_zeros(self, tmp_path: Path) -> None:
        assert stamps([tmp_path / "gone.yaml"]) == ((str(tmp_path / "gone.yaml"), 0, 0, 0),)


class TestCommand:
    def test_the_spawned_stub_logs_each_refusal_as_one_line(self, fixture_file: Path) -> None:
        with spawn_stub("--fixtures", str(fixture_file), "--watch") as stub:
            fixture_file.write_text("flags:\n  a: {type: string}\n")
            deadline = time.monotonic() + HANG_GUARD_S  # guards a hang only
            while stub.get("/_test/fixtures")["reloadError"] is None:
                assert time.monotonic() < deadline
                time.sleep(0.05)
            stub.process.terminate()
            _, log = stub.process.communicate(timeout=HANG_GUARD_S)
        assert log.splitlines() == [
            "svc-stub ERROR fixtures not reloaded, the previous set is still served: "
            f"{fixture_file}: flags.a.value: required"
        ]

    def test_the_published_client_reads_the_edited_file(
        self, fixture_file: Path, open_fireweave: OpenFireweave
    ) -> None:
        """fireweave 0.1.0, on a spawned stub: what an edit serves is what the client reads."""
        with spawn_stub("--fixtures", str(fixture_file), "--watch") as stub:
            _, _, client = open_fireweave(stub.url, "any-key")
            user = EvaluationContext(targeting_key="user-1")
            read = client.control_points.get_string_value
            assert read(FLAGS[7], "default", user) == "v1"
            fixture_file.write_text(fixture_text("edited"))
            deadline = time.monotonic() + HANG_GUARD_S  # guards a hang only
            while stub.get("/_test/fixtures")["reloads"] < 1:
                assert time.monotonic() < deadline
                time.sleep(0.05)
            assert read(FLAGS[7], "default", user) == "edited"

    def test_svc_stub_watch_turns_it_on(
        self, fixture_file: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("SVC_STUB_WATCH", "1")
        monkeypatch.setenv("SVC_STUB_FIXTURES", str(fixture_file))
        with spawn_stub() as stub:
            assert stub.get("/_test/fixtures")["watching"] is True
