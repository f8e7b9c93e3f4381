"""The `svc-stub` command's entry point, apart from the command itself so that it can turn the
cyclic garbage collector off before anything heavy is imported.

Start-up builds tens of thousands of objects that live as long as the process (aiohttp, the
planes, the parsed fixtures) and frees almost none, so a collection during it is wasted work:
about 13 ms, a sixteenth of a start. The command turns the collector back on once the app is
built, with what start-up built frozen out of later collections (see cli.py).
"""

from __future__ import annotations

import gc


def main() -> None:
    gc.disable()
    from stub.cli import main as command

    command()
