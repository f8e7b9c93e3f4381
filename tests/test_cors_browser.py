"""The web client's world in a real browser: a page served from a second loopback origin calls
the stub with `fetch()`, as the web client library does, and reads every answer, faults
included; the same page cannot touch the control plane, unless its origin was named.

The page's origin is `http://localhost:<port>` and the stub's `http://127.0.0.1:<port>`: two
origins, so every call is cross-origin, and those with a key or a JSON body are preflighted.
"""

from __future__ import annotations

import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from browsers import chromium, require_chromium
from conftest import SpawnedStub, free_port, spawn_stub
from stub.client import StubClient

require_chromium("the web client's browser tests")

ROOT = Path(__file__).resolve().parent.parent

BROWSER_KEY = "svc_public_web"
VENDOR_KEY = "phc_web"
MAX_BODY = 4096
REBINDING_NAME = "rebind.test"
"""A name the browser resolves to 127.0.0.1, as a DNS-rebinding page's name would."""

FETCH = """async ([url, init]) => {
  try {
    const answer = await fetch(url, init);
    const headers = {};
    answer.headers.forEach((value, name) => { headers[name] = value; });
    return {status: answer.status, headers, body: await answer.text()};
  } catch (error) {
    return {error: String(error)};
  }
}"""
"""What a page reads of an answer: its status, the headers it may read, its body; or the
error a browser gives a page it may read nothing of."""


class _AppPage(http.server.BaseHTTPRequestHandler):
    """The application's origin: one empty page, as a dev server serves the app under test."""

    def do_GET(self) -> None:
        page = b"<!doctype html><title>app</title><p>the application under test</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def app_origin() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AppPage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://localhost:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def stub() -> Iterator[SpawnedStub]:
    keys = ("--api-key", BROWSER_KEY, "--api-key", VENDOR_KEY)
    with spawn_stub(*keys, "--max-body-bytes", str(MAX_BODY), read_log=False) as started:
        yield started


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium(f"--host-resolver-rules=MAP {REBINDING_NAME} 127.0.0.1") as launched:
        yield launched


@pytest.fixture
def page(browser: Browser, app_origin: str) -> Iterator[Page]:
    """The application's page, loaded from its own origin; every request it makes is kept."""
    context = browser.new_context()
    opened = context.new_page()
    opened.goto(app_origin + "/")
    yield opened
    context.close()


@pytest.fixture
def namespace(stub: SpawnedStub, request: pytest.FixtureRequest) -> Iterator[StubClient]:
    name = "web-" + request.node.name.replace("[", "-").replace("]", "").replace("_", "-")[-50:]
    control = StubClient(stub.url).create_namespace(name)
    yield control
    control.delete_namespace()


def call(page: Page, url: str, **init: Any) -> dict[str, Any]:
    answer: dict[str, Any] = page.evaluate(FETCH, [url, init])
    return answer


def post(page: Page, url: str, body: str, **headers: str) -> dict[str, Any]:
    return call(page, url, method="POST", body=body, headers=headers)


def same_origin_by_name(browser: Browser, stub: SpawnedStub, path: str) -> dict[str, Any]:
    """What a page on `http://REBINDING_NAME:<the stub's port>` reads of `path` on its own
    origin, which its name has made the stub's."""
    port = stub.url.rsplit(":", 1)[1]
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"http://{REBINDING_NAME}:{port}/health")
        return call(page, path)
    finally:
        context.close()


def browser_key(style: str) -> dict[str, str]:
    if style == "bearer":
        return {"Authorization": f"Bearer {BROWSER_KEY}", "Content-Type": "application/json"}
    return {"X-Api-Key": BROWSER_KEY, "Content-Type": "application/json"}


EVALUATE_BODY = '{"targetingKey": "user-1", "flagKeys": ["checkout-v2"]}'


class TestThePageReadsEveryRuntimeRoute:
    @pytest.mark.parametrize("style", ["bearer", "x-api-key"])
    def test_evaluate_capture_and_register_in_a_namespace(
        self, page: Page, namespace: StubClient, style: str
    ) -> None:
        headers = browser_key(style)
        evaluated = post(page, namespace.url + "/v1/flags/evaluate", EVALUATE_BODY, **headers)
        capture = '{"events": [{"type": "exposure", "targetingKey": "user-1", "flagKey": "k"}]}'
        captured = post(page, namespace.url + "/v1/capture", capture, **headers)
        target = '{"targetingKey": "user-1", "kind": "user"}'
        registered = post(page, namespace.url + "/v1/targets/register", target, **headers)

        assert evaluated["status"] == 200, evaluated
        assert '"value":"treatment-b"' in evaluated["body"]
        assert (captured["status"], registered["status"]) == (200, 200), (captured, registered)
        assert '"targetingKey":"user-1"' in registered["body"]
        routes = [entry.route for entry in namespace.requests()]
        assert [r for r in routes if r != "preflight"] == ["evaluate", "capture", "register"]
        assert routes.count("preflight") == 3  # one each: a key header and a JSON body
        assert namespace.requests("evaluate")[0].status == 200

    def test_the_vendor_routes(self, page: Page, namespace: StubClient) -> None:
        flags = '{"api_key": "phc_web", "distinct_id": "user-1"}'
        json = {"Content-Type": "application/json"}
        answered = [
            post(page, namespace.url + "/flags/?v=2", flags, **json),
            post(page, namespace.url + "/batch/", '{"api_key": "phc_web", "batch": []}', **json),
            call(
                page,
                namespace.url + f"/flags/definitions?token={VENDOR_KEY}",
                headers={"Authorization": f"Bearer {VENDOR_KEY}"},
            ),
        ]
        assert [answer["status"] for answer in answered] == [200, 200, 200], answered
        assert '"flags":' in answered[0]["body"]
        assert "etag" in answered[2]["headers"]  # what a poller sends back


class TestThePageReadsEveryFault:
    def test_a_500_from_a_per_request_header(self, page: Page, namespace: StubClient) -> None:
        headers = {**browser_key("bearer"), "X-Svc-Test-Fault": "500"}
        answer = post(page, namespace.url + "/v1/flags/evaluate", EVALUATE_BODY, **headers)
        assert answer["status"] == 500, answer
        assert '"error":"INTERNAL"' in answer["body"]

    def test_an_armed_503_and_a_429_say_when_to_come_back(
        self, page: Page, namespace: StubClient
    ) -> None:
        namespace.arm("status", status=503, retry_after=7, ttl_requests=1)
        url = namespace.url + "/v1/flags/evaluate"
        unavailable = post(page, url, EVALUATE_BODY, **browser_key("bearer"))
        limited = post(
            page, url + "?fault=429&retryAfter=3", EVALUATE_BODY, **browser_key("x-api-key")
        )
        recovered = post(page, url, EVALUATE_BODY, **browser_key("bearer"))
        assert (unavailable["status"], unavailable["headers"]["retry-after"]) == (503, "7")
        assert (limited["status"], limited["headers"]["retry-after"]) == (429, "3")
        assert recovered["status"] == 200

    def test_a_wrong_key_a_body_too_large_and_an_unknown_route(
        self, page: Page, namespace: StubClient
    ) -> None:
        url = namespace.url + "/v1/flags/evaluate"
        wrong = post(page, url, EVALUATE_BODY, Authorization="Bearer svc_public_other")
        large = post(page, url, "x" * (MAX_BODY * 2), **browser_key("bearer"))
        unknown = post(
            page, namespace.url + "/v1/flag/evaluate", EVALUATE_BODY, **browser_key("bearer")
        )
        assert (wrong["status"], large["status"], unknown["status"]) == (401, 413, 404)
        assert '"error":"UNAUTHORIZED"' in wrong["body"]
        assert "did you mean POST /v1/flags/evaluate?" in unknown["body"]

    def test_a_proxied_answer_and_a_fault_on_it(self, page: Page, stub: SpawnedStub) -> None:
        with spawn_stub("--upstream", stub.url, read_log=False) as proxy:
            url = proxy.url + "/v1/flags/evaluate"
            relayed = post(page, url, EVALUATE_BODY, **browser_key("bearer"))
            query = "?fault=status&status=503&retryAfter=2"
            faulted = post(page, url + query, EVALUATE_BODY, **browser_key("bearer"))
            routes = [entry.route for entry in StubClient(proxy.url).requests()]
        nowhere = f"http://127.0.0.1:{free_port()}"
        with spawn_stub("--upstream", nowhere, read_log=False) as proxy:
            url = proxy.url + "/v1/flags/evaluate"
            unreachable = post(page, url, EVALUATE_BODY, **browser_key("bearer"))
        assert relayed["status"] == 200, relayed
        assert '"value":"treatment-b"' in relayed["body"]
        assert (faulted["status"], faulted["headers"]["retry-after"]) == (503, "2")
        assert "preflight" in routes
        assert unreachable["status"] == 502, unreachable
        assert '"error":"UPSTREAM_UNREACHABLE"' in unreachable["body"]


class TestThePageCannotTouchTheControlPlane:
    def test_it_cannot_read_the_journal(self, page: Page, namespace: StubClient) -> None:
        post(page, namespace.url + "/v1/flags/evaluate", EVALUATE_BODY, **browser_key("bearer"))
        answer = call(page, namespace.url + "/_test/requests?bodies=true")
        assert "error" in answer, answer
        assert "Failed to fetch" in answer["error"]

    def test_a_no_cors_fetch_arms_no_fault(self, page: Page, namespace: StubClient) -> None:
        page.evaluate(
            """async (url) => { await fetch(url, {method: "POST", mode: "no-cors",
                 body: '{"mode": "500"}'}); }""",
            namespace.url + "/_test/fault",
        )
        assert namespace.armed() == []
        assert namespace.requests() == []  # the control plane records nothing either way

    def test_a_form_resets_nothing(self, page: Page, namespace: StubClient) -> None:
        post(page, namespace.url + "/v1/flags/evaluate", EVALUATE_BODY, **browser_key("bearer"))
        with page.expect_navigation():
            page.evaluate(
                """(url) => {
                  const form = document.createElement("form");
                  form.method = "POST"; form.action = url; form.enctype = "text/plain";
                  const field = document.createElement("input");
                  field.name = '{"a":"'; field.value = '"}';
                  form.append(field); document.body.append(form); form.submit();
                }""",
                namespace.url + "/_test/reset",
            )
        assert "ORIGIN_NOT_ALLOWED" in page.content()
        assert [entry.route for entry in namespace.requests() if entry.route != "preflight"] == [
            "evaluate"
        ]

    def test_a_name_that_resolves_to_the_stub_reads_nothing(
        self, browser: Browser, stub: SpawnedStub
    ) -> None:
        """DNS rebinding: the page's own origin, once its name points at 127.0.0.1."""
        answer = same_origin_by_name(browser, stub, "/_test/requests")
        assert answer["status"] == 403, answer
        assert f"--allow-host {REBINDING_NAME}" in answer["body"]


class TestAnOriginTheUserNamed:
    def test_drives_the_control_plane_from_the_page(
        self, page: Page, app_origin: str, browser: Browser
    ) -> None:
        with spawn_stub("--allow-origin", app_origin, read_log=False) as allowing:
            json = {"Content-Type": "application/json"}
            armed = post(page, allowing.url + "/_test/fault", '{"mode": "500"}', **json)
            faulted = post(page, allowing.url + "/v1/flags/evaluate", EVALUATE_BODY, **json)
            journal = call(page, allowing.url + "/_test/requests?route=evaluate")
        assert armed["status"] == 200, armed
        assert faulted["status"] == 500
        assert journal["status"] == 200
        assert '"route":"evaluate","status":500' in journal["body"]

    def test_the_guides_runner_example_runs_in_the_page(self, page: Page, app_origin: str) -> None:
        guide = (ROOT / "docs" / "guides" / "browser.md").read_text(encoding="utf-8")
        (example,) = re.findall(r"```js\n(.*?)```", guide, flags=re.S)
        with spawn_stub("--allow-origin", app_origin, read_log=False) as allowing:
            runs = example.replace("http://127.0.0.1:3901", allowing.url)
            journal = page.evaluate(f"async () => {{ {runs}; return journal; }}")
            armed = StubClient(allowing.url).armed()
        assert journal == {"requests": [], "dropped": 0}
        assert [(fault.mode, fault.status) for fault in armed] == [("status", 503)]

    def test_a_host_the_user_named_is_answered(self, browser: Browser) -> None:
        with spawn_stub("--allow-host", REBINDING_NAME, read_log=False) as allowing:
            answer = same_origin_by_name(browser, allowing, "/_test/requests")
        assert answer["status"] == 200, answer
