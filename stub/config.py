"""Frozen settings of one stub instance, shared by the CLI, the app and the pytest plugin; and
the bounded integer every command's options take."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import NamedTuple

import click
from yarl import URL

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 3901
DEFAULT_MAX_RECORDED = 10_000
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
DEFAULT_MAX_NAMESPACES = 1000
DEFAULT_NAMESPACE_MAX_RECORDED = 1000
DEFAULT_MAX_RECORDED_IN_NAMESPACES = 50_000
DEFAULT_MAX_RECORDED_BYTES = 128 * 1024 * 1024
DEFAULT_MAX_UPSTREAM_IN_FLIGHT_BYTES = 256 * 1024 * 1024
"""Four of the largest answer relayed (64 MiB): what proxy mode holds of answers at once."""


class IntRange(click.IntRange):
    """click's bounded integer, whose refusal of a word reads "'abc' is not a valid integer."
    (click's own says "integer range", which reads as if a range were wanted)."""

    name = "integer"


class Upstream(NamedTuple):
    """Where the real service is, checked (`upstream_of`), and how to trust it."""

    url: URL
    """Its base address, without a trailing slash: a path prefix is kept."""
    ca_bundle: Path | None = None

    @property
    def shown(self) -> str:
        """The address for messages: scheme, host and port only (a path may carry a token)."""
        return str(self.url.origin())

    def address(self, path: str, query: str) -> URL:
        """The upstream address of a request for `path?query` (both as sent, encoded): always
        on the upstream's host, under its path (a path is never resolved as a reference, so
        `//host/...` stays a path; dot segments are refused before this, see `dot_segments`)."""
        base = self.url.raw_path.rstrip("/")
        target = self.url.with_path(base + path, encoded=True)
        return URL(f"{target}?{query}", encoded=True) if query else target


class StubConfig(NamedTuple):
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    fixture_paths: tuple[Path, ...] = ()
    """Empty: the default fixture set shipped with the package."""
    api_keys: frozenset[str] = frozenset()
    """Empty: any non-empty key is accepted (the service's stub rule)."""
    strict_keys: bool = False
    """Refuse a key used where the service would (the wrong plane, a browser key's scope)
    instead of serving it with a warning."""
    rate_limit: float | None = None
    """Requests a second each key may make; None: no limit."""
    allow_non_loopback: bool = False
    control_token: str | None = None
    """When set, every /_test/ route requires `Authorization: Bearer <control_token>`."""
    allow_origins: frozenset[str] = frozenset()
    """Origins (`http://localhost:5173`) whose pages may drive the control plane: an
    in-browser test runner's. Every other page is refused."""
    allow_hosts: frozenset[str] = frozenset()
    """Names (`svc-stub`, or `svc-stub:3901` for one port) the control plane answers besides
    IP literals, `localhost` and `*.localhost`."""
    max_recorded: int = DEFAULT_MAX_RECORDED
    """Per recorded list of the default namespace."""
    max_namespaces: int = DEFAULT_MAX_NAMESPACES
    """Named namespaces kept at once; the least recently used is evicted beyond it."""
    namespace_max_recorded: int = DEFAULT_NAMESPACE_MAX_RECORDED
    """Per recorded list of each named namespace: more than one test records."""
    max_recorded_in_namespaces: int = DEFAULT_MAX_RECORDED_IN_NAMESPACES
    """Entries recorded by every named namespace together; beyond it the least recently used
    namespaces are evicted, so a thousand live ones stay within a known memory bound."""
    max_recorded_bytes: int = DEFAULT_MAX_RECORDED_BYTES
    """The request and answer bodies the journal keeps: the default namespace's, and every
    named namespace's together (beyond it the least recently used are evicted)."""
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    watch: bool = False
    """Serve `fixture_paths` anew whenever they change on disk."""
    upstream: Upstream | None = None
    """Proxy mode: forward every client-plane request to this service, faults on top."""
    max_upstream_in_flight_bytes: int = DEFAULT_MAX_UPSTREAM_IN_FLIGHT_BYTES
    """Bytes of the upstream's answers proxy mode holds at once; beyond it, a 502."""
    log_level: str = "info"

    @property
    def watches_files(self) -> bool:
        """`--watch` with fixture files to watch (the shipped set never changes)."""
        return self.watch and bool(self.fixture_paths)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
