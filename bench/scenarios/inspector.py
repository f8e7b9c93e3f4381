"""What the inspector costs. With no page open: evaluate's instructions and throughput against
BASELINE's, the commit before it, run from a worktree. With a page open (`Page`) against none,
on one server: evaluate's throughput under wrk, and the server's CPU a second at a fixed
PAGE_RATE evaluates a second."""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from harness.client import connection_to, send_evaluates
from harness.load import Load, alternated, measured, paced_round, pin_to_load_cpu, warm_up
from harness.report import ratio_table, rps_ratio
from harness.servers import Server, started, worktree
from harness.versus import against_commit

from scenarios import Options, register

T = TypeVar("T")

BASELINE = "8c178b9"
"""The commit before the journal kept each request's body and answer and the inspector page
came: `inspector` runs its svc-stub, from a worktree, beside this checkout's."""
SAME_BOUND = 1.05
"""CPU per evaluate, this checkout over BASELINE with no page open: noise around 1."""
PAGE_BOUND = 0.90
"""The issue's bound on evaluate's throughput with an inspector page open over without."""
PAGE_RATE = 1000
"""Evaluates a second, the fixed offered load the page's CPU is measured under."""
PAGE_WAIT_MS = 25_000
"""The page's long-poll, as `/_test/ui` sends it."""


@register("inspector", f"evaluate against {BASELINE} (before the inspector); a page open or not")
def run(options: Options) -> None:
    inspector(
        round_s=2,
        rounds=options.pick(3, 10),
        paced_s=options.pick(3, 10),
        paced_rounds=options.pick(2, 4),
        calls=options.pick(1000, 5000),
    )


def inspector(round_s: float, rounds: int, paced_s: float, paced_rounds: int, calls: int) -> None:
    with worktree(BASELINE) as tree:
        print(f"\n## The inspector: evaluate at this checkout against {tree.name}, no page open\n")
        against_commit(tree, round_s, rounds, calls, SAME_BOUND)
    print("\n## The inspector: evaluate with a page open against none (one server)\n")
    with started("svc-stub") as stub:
        warm_up(stub, round_s)
        page_throughput(stub, round_s, rounds)
        page_at_fixed_load(stub, paced_s, paced_rounds)


def page_throughput(stub: Server, round_s: float, rounds: int, connections: int = 16) -> None:
    """Evaluate under wrk, a page opened for every other round (its first look taken before
    the round starts)."""
    pages: list[Page] = []
    print(f"Evaluate, {connections} connections, {rounds} alternating rounds of {round_s:g} s:\n")
    runs = {
        "page open": with_page(stub, pages, lambda: measured(stub, connections, round_s)),
        "no page": lambda: measured(stub, connections, round_s),
    }
    loads: dict[str, list[Load]] = alternated(runs, rounds)
    ratio_table(loads, "page open", "no page", round(1 / PAGE_BOUND, 3))
    rps_ratio(loads, "page open", "no page", PAGE_BOUND)
    print(f"\nThe page meanwhile: {page_summary(pages)}")


def page_at_fixed_load(stub: Server, seconds: float, rounds: int) -> None:
    """Evaluate paced at PAGE_RATE a second, a page opened for every other round: the server's
    CPU time a second, which the page's answers add to."""
    pages: list[Page] = []
    print(
        f"\nEvaluate paced at {PAGE_RATE:,} a second (one keep-alive connection), {rounds} "
        f"alternating rounds of {seconds:g} s:\n"
    )
    runs = {
        "page open": with_page(stub, pages, lambda: paced_round(stub, PAGE_RATE, seconds)),
        "no page": lambda: paced_round(stub, PAGE_RATE, seconds),
    }
    took = alternated(runs, rounds)
    print("| run | evaluates a second | server CPU a second, median (range) | CPU per evaluate |")
    print("|---|---|---|---|")
    for label, paced in took.items():
        cpu = [one.cpu_ms_per_s for one in paced]
        print(
            f"| {label} | {statistics.median(one.rate for one in paced):,.0f} | "
            f"{statistics.median(cpu):.1f} ms ({min(cpu):.1f}-{max(cpu):.1f}) | "
            f"{statistics.median(one.cpu_us for one in paced):.1f} µs |"
        )
    median = {
        label: statistics.median(one.cpu_ms_per_s for one in paced) for label, paced in took.items()
    }
    print(
        f"\nThe page added {median['page open'] - median['no page']:.1f} ms of server CPU a "
        f"second (ratio {median['page open'] / median['no page']:.2f}). The page meanwhile: "
        f"{page_summary(pages)}"
    )


def with_page(stub: Server, pages: list[Page], measure: Callable[[], T]) -> Callable[[], T]:
    """`measure` with a page open on `stub` throughout, the page kept in `pages` after."""

    def measured_with_page() -> T:
        with Page(stub.url) as page:
            taken = measure()
        pages.append(page)
        return taken

    return measured_with_page


class Page:
    """An inspector page open on a stub, as a thread on the load's CPU: it long-polls the feed
    with the cursor of its last answer, as `/_test/ui` does, and fetches the newest request in
    full once per answer, as a click on a row does. Its first look (the newest of everything
    the journal keeps) is taken on opening, before anything is measured."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.answers = 0
        self.shown = 0
        """Requests the feed's answers carried."""
        self.received = 0
        """Bytes of the feed's answers."""
        self.cpu_s = 0.0
        """The page's own CPU (reading its answers)."""
        self.open_s = 0.0
        self._cursor = ""
        self._newest: int | None = None
        self._connection = connection_to(url, timeout=60)
        self._done = threading.Event()
        self._failed: Exception | None = None
        self._thread = threading.Thread(target=self._follow)
        self._began = 0.0

    def __enter__(self) -> Page:
        self._look(0)
        self.answers = self.shown = self.received = 0
        self._began = time.perf_counter()
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        send_evaluates(self.url, 1)  # ends the long-poll it is in
        self._thread.join(60)
        self.open_s = time.perf_counter() - self._began
        self._connection.close()
        if self._thread.is_alive():
            raise RuntimeError("the page did not stop")
        if self._failed is not None:
            raise RuntimeError(f"the page failed: {self._failed!r}") from self._failed

    def _follow(self) -> None:
        pin_to_load_cpu()
        began = time.thread_time()
        try:
            while not self._done.is_set():
                self._look(PAGE_WAIT_MS)
        except Exception as failed:  # raised on closing, in the thread that measures
            self._failed = failed
        finally:
            self.cpu_s = time.thread_time() - began

    def _look(self, wait_ms: int) -> None:
        shown = self._get(f"/_test/ui/feed?since={self._cursor}&waitMs={wait_ms}")
        self._cursor = shown["cursor"]
        self.answers += 1
        self.shown += len(shown["requests"])
        if shown["requests"]:
            self._newest = shown["requests"][-1]["seq"]
        if self._newest is not None:
            self._get(f"/_test/requests/{self._newest}", feed=False)

    def _get(self, path: str, feed: bool = True) -> Any:
        self._connection.request("GET", path)
        answer = self._connection.getresponse()
        body = answer.read()
        if answer.status != 200:
            raise RuntimeError(f"GET {path}: {answer.status} {body[:200]!r}")
        if feed:
            self.received += len(body)
        return json.loads(body)


def page_summary(pages: list[Page]) -> str:
    seconds = sum(page.open_s for page in pages)
    answers = sum(page.answers for page in pages)
    each = max(answers, 1)
    shown = sum(page.shown for page in pages) / each
    received = sum(page.received for page in pages) / each
    cpu = sum(page.cpu_s for page in pages) / seconds
    return (
        f"{answers / seconds:.1f} feed answers a second, each of {shown:,.0f} requests "
        f"({received / 1e3:,.0f} KB) and followed by one `/_test/requests/<seq>`; the page's "
        f"own CPU (reading them, on the load's CPU) {cpu * 1000:.0f} ms a second"
    )
