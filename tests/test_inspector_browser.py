"""The inspector page in a real browser: headless Chromium, driven by Playwright, against a
started stub that the published fireweave client calls.

Where no Chromium is installed these tests are skipped with one line that says how to install
it; `.ci/run` installs it, so CI always runs them. The docs' screenshot of the page is checked
here against the page as it is now; `SVC_STUB_UPDATE_SCREENSHOTS=1` writes it into docs/assets.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import urllib.parse
import urllib.request
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fireweave import EvaluationContext, FlagType
from playwright.sync_api import Browser, Page, Route, expect

from browsers import chromium, require_chromium
from conftest import HANG_GUARD_S, OpenFireweave, SpawnedStub, spawn_stub
from stub.client import StubClient
from stub.config import DEFAULT_PORT

require_chromium("the inspector's browser tests")

SCREENSHOT = Path(__file__).resolve().parent.parent / "docs" / "assets" / "inspector.png"
USER = EvaluationContext(targeting_key="user-42")
FLAG = "checkout-v2"
ROWS = "#requests tbody tr"
CLIENT_TIMEOUT_MS = HANG_GUARD_S * 1000
"""The client's timeout: a guard against a hang, not a speed budget a busy machine can miss."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def stub() -> Iterator[SpawnedStub]:
    with spawn_stub(read_log=False) as started:
        yield started


class Inspector:
    """One test's namespace: its control client, the page on it, and every URL the page
    asked for."""

    def __init__(self, browser: Browser, stub: SpawnedStub, name: str, **context: Any) -> None:
        self.control = StubClient(stub.url).create_namespace(name)
        self.url = self.control.url  # where clients reach this namespace
        self.origin = stub.url
        self.context = browser.new_context(viewport={"width": 1280, "height": 860}, **context)
        self.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=stub.url)
        self.page: Page = self.context.new_page()
        self.asked: list[str] = []
        self.page.on("request", lambda request: self.asked.append(request.url))
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def open(self) -> Page:
        self.page.goto(f"{self.url}/_test/ui")
        expect(self.page.locator("#status")).to_have_text("live")
        return self.page

    def close(self) -> None:
        self.context.close()
        self.control.delete_namespace()
        assert self.errors == []
        assert self.asked
        assert all(url.startswith(self.origin + "/") for url in self.asked)


@pytest.fixture
def inspector(
    browser: Browser, stub: SpawnedStub, request: pytest.FixtureRequest
) -> Iterator[Inspector]:
    opened = Inspector(browser, stub, request.node.name.replace("_", "-")[:60])
    yield opened
    opened.close()


def tab(page: Page, name: str) -> None:
    page.click(f"#tabs button[data-tab={name}]")


class TestLive:
    def test_a_real_clients_requests_appear_without_a_reload_faults_and_all(
        self, inspector: Inspector, open_fireweave: OpenFireweave
    ) -> None:
        page = inspector.open()
        expect(page.locator(ROWS)).to_have_count(0)
        expect(page.locator("#journal-note")).to_contain_text("no requests yet")
        _, _, client = open_fireweave(inspector.url, "fw-key", CLIENT_TIMEOUT_MS)
        inspector.control.arm("500", apply_to="evaluate", ttl_requests=1)

        failed = client.control_points.get_details(FLAG, FlagType.STRING, "fallback", USER)
        served = client.control_points.get_details(FLAG, FlagType.STRING, "fallback", USER)

        assert (failed.value, served.value) == ("fallback", "treatment-b")
        rows = page.locator(ROWS)
        expect(rows).to_have_count(2)
        expect(rows.nth(0).locator("td").nth(4)).to_have_text("200")
        expect(rows.nth(1).locator("td").nth(4)).to_have_text("500")
        expect(rows.nth(1).locator("td").nth(6)).to_have_text("500 (armed #1)")
        expect(rows.nth(1).locator("td").nth(3)).to_have_text("evaluate")
        expect(page.locator("#journal-note")).not_to_contain_text("no requests yet")

    def test_filters_keep_what_they_name(
        self, inspector: Inspector, open_fireweave: OpenFireweave
    ) -> None:
        page = _a_500_two_reads_and_a_typo(inspector, open_fireweave)
        rows = page.locator(ROWS)
        expect(rows).to_have_count(4)

        page.select_option("#filter-status", "5xx")
        expect(rows).to_have_count(1)
        page.select_option("#filter-status", "")
        page.select_option("#filter-fault", "none")
        expect(rows).to_have_count(3)
        page.select_option("#filter-fault", "")
        page.select_option("#filter-route", "unknown")
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("did you mean POST /v1/flags/evaluate?")
        page.select_option("#filter-route", "")
        page.fill("#filter-text", "no-such-thing")
        expect(rows).to_have_count(0)
        page.fill("#filter-text", "armed #1")
        expect(rows).to_have_count(1)
        page.fill("#filter-text", "Bearer [REDACTED]")
        expect(rows).to_have_count(3)  # by what the client sent: its headers, in any case
        page.fill("#filter-text", "")
        expect(rows).to_have_count(4)

    def test_a_request_opens_in_full_and_its_curl_runs(
        self, inspector: Inspector, open_fireweave: OpenFireweave
    ) -> None:
        page = inspector.open()
        exposures = [
            {"type": "exposure", "targetingKey": f"user-{i}", "flagKey": FLAG, "value": "v" * 50}
            for i in range(300)
        ]
        _post(inspector.url + "/v1/capture", {"events": exposures})
        page.locator(ROWS).first.click()

        shown = page.locator("#request-body")
        expect(shown).to_contain_text('"targetingKey": "user-299"')
        assert json.loads(shown.inner_text()) == {"events": exposures}  # 25 KB, never cut
        expect(page.locator("#answer-body")).to_contain_text('"accepted": 300')

        page.click("#copy-curl")
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied == page.locator("#curl").inner_text()
        assert "Bearer [redacted]" in copied
        ran = subprocess.run(["bash", "-c", copied], capture_output=True, text=True, timeout=30)
        assert json.loads(ran.stdout) == {"ok": True, "accepted": 300}
        assert inspector.control.svc_events() == exposures + exposures
        expect(page.locator(ROWS)).to_have_count(2)

    def test_disarming_a_fault_with_its_button_serves_the_next_request(
        self, inspector: Inspector, open_fireweave: OpenFireweave
    ) -> None:
        page = inspector.open()
        _, _, client = open_fireweave(inspector.url, "fw-key", CLIENT_TIMEOUT_MS)
        inspector.control.arm("status", apply_to="evaluate", status=503)
        assert client.control_points.get_string_value(FLAG, "fallback", USER) == "fallback"
        tab(page, "faults")
        armed = page.locator("#faults tbody tr")
        expect(armed).to_have_count(1)
        expect(armed.first.locator("td").nth(3)).to_have_text("1")  # fired once

        armed.first.locator("button.disarm").click()

        expect(armed).to_have_count(0)
        assert client.control_points.get_string_value(FLAG, "fallback", USER) == "treatment-b"
        tab(page, "requests")
        expect(page.locator(ROWS).first.locator("td").nth(4)).to_have_text("200")

    def test_the_form_arms_a_fault_with_the_control_planes_checks(
        self, inspector: Inspector
    ) -> None:
        page = inspector.open()
        tab(page, "faults")
        page.select_option("#arm-mode", "500")
        page.fill("#arm-applyTo", "evaluat, capture")
        page.click("#arm button[type=submit]")
        expect(page.locator("#arm-result")).to_contain_text("applyTo: unknown selector 'evaluat'")
        assert inspector.control.armed() == []

        page.fill("#arm-applyTo", "evaluate, capture")
        page.fill("#arm-ttlRequests", "2")
        page.click("#arm button[type=submit]")
        expect(page.locator("#arm-result")).to_have_text("armed #1")
        (armed,) = inspector.control.armed()
        assert (armed.mode, armed.apply_to, armed.ttl_requests) == (
            "500",
            ("capture", "evaluate"),
            2,
        )
        expect(page.locator("#faults tbody tr")).to_have_count(1)

    def test_the_form_starts_with_a_mode_and_a_fault_shows_only_what_its_mode_uses(
        self, inspector: Inspector
    ) -> None:
        page = inspector.open()
        tab(page, "faults")
        expect(page.locator("#arm-mode")).to_have_value("500")
        page.click("#arm button[type=submit]")  # nothing chosen: the mode shown is the one armed
        expect(page.locator("#arm-result")).to_have_text("armed #1")
        inspector.control.arm("429", apply_to="capture")
        inspector.control.arm("delay", apply_to="register", delay_ms=50)
        described = page.locator("#faults tbody tr td:nth-child(3)")
        expect(described).to_have_text(["500", "429 (retryAfter 1)", "delay (delayMs 50)"])

    def test_what_clients_recorded_is_shown_decoded(
        self, inspector: Inspector, open_fireweave: OpenFireweave
    ) -> None:
        page = inspector.open()
        adapter, _, client = open_fireweave(inspector.url, "fw-key", CLIENT_TIMEOUT_MS)
        client.exposures.record("user-42", FLAG, "treatment-b", "treatment-b")
        client.exposures.flush()
        adapter.flush()
        _post(inspector.url + "/v1/targets/register", {"targetingKey": "user-42", "kind": "user"})
        tab(page, "recorded")

        recorded = page.locator("#tab-recorded")
        expect(recorded).to_contain_text("Exposures (1)")
        expect(recorded.locator("table").first).to_contain_text("user-42")
        expect(recorded).to_contain_text("Targets (1)")
        tab(page, "served")
        expect(page.locator("#tab-served")).to_contain_text(FLAG)
        tab(page, "namespaces")
        link = page.locator(f"#tab-namespaces a[href='/ns/{inspector.control.namespace}/_test/ui']")
        expect(link).to_have_count(1)

    def test_the_coverage_tab_puts_the_gaps_first_and_a_cell_picks_out_its_requests(
        self, inspector: Inspector, open_fireweave: OpenFireweave
    ) -> None:
        page = _a_500_two_reads_and_a_typo(inspector, open_fireweave)
        expect(page.locator(ROWS)).to_have_count(4)
        tab(page, "coverage")

        expect(page.locator("#count-coverage")).to_have_text("2/15")
        expect(page.locator("#coverage-summary")).to_contain_text("2 of 15 cells met, 13 gaps")
        gaps = page.locator("#coverage-gaps li")
        expect(gaps).to_have_count(13)
        expect(gaps.first).to_contain_text("evaluate never met a 401 (expected: 401 or fault 401)")
        flags = page.locator("#coverage-flags")
        expect(flags).to_contain_text(re.compile(r"^fixture flags: 1 of \d+ read; never read: "))
        expect(flags.locator("code", has_text="dark-mode")).to_have_count(1)
        expect(flags.locator("code", has_text=FLAG)).to_have_count(0)  # the one evaluated
        rows = page.locator("#coverage tbody tr")
        expect(rows.locator("th")).to_have_text(["evaluate", "capture", "unknown path"])
        evaluate = rows.first
        expect(evaluate.locator("td[data-outcome='ok']")).to_have_text("2")
        expect(evaluate.locator("td[data-outcome='ok']")).to_have_class("heat-2")
        unmet = evaluate.locator("td[data-outcome='401']")
        expect(unmet).to_have_class("gap")
        expect(unmet).to_have_attribute("title", "evaluate never met a 401")
        expect(unmet.locator("button")).to_have_count(0)  # nothing to pick out

        evaluate.locator("td[data-outcome='fault 500'] button").click()

        expect(page.locator("#tab-requests")).to_be_visible()
        expect(page.locator("#filter-route")).to_have_value("evaluate")
        expect(page.locator("#filter-outcome")).to_have_value("fault 500")
        picked = page.locator(ROWS)
        expect(picked).to_have_count(1)
        expect(picked.first.locator("td").nth(6)).to_have_text("500 (armed #1)")
        tab(page, "coverage")
        rows.last.locator("td[data-outcome='404'] button").click()
        expect(page.locator("#filter-route")).to_have_value("unknown")
        expect(picked).to_have_count(1)
        expect(picked.first).to_contain_text("did you mean POST /v1/flags/evaluate?")

    def test_a_cell_whose_requests_a_reset_let_go_says_so(self, inspector: Inspector) -> None:
        page = inspector.open()
        _post(inspector.url + "/v1/capture", {"events": []})
        expect(page.locator(ROWS)).to_have_count(1)
        inspector.control.reset()
        expect(page.locator(ROWS)).to_have_count(0)
        tab(page, "coverage")

        page.locator("#coverage td[data-outcome='ok'] button").click()  # the count outlives it

        expect(page.locator("#filter-outcome")).to_have_value("ok")
        expect(page.locator(ROWS)).to_have_count(0)
        expect(page.locator("#journal-note")).to_contain_text(
            "ok counted 1: the journal no longer keeps 1 of them"
        )
        page.select_option("#filter-route", "")
        expect(page.locator("#journal-note")).not_to_contain_text("no longer keeps")

    def test_a_count_started_afresh_redraws_the_tab(self, inspector: Inspector) -> None:
        page = inspector.open()
        _post(inspector.url + "/v1/capture", {"events": []})
        tab(page, "coverage")
        expect(page.locator("#count-coverage")).to_have_text("1/15")

        request = urllib.request.Request(inspector.url + "/_test/coverage", method="DELETE")
        urllib.request.urlopen(request, timeout=HANG_GUARD_S).close()

        expect(page.locator("#count-coverage")).to_have_text("0/15")
        expect(page.locator("#coverage-note")).to_contain_text("no requests counted yet")

    def test_pause_holds_the_view_until_resumed(self, inspector: Inspector) -> None:
        page = inspector.open()
        page.click("#pause")
        _get(inspector.url + "/v1/nowhere")
        expect(page.locator("#status")).to_have_text("paused (1 new)")
        page.wait_for_timeout(1500)  # the page keeps looking: each look is of what is newer
        expect(page.locator("#status")).to_have_text("paused (1 new)")
        expect(page.locator(ROWS)).to_have_count(0)

        page.click("#pause")
        expect(page.locator(ROWS)).to_have_count(1)


def test_with_a_control_token_the_page_asks_for_it_once(browser: Browser) -> None:
    with spawn_stub("--control-token", "sesame", read_log=False) as stub:
        context = browser.new_context()
        page = context.new_page()
        page.goto(stub.url + "/_test/ui")
        expect(page.locator("#token-form")).to_be_visible()
        page.fill("#token", "sesame")
        page.click("#token-form button")
        expect(page.locator("#status")).to_have_text("live")
        _get(stub.url + "/v1/nowhere")
        expect(page.locator(ROWS)).to_have_count(1)
        page.reload()
        expect(page.locator("#status")).to_have_text("live")  # asked once: kept for the tab
        context.close()


def test_a_snapshot_opens_with_no_stub_running(browser: Browser, tmp_path: Path) -> None:
    with spawn_stub(read_log=False) as stub:
        _post(stub.url + "/v1/capture", {"events": [{"type": "signal", "name": "health"}]})
        _get(stub.url + "/v1/nowhere")
        saved = tmp_path / "journal.html"
        saved.write_text(StubClient(stub.url).snapshot())
    context = browser.new_context()
    page = context.new_page()
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(saved.as_uri())

    expect(page.locator("#status")).to_contain_text("snapshot of http://127.0.0.1:")
    rows = page.locator(ROWS)
    expect(rows).to_have_count(2)
    rows.nth(1).click()
    expect(page.locator("#request-body")).to_contain_text('"name": "health"')
    expect(page.locator("#curl")).to_contain_text("curl -sS --globoff -X POST")
    expect(page.locator("#pause")).to_be_hidden()
    tab(page, "coverage")  # the coverage is in the file too, each cell picking its requests
    expect(page.locator("#coverage-summary")).to_contain_text("1 of 15 cells met")
    page.locator("#coverage tr[data-route='unknown path'] td[data-outcome='404'] button").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("/v1/nowhere")
    assert asked == [saved.as_uri()]
    context.close()


@pytest.fixture
def own_stub() -> Iterator[SpawnedStub]:
    """A stub of the test's own: nothing another test left (a namespace, a count) shows."""
    with spawn_stub(read_log=False) as started:
        yield started


def test_the_docs_screenshot_is_of_the_real_page(
    browser: Browser, own_stub: SpawnedStub, open_fireweave: OpenFireweave, tmp_path: Path
) -> None:
    """The picture in docs/guides/inspector.md is the page as it is now: the page is set up
    with a little of everything, photographed, and the photo compared with the committed one
    pixel by pixel. `SVC_STUB_UPDATE_SCREENSHOTS=1` writes the new photo there instead."""
    inspector = Inspector(browser, own_stub, "checkout-tests", **STILL_CONTEXT)
    try:
        taken = _take_the_screenshot(inspector, open_fireweave, tmp_path)
    finally:
        inspector.page.unroute_all(behavior="ignoreErrors")  # a feed long-poll may be pending
        inspector.close()
    if os.environ.get("SVC_STUB_UPDATE_SCREENSHOTS") == "1":
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(taken, SCREENSHOT)
    assert SCREENSHOT.exists(), f"no {SCREENSHOT.name} yet: {UPDATE_HOW}"
    differing = _differing_pixels(_Picture.read(taken), _Picture.read(SCREENSHOT))
    assert differing is None, (
        f"docs/assets/{SCREENSHOT.name} is not the page as it is now: {differing}; the page as "
        f"it is now: {taken}. If the change is meant: {UPDATE_HOW}"
    )


def _take_the_screenshot(
    inspector: Inspector, open_fireweave: OpenFireweave, tmp_path: Path
) -> Path:
    _hold_still(inspector.page, inspector.origin)
    page = inspector.open()
    adapter, _, client = open_fireweave(inspector.url, "fw-key", CLIENT_TIMEOUT_MS)
    inspector.control.arm("429", apply_to="evaluate", ttl_requests=1)
    for flag in (FLAG, "new-checkout", FLAG):
        client.control_points.get_details(flag, FlagType.STRING, "fallback", USER)
    client.exposures.record("user-42", FLAG, "treatment-b", "treatment-b")
    client.exposures.flush()
    adapter.flush()
    _get(inspector.url + "/v1/flags/evaluat")
    expect(page.locator(ROWS)).to_have_count(5)
    expect(page.locator("#count-recorded")).to_have_text("1")
    page.locator(ROWS).nth(3).click()
    expect(page.locator("#answer-body")).to_be_visible()
    expect(page.locator("#requests tbody tr.open td").first).to_have_text("09:30:01.504")

    taken = tmp_path / "inspector.png"
    page.screenshot(path=str(taken), full_page=True, animations="disabled", caret="hide")
    return taken


# ---- the page held still for its picture
#
# What the page draws is the stub's own, but for what differs from one run to the next: the
# wall clock (the times of the requests, the answer's Date), how long each request took, and
# the port the system gave the stub (the Host header, the curl line). The test rewrites just
# those in what the stub sends the page, to what they would be at one fixed moment on the
# stub's default port; the browser's time zone, locale and colour scheme are fixed too.

STILL_CONTEXT: dict[str, Any] = {
    "timezone_id": "UTC",
    "locale": "en-US",
    "color_scheme": "light",
    "device_scale_factor": 1,
    "reduced_motion": "reduce",
}
STILL_STARTED_AT = 1767605400000  # 2026-01-05 09:30:00 UTC, in ms
STILL_DATE = "Mon, 05 Jan 2026 09:30:01 GMT"
STILL_HOST = f"127.0.0.1:{DEFAULT_PORT}"
FED = re.compile(r"/_test/(ui/feed|requests/[0-9]+)([?]|$)")
UPDATE_HOW = "SVC_STUB_UPDATE_SCREENSHOTS=1 pytest tests/test_inspector_browser.py -k screenshot"


def _hold_still(page: Page, origin: str) -> None:
    """Rewrites the clock, durations and port in the JSON the page fetches (its feed and a
    request in full) as they pass."""
    host = urllib.parse.urlsplit(origin).netloc

    def still(document: Any) -> Any:
        if isinstance(document, list):
            return [still(item) for item in document]
        if isinstance(document, str):
            return document.replace(host, STILL_HOST)
        if not isinstance(document, dict):
            return document
        held = {name: still(value) for name, value in document.items()}
        if "startedAt" in held:
            held["startedAt"] = STILL_STARTED_AT
        if "arrivedMs" in held:
            held["arrivedMs"] = 1500.0 + 2 * held["seq"]  # a request every two ms
        if "durationMs" in held:
            held["durationMs"] = 0.2 + 0.1 * (held.get("seq", 0) % 3)
        if "Date" in held:
            held["Date"] = STILL_DATE
        return held

    def rewrite(route: Route) -> None:
        answer = route.fetch()
        if answer.ok and answer.headers.get("content-type", "").startswith("application/json"):
            route.fulfill(response=answer, json=still(answer.json()))
        else:
            route.fulfill(response=answer)

    page.route(FED, rewrite)


# ---- comparing two pictures: PNG decoded with zlib (no imaging library among the test deps)

# Same machine, same picture: every pixel is equal, run after run. The slack is for what may
# differ without the page having changed: a Chromium release that anti-aliases a glyph edge
# a little differently (a channel off by a few levels), or the versions in the Server and
# User-Agent values (a digit or two). A moved column, a new row or a changed label differs in
# far more pixels than that. Other fonts (the page asks for system-ui, sans-serif and
# monospace: DejaVu on Debian, as in CI) draw every glyph differently and fail the
# comparison: take the picture on a Debian machine.
CHANNEL_SLACK = 24  # levels out of 255 a channel may differ by and still count as equal
PIXELS_SLACK = 400  # pixels that may differ by more (about 0.03% of the 1280 x 1151 picture)


@dataclass(frozen=True)
class _Picture:
    width: int
    height: int
    rows: list[bytes]
    """Each row's pixels, `channels` bytes each (RGB or RGBA, 8 bits a channel)."""
    channels: int

    @classmethod
    def read(cls, path: Path) -> _Picture:
        data = path.read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n"), f"{path} is not a PNG"
        header, compressed, at = b"", [], 8
        while at < len(data):
            (length,) = struct.unpack(">I", data[at : at + 4])
            kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
            if kind == b"IHDR":
                header = body
            elif kind == b"IDAT":
                compressed.append(body)
            at += 12 + length
        width, height, depth, colour, _, _, interlaced = struct.unpack(">IIBBBBB", header)
        shape = (depth, colour, interlaced)
        assert shape in {(8, 2, 0), (8, 6, 0)}, f"{path}: not an 8-bit RGB(A) PNG: {shape}"
        channels = 3 if colour == 2 else 4
        return cls(
            width,
            height,
            _unfiltered(zlib.decompress(b"".join(compressed)), width * channels, channels),
            channels,
        )


def _unfiltered(raw: bytes, stride: int, channels: int) -> list[bytes]:
    """The rows of a PNG's pixels, each row's filter (None, Sub, Up, Average, Paeth) undone."""
    rows: list[bytes] = []
    above = bytearray(stride)
    for start in range(0, len(raw), stride + 1):
        kind, row = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 1:
            for i in range(channels, stride):
                row[i] = (row[i] + row[i - channels]) & 0xFF
        elif kind == 2:
            row = bytearray((a + b) & 0xFF for a, b in zip(row, above, strict=True))
        elif kind == 3:
            for i in range(stride):
                left = row[i - channels] if i >= channels else 0
                row[i] = (row[i] + ((left + above[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                left = row[i - channels] if i >= channels else 0
                corner = above[i - channels] if i >= channels else 0
                guess = left + above[i] - corner
                far_left, far_up, far_corner = (
                    abs(guess - left),
                    abs(guess - above[i]),
                    abs(guess - corner),
                )
                if far_left <= far_up and far_left <= far_corner:
                    nearest = left
                elif far_up <= far_corner:
                    nearest = above[i]
                else:
                    nearest = corner
                row[i] = (row[i] + nearest) & 0xFF
        rows.append(bytes(row))
        above = row
    return rows


def _differing_pixels(taken: _Picture, kept: _Picture) -> str | None:
    """None when the pictures are the same within the slack; else what differs and where."""
    if (taken.width, taken.height) != (kept.width, kept.height):
        return f"{taken.width}x{taken.height} pixels now, {kept.width}x{kept.height} committed"
    differing, left, top, right, bottom = 0, taken.width, taken.height, -1, -1
    for y, (now, then) in enumerate(zip(taken.rows, kept.rows, strict=True)):
        if now == then and taken.channels == kept.channels:
            continue
        for x in range(taken.width):
            a, b = x * taken.channels, x * kept.channels
            if any(abs(now[a + c] - then[b + c]) > CHANNEL_SLACK for c in range(3)):
                differing += 1
                left, top, right, bottom = min(left, x), min(top, y), max(right, x), max(bottom, y)
    if differing <= PIXELS_SLACK:
        return None
    return (
        f"{differing} of {taken.width * taken.height} pixels differ (at most {PIXELS_SLACK} "
        f"may), within x {left}..{right}, y {top}..{bottom}"
    )


def _a_500_two_reads_and_a_typo(inspector: Inspector, open_fireweave: OpenFireweave) -> Page:
    """The page open while fireweave reads a flag three times, the first met by an armed 500,
    and a misspelt path is asked for: four requests."""
    page = inspector.open()
    _, _, client = open_fireweave(inspector.url, "fw-key", CLIENT_TIMEOUT_MS)
    inspector.control.arm("500", apply_to="evaluate", ttl_requests=1)
    for _ in range(3):
        client.control_points.get_details(FLAG, FlagType.STRING, "fallback", USER)
    _get(inspector.url + "/v1/flags/evaluat")
    return page


def _get(url: str) -> None:
    try:
        urllib.request.urlopen(url, timeout=HANG_GUARD_S).close()
    except urllib.error.HTTPError as answer:
        answer.close()


def _post(url: str, body: Any) -> None:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Authorization": "Bearer fw-key"}
    )
    urllib.request.urlopen(request, timeout=HANG_GUARD_S).close()


def test_a_page_opened_before_its_namespace_waits_for_it(
    browser: Browser, stub: SpawnedStub
) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(stub.url + "/ns/made-later/_test/ui")
    expect(page.locator("#status")).to_contain_text("no namespace 'made-later'")

    _get(stub.url + "/ns/made-later/v1/nowhere")

    expect(page.locator("#status")).to_have_text("live")
    expect(page.locator(ROWS)).to_have_count(1)
    StubClient(stub.url).delete_namespace("made-later")
    expect(page.locator("#status")).to_contain_text("waiting for it")

    for _ in range(2):  # made again: the page starts over with it
        _get(stub.url + "/ns/made-later/v1/nowhere")
    expect(page.locator("#status")).to_have_text("live")
    expect(page.locator(ROWS)).to_have_count(2)
    context.close()
