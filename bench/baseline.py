"""The 1.0 baseline: bare aiohttp that parses the request and encodes the same answer svc-stub
gives with the standard json module on every request, for evaluate, capture and the vendor's
/flags. With --fixed it answers each route's pre-encoded bytes instead (encoded once, with
orjson, as svc-stub encodes): the framework's ceiling. Prints the same ready line as svc-stub."""

import asyncio
import json
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.Response]]

DECISIONS = {
    "checkout-v2": {
        "flagKey": "checkout-v2",
        "found": True,
        "enabled": True,
        "value": "treatment-b",
        "variant": "treatment-b",
        "reason": "SPLIT",
        "flagMetadata": {"svc.flagVersion": 7, "fireweave.flagVersion": 7},
        "payload": None,
    },
    "pricing-page": {
        "flagKey": "pricing-page",
        "found": True,
        "enabled": True,
        "value": "annual-first",
        "variant": "annual-first",
        "reason": "SPLIT",
        "flagMetadata": {"svc.flagVersion": 2, "fireweave.flagVersion": 2},
        "payload": {"rolloutId": "r1", "headline": "Save 20% yearly"},
    },
}
VENDOR_FLAGS = {
    "checkout-v2": {
        "key": "checkout-v2",
        "enabled": True,
        "variant": "treatment-b",
        "reason": {
            "code": "condition_match",
            "condition_index": 0,
            "description": "Condition set 1 matched",
        },
        "metadata": {"id": 4, "version": 7, "payload": None},
    },
}
"""svc-stub's v2 `/flags` record of the default fixtures' checkout-v2."""
REQUEST_ID = "00000000-0000-4000-8000-000000000001"


def json_answer(answer: Any) -> web.Response:
    return web.Response(body=json.dumps(answer).encode(), content_type="application/json")


async def evaluate(request: web.Request) -> web.Response:
    body = json.loads(await request.read())
    decisions = [DECISIONS[key] for key in body["flagKeys"] if key in DECISIONS]
    return json_answer({"decisions": decisions, "requestId": REQUEST_ID, "quotaLimited": False})


async def capture(request: web.Request) -> web.Response:
    events = json.loads(await request.read())["events"]
    if not isinstance(events, list):
        raise web.HTTPBadRequest()
    return json_answer({"ok": True, "accepted": len(events)})


async def flags(request: web.Request) -> web.Response:
    body = json.loads(await request.read())
    keys = body.get("flag_keys_to_evaluate") or list(VENDOR_FLAGS)
    return json_answer(
        {
            "flags": {key: VENDOR_FLAGS[key] for key in keys if key in VENDOR_FLAGS},
            "errorsWhileComputingFlags": False,
            "quotaLimited": None,
            "requestId": REQUEST_ID,
        }
    )


def fixed(answer: Any) -> Handler:
    """A handler that reads the request and answers `answer`, encoded once here."""
    encoded = orjson.dumps(answer)

    async def handler(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=encoded, content_type="application/json")

    return handler


FIXED = {
    "/v1/flags/evaluate": fixed(
        {"decisions": list(DECISIONS.values()), "requestId": REQUEST_ID, "quotaLimited": False}
    ),
    "/v1/capture": fixed({"ok": True, "accepted": 1}),
    "/flags": fixed(
        {
            "flags": VENDOR_FLAGS,
            "errorsWhileComputingFlags": False,
            "quotaLimited": None,
            "requestId": REQUEST_ID,
        }
    ),
}
"""The ceiling's answers: what the bench's requests (bench/harness/client.py) are answered."""
BUILT: dict[str, Handler] = {
    "/v1/flags/evaluate": evaluate,
    "/v1/capture": capture,
    "/flags": flags,
}


async def health(request: web.Request) -> web.Response:
    return web.Response(body=b'{"ok": true}', content_type="application/json")


async def main() -> None:
    app = web.Application()
    for path, handler in (FIXED if "--fixed" in sys.argv else BUILT).items():
        app.router.add_post(path, handler)
    app.router.add_get("/health", health)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    await site.start()
    print(f"svc-stub listening on http://127.0.0.1:{runner.addresses[0][1]}", flush=True)
    await stop.wait()
    await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
