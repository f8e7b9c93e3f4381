"""The `svc-stub` command's entry point, apart from the command itself so that it can set up
start-up before anything heavy is imported.

Start-up builds tens of thousands of objects that live as long as the process (aiohttp, the
planes, the parsed fixtures) and frees almost none, so a collection during it is wasted work:
about 13 ms, a sixteenth of a start. The command turns the collector back on once the app is
built, with what start-up built frozen out of later collections (see cli.py).

aiohttp's client side (sessions, connectors, and the two SSL contexts its import builds) is
left out until something asks for it (proxy mode, `record`, `verify`): see stub/http/client_side.py.
"""

from __future__ import annotations

import gc


def main() -> None:
    gc.disable()
    from stub.http.client_side import defer_client

    defer_client()
    from stub.cli import main as command

    command()
