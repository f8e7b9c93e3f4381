"""/health while a 1 MB YAML document is posted (parsed off the event loop), and what an
alias-heavy document costs, refused and accepted."""

from __future__ import annotations

import statistics
import threading
import time
import urllib.error

from harness.client import get
from harness.servers import Server, started

from scenarios import Options, register

YAML = "application/yaml"
FLAGS = 13_000
"""Flags in the large document: about 1 MB of YAML."""


@register("fixture-documents", "/health during a 1 MB fixture post; what YAML aliases cost")
def run(options: Options) -> None:
    fixture_documents()


def fixture_documents() -> None:
    print("\n## Fixture documents: /health during a 1 MB post, and what aliases cost\n")
    with started("svc-stub", "--max-body-bytes", str(4 << 20)) as stub:
        large_document(stub)
    with started("svc-stub") as stub:
        aliases(stub)


def large_document(stub: Server) -> None:
    """Probes /health every 20 ms for as long as the large document's post takes."""
    rows = "".join(
        f"  flag-{n}: {{type: object, value: {{a: [1, 2, 3, 'text {n}'], b: {{c: x}}}}}}\n"
        for n in range(FLAGS)
    )
    document = f"flags:\n{rows}".encode()
    probes: list[float] = []
    done = threading.Event()

    def upload() -> None:
        get(stub.url + "/_test/fixtures", document, 120, content_type=YAML)
        done.set()

    began = time.perf_counter()
    threading.Thread(target=upload).start()
    while not done.is_set():
        sent = time.perf_counter()
        get(stub.url + "/health")
        probes.append(time.perf_counter() - sent)
        time.sleep(0.02)
    posted_s = time.perf_counter() - began
    print(
        f"- {len(document) / 1e6:.2f} MB of YAML ({FLAGS:,} flags) served after "
        f"{posted_s:.2f} s; /health meanwhile: {len(probes)} probes, median "
        f"{statistics.median(probes) * 1000:.1f} ms, slowest {max(probes) * 1000:.1f} ms"
    )


def aliases(stub: Server) -> None:
    """A small document that expands enormously (refused), and one within the bound."""
    before = stub.rss_mb
    for name, text in (
        ("8 KB alias bomb", aliased(1000, 1000, 40)),
        ("one within the bound", aliased(20, 20, 9, '"xxxxxxx"')),
    ):
        try:
            get(stub.url + "/_test/fixtures", text.encode(), 60, content_type=YAML)
            outcome = "served"
        except urllib.error.HTTPError as refused:
            outcome = f"refused, {refused.code}"
            refused.close()
        print(f"- {name} ({len(text):,} bytes): {outcome}; RSS +{stub.rss_mb - before:.1f} MB")


def aliased(values: int, uses: int, flags: int, value: str = "1") -> str:
    """A fixture document whose aliases expand it (as tests/test_shared_stub.py's)."""
    base = f"&a [{', '.join([value] * values)}]"
    wide = f"&b [{', '.join(['*a'] * uses)}]"
    first = f"  f0: {{type: object, value: {{base: {base}, w: {wide}}}}}\n"
    rows = "".join(f"  f{n}: {{type: object, value: {{w: *b}}}}\n" for n in range(1, flags))
    return f"flags:\n{first}{rows}"
