"""The inspector page in a real browser: headless Chromium, driven by Playwright, against a
started stub that the published fireweave client calls.

Where no Chromium is installed these tests are skipped with one line that says how to install
it; `.ci/run` installs it, so CI always runs them. The docs' screenshot of the page is taken
here: `SVC_STUB_UPDATE_SCREENSHOTS=1` writes it into docs/assets.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fireweave import EvaluationContext, FlagType
from playwright.sync_api import Browser, Page, expect

from browsers import chromium, require_chromium
from conftest import OpenFireweave, SpawnedStub, spawn_stub
from stub.client import StubClient

require_chromium("the inspector's browser tests")

SCREENSHOT = Path(__file__).resolve().parent.parent / "docs" / "assets" / "inspector.png"
USER = EvaluationContext(targeting_key="user-42")
FLAG = "checkout-v2"
ROWS = "#requests tbody tr"


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

    def __init__(self, browser: Browser, stub: SpawnedStub, name: str) -> None:
        self.control = StubClient(stub.url).create_namespace(name)
        self.url = self.control.url  # where clients reach this namespace
        self.origin = stub.url
        self.context = browser.new_context(viewport={"width": 1280, "height": 860})
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
        _, _, client = open_fireweave(inspector.url, "fw-key", 2000)
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

    def test_filters_keep_what_they_name(
        self, inspector: Inspector, open_fireweave: OpenFireweave
    ) -> None:
        page = inspector.open()
        _, _, client = open_fireweave(inspector.url, "fw-key", 2000)
        inspector.control.arm("500", apply_to="evaluate", ttl_requests=1)
        for _ in range(3):
            client.control_points.get_details(FLAG, FlagType.STRING, "fallback", USER)
        _get(inspector.url + "/v1/flags/evaluat")
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
        _, _, client = open_fireweave(inspector.url, "fw-key", 2000)
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

    def test_what_clients_recorded_is_shown_decoded(
        self, inspector: Inspector, open_fireweave: OpenFireweave
    ) -> None:
        page = inspector.open()
        adapter, _, client = open_fireweave(inspector.url, "fw-key", 2000)
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
    assert asked == [saved.as_uri()]
    context.close()


def test_the_docs_screenshot_is_of_the_real_page(
    browser: Browser, stub: SpawnedStub, open_fireweave: OpenFireweave, tmp_path: Path
) -> None:
    """The picture in docs/guides/inspector.md, taken from a page with a little of everything;
    `SVC_STUB_UPDATE_SCREENSHOTS=1` writes it there."""
    inspector = Inspector(browser, stub, "checkout-tests")
    try:
        _take_the_screenshot(inspector, open_fireweave, tmp_path)
    finally:
        inspector.close()


def _take_the_screenshot(
    inspector: Inspector, open_fireweave: OpenFireweave, tmp_path: Path
) -> None:
    page = inspector.open()
    adapter, _, client = open_fireweave(inspector.url, "fw-key", 2000)
    inspector.control.arm("429", apply_to="evaluate", ttl_requests=1)
    for flag in (FLAG, "new-checkout", FLAG):
        client.control_points.get_details(flag, FlagType.STRING, "fallback", USER)
    client.exposures.record("user-42", FLAG, "treatment-b", "treatment-b")
    client.exposures.flush()
    adapter.flush()
    _get(inspector.url + "/v1/flags/evaluat")
    expect(page.locator(ROWS)).to_have_count(5)
    page.locator(ROWS).nth(3).click()
    expect(page.locator("#answer-body")).to_be_visible()

    taken = tmp_path / "inspector.png"
    page.screenshot(path=str(taken), full_page=True)
    assert taken.read_bytes().startswith(b"\x89PNG")
    if os.environ.get("SVC_STUB_UPDATE_SCREENSHOTS") == "1":
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(taken, SCREENSHOT)
    assert SCREENSHOT.read_bytes().startswith(b"\x89PNG"), "run with SVC_STUB_UPDATE_SCREENSHOTS=1"


def _get(url: str) -> None:
    try:
        urllib.request.urlopen(url, timeout=5).close()
    except urllib.error.HTTPError as answer:
        answer.close()


def _post(url: str, body: Any) -> None:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Authorization": "Bearer fw-key"}
    )
    urllib.request.urlopen(request, timeout=5).close()


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
