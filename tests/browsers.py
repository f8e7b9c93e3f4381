"""A real browser for the tests of what a page does: Debian's headless Chromium, driven by
Playwright on the system's browser (nothing is downloaded).

Where no Chromium is installed a module that needs it is skipped with one line that says how
to install it; `.ci/run` installs it, so CI always runs those tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from playwright.sync_api import Browser, sync_playwright

CHROMIUM = next(
    (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
)


def require_chromium(purpose: str) -> None:
    """Skips the calling module when there is no Chromium to run its tests."""
    if CHROMIUM is None:
        pytest.skip(
            f"no Chromium for {purpose}: apt-get install -y chromium", allow_module_level=True
        )


@contextmanager
def chromium(*arguments: str) -> Iterator[Browser]:
    """Headless Chromium, started with these command-line switches besides the sandbox's."""
    assert CHROMIUM is not None
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", *arguments]
        )
        try:
            yield launched
        finally:
            launched.close()
