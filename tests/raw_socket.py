"""Raw-socket exchanges: what a fault puts on the wire, and how the connection ends."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Literal

from aiohttp.test_utils import TestClient

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
    read_timeout: float = 3.0,
) -> Exchange:
    """One POST with `X-Svc-Test-Fault`, read until the server ends it or `read_timeout`."""
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
