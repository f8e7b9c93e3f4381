"""The 1.0 baseline: bare aiohttp that parses the request and encodes the same answer with the
standard json module on every request. With --fixed it answers pre-encoded bytes instead: the
framework's ceiling. Prints the same ready line as svc-stub."""

import asyncio
import json
import signal
import sys

from aiohttp import web

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


async def evaluate(request: web.Request) -> web.Response:
    body = json.loads(await request.read())
    decisions = [DECISIONS[key] for key in body["flagKeys"] if key in DECISIONS]
    answer = {
        "decisions": decisions,
        "requestId": "00000000-0000-4000-8000-000000000001",
        "quotaLimited": False,
    }
    return web.Response(body=json.dumps(answer).encode(), content_type="application/json")


FIXED = json.dumps(
    {"decisions": list(DECISIONS.values()), "requestId": "x", "quotaLimited": False}
).encode()


async def fixed(request: web.Request) -> web.Response:
    await request.read()
    return web.Response(body=FIXED, content_type="application/json")


async def health(request: web.Request) -> web.Response:
    return web.Response(body=b'{"ok": true}', content_type="application/json")


async def main() -> None:
    app = web.Application()
    app.router.add_post("/v1/flags/evaluate", fixed if "--fixed" in sys.argv else evaluate)
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
