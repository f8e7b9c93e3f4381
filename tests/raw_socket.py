"""Raw-socket exchanges: what a fault puts on the wire, and how the connection ends."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from aiohttp.test_utils import TestClient

from conftest import HANG_GUARD_S

Ending = Literal["eof", "reset", "timeout"]


@dataclass
class Exchange:
    head: bytes
    body: bytes
    ending: Ending
    chunks: int

    @property
    def content_length(self) -> int | None:
        for line in self.head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                return int(value)
        return None


async def raw_exchange(
    client: TestClient[Any, Any],
    *,
    fault: str,
    params: dict[str, str] | None = None,
    path: str = "/v1/flags/evaluate",
    read_timeout: float = HANG_GUARD_S,
    once_sent: Callable[[], Awaitable[object]] | None = None,
) -> Exchange:
    """One POST with `X-Svc-Test-Fault`, read until the server ends it or `read_timeout`.

    By default `read_timeout` only guards a hang (the server never ending the exchange), not a
    speed budget: a busy machine may take seconds to dribble out a slow body. A test of a
    client that gives up passes its own short `read_timeout`, which is then the thing tested,
    and `once_sent`, awaited once the request is written and before the reading begins (e.g.
    until the stub is serving it), so that a busy machine cannot make the client leave before
    the stub has even read the request.
    """
    host, port = client.server.host, client.server.port
    reader, writer = await asyncio.open_connection(host, port)
    body = json.dumps({"targetingKey": "u1", "flagKeys": ["new-checkout"]}).encode()
    extra = "".join(f"X-Svc-Test-{name}: {value}\r\n" for name, value in (params or {}).items())
    writer.write(
        (
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer k\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            f"X-Svc-Test-Fault: {fault}\r\n{extra}\r\n"
        ).encode()
        + body
    )
    await writer.drain()
    if once_sent is not None:
        await once_sent()
    received, chunks = b"", 0
    ending: Ending = "eof"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + read_timeout
    try:
        while True:
            chunk = await asyncio.wait_for(reader.read(65536), deadline - loop.time())
            if not chunk:
                break
            received += chunk
            chunks += 1
            if _complete(received):
                break
    except ConnectionResetError:
        ending = "reset"
    except TimeoutError:
        ending = "timeout"
    finally:
        writer.close()
    head, _, rest = received.partition(b"\r\n\r\n")
    return Exchange(head=head, body=rest, ending=ending, chunks=chunks)


def _complete(received: bytes) -> bool:
    """A whole response arrived (keep-alive would otherwise leave us waiting for EOF)."""
    head, separator, body = received.partition(b"\r\n\r\n")
    if not separator:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return False
