"""Every secret the stub knows (keys, CLI session tokens, the control token, every namespace's
bound keys) is hidden wherever a request put it, in every place the journal is read: sent over
a raw socket as a malformed client would, read back over HTTP as a user would."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from conftest import AiohttpClient
from stub import StubConfig, create_app
from stub.control.redaction import KnownSecrets
from stub.inspector.routes import snapshot_page
from stub.namespaces import DEFAULT, NAMESPACES

MARKER = "m4rk3r"
"""In every secret below, and nowhere else: found in what the stub shows, a secret leaked."""
CLI_TOKEN = f"clitok_a_{MARKER}"
RUNTIME_KEY = f"runtimekey-{MARKER}"
RATED_KEY = f"ratedkey-{MARKER}"
CONTROL_TOKEN = f"ctltok-{MARKER}"
BOUND_KEY = f"project-api-key_bound{MARKER}"
CONTROL = {"Authorization": f"Bearer {CONTROL_TOKEN}"}

FIXTURES = f"""
flags: {{}}
management:
  orgs:
    org_acme:
      sessions: [{{token: {CLI_TOKEN}, userId: u-1}}]
keys:
  accepted: [{{key: {RUNTIME_KEY}}}]
  rateLimit: {{perKey: {{{RATED_KEY}: 1000}}}}
"""


@pytest.fixture
async def stub(aiohttp_client: AiohttpClient, tmp_path: Path) -> TestClient[Any, Any]:
    """A stub that knows a secret of every kind: a CLI session token, an accepted key of no
    family, a rate-limited key, the control token, and a key bound to another namespace."""
    fixtures = tmp_path / "secrets.yaml"
    fixtures.write_text(FIXTURES)
    config = StubConfig(fixture_paths=(fixtures,), control_token=CONTROL_TOKEN)
    client = await aiohttp_client(create_app(config))
    bound = {"name": "other", "keys": [BOUND_KEY]}
    assert (await client.post("/_test/namespaces", json=bound, headers=CONTROL)).status == 201
    return client


async def sent_raw(client: TestClient[Any, Any], head: str, body: bytes = b"") -> bytes:
    """One request written byte for byte (a header name no HTTP library would write), its
    answer read until the stub closes the connection."""
    reader, writer = await asyncio.open_connection(client.server.host, client.server.port)
    writer.write(
        f"{head}Host: stub\r\nConnection: close\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    return answer


async def everything_shown(client: TestClient[Any, Any]) -> dict[str, str]:
    """What the stub shows of the default namespace's journal, by where a user reads it."""
    pages = {
        "summary": "/_test/requests",
        "in full": "/_test/requests?bodies=true",
        "one request": "/_test/requests/1",
        "inspector feed": "/_test/ui/feed",
        "snapshot": "/_test/ui/snapshot",
    }
    shown = {}
    for name, path in pages.items():
        answer = await client.get(path, headers=CONTROL)
        assert answer.status == 200, await answer.text()
        shown[name] = await answer.text()
    namespaces = client.app[NAMESPACES]
    shown["snapshot file"] = snapshot_page(namespaces, namespaces.default, DEFAULT, "http://s")
    return shown


class TestACliTokenInAHeaderName:
    async def test_the_header_name_shows_redacted_in_the_journal(
        self, stub: TestClient[Any, Any]
    ) -> None:
        answer = await sent_raw(
            stub,
            "POST /v1/flags/evaluate HTTP/1.1\r\n"
            f"X-Key{CLI_TOKEN}: y\r\nAuthorization: Bearer {RUNTIME_KEY}\r\n",
            b'{"targetingKey": "u"}',
        )
        assert answer.startswith(b"HTTP/1.1 200")

        (entry,) = (await (await stub.get("/_test/requests", headers=CONTROL)).json())["requests"]
        assert entry["headers"]["x-key[redacted]"] == "y"
        assert MARKER not in json.dumps(entry)

    async def test_no_page_and_no_file_shows_it(self, stub: TestClient[Any, Any]) -> None:
        await sent_raw(stub, f"GET /v1/whoami HTTP/1.1\r\nX-Key{CLI_TOKEN}: y\r\n")

        for where, text in (await everything_shown(stub)).items():
            assert "[redacted]" in text, where
            assert MARKER not in text, where


class TestEverySecretTheStubKnows:
    @pytest.mark.parametrize(
        "secret",
        [CLI_TOKEN, RUNTIME_KEY, RATED_KEY, CONTROL_TOKEN, BOUND_KEY],
        ids=["cli-token", "accepted-key", "rate-limited-key", "control-token", "bound-key"],
    )
    async def test_is_hidden_in_header_names_and_values_path_query_body_and_answer(
        self, stub: TestClient[Any, Any], secret: str
    ) -> None:
        auth = f"Authorization: Bearer {RUNTIME_KEY}\r\n"
        body = json.dumps({"targetingKey": secret, "flagKeys": [secret]}).encode()
        evaluated = await sent_raw(
            stub,
            f"POST /v1/flags/evaluate?who={secret} HTTP/1.1\r\n{auth}"
            f"X-Key{secret}: y\r\nX-Note: sent by {secret} today\r\n"
            "Content-Type: application/json\r\n",
            body,
        )
        assert secret.encode() in evaluated  # the answer echoes the unknown flag key
        await sent_raw(stub, f"GET /v1/{secret}/flags HTTP/1.1\r\n{auth}")

        for where, text in (await everything_shown(stub)).items():
            assert MARKER not in text, where

    async def test_a_family_is_still_shown_and_a_secret_of_none_is_redacted_alone(
        self, stub: TestClient[Any, Any]
    ) -> None:
        note = f"X-Note: {BOUND_KEY} and {CLI_TOKEN}\r\n"
        await sent_raw(stub, f"GET /v1/whoami HTTP/1.1\r\n{note}")

        (entry,) = (await (await stub.get("/_test/requests", headers=CONTROL)).json())["requests"]
        assert entry["headers"]["x-note"] == "project-api-key_[redacted] and [redacted]"

    async def test_percent_encoded_in_the_path_and_query_it_is_hidden_too(
        self, stub: TestClient[Any, Any]
    ) -> None:
        encoded = "".join(f"%{byte:02X}" for byte in CLI_TOKEN.encode())
        await sent_raw(stub, f"GET /v1/{encoded}?who={encoded} HTTP/1.1\r\n")

        full = await (await stub.get("/_test/requests/1", headers=CONTROL)).json()
        assert (full["path"], full["query"]) == ("/v1/[redacted]", {"who": "[redacted]"})
        for where, text in (await everything_shown(stub)).items():
            assert MARKER not in text, where
            assert encoded not in text, where

    async def test_a_recorded_event_in_the_inspector_hides_it(
        self, stub: TestClient[Any, Any]
    ) -> None:
        event = {"type": "signal", "name": CLI_TOKEN, CLI_TOKEN: "y"}
        headers = {"Authorization": f"Bearer {RUNTIME_KEY}"}
        assert (await stub.post("/v1/capture", json={"events": [event]}, headers=headers)).ok

        feed = await (await stub.get("/_test/ui/feed", headers=CONTROL)).json()
        assert feed["recorded"]["svcEvents"] == [
            {"type": "signal", "name": "[redacted]", "[redacted]": "y"}
        ]


class TestKnownSecrets:
    def test_the_longer_of_two_secrets_one_beginning_the_other_is_hidden_whole(self) -> None:
        known = KnownSecrets({"secret-1", "secret-12", "secret-13x"})
        assert known.in_text("secret-12 secret-1 secret-13x secret-1x") == (
            "[redacted] [redacted] [redacted] [redacted]x"
        )

    def test_bytes_and_text_alike(self) -> None:
        known = KnownSecrets({"svc_org_acme", "clitok-é-1"})
        assert known.in_bytes("a svc_org_acme, clitok-é-1".encode()) == (
            b"a svc_org_[redacted], [redacted]"
        )

    def test_a_secret_shorter_than_six_characters_is_not_looked_for_in_free_text(self) -> None:
        assert KnownSecrets({"k", "tok12"}).in_text("ask tok12 for a key") == (
            "ask tok12 for a key"
        )

    def test_secrets_each_beginning_the_next_hundreds_deep_are_still_found(self) -> None:
        secrets = {"a" * length for length in range(6, 3000)}
        assert KnownSecrets(secrets).in_text("b" + "a" * 2999 + "b") == "b[redacted]b"

    def test_with_no_secret_nothing_changes(self) -> None:
        assert KnownSecrets(set()).in_text("clitok_a_x") == "clitok_a_x"
