"""The scenarios, one module each, as Toxiproxy keeps its toxics: a module registers its
scenario on import, with `@register(name, summary)` on a function that takes the run's
`Options`. `load()` imports every module here and returns the registry in FULL_RUN order.

A new scenario is a new module here (its constants, bounds and baseline commits with it, its
machinery from `harness`) and its name in FULL_RUN. Scenarios do not import one another: what
two share belongs in `harness`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

FULL_RUN = (
    "release",
    "throughput",
    "rate-limit",
    "watch",
    "namespace-cost",
    "live-namespaces",
    "startup",
    "instructions",
    "connections",
    "delayed",
    "stop",
    "proxy",
    "fixture-documents",
    "inspector",
    "cors",
    "coverage",
    "million",
)
"""Every scenario's name, in the order a run without --only takes them."""


@dataclass(frozen=True)
class Options:
    """What the command line asks of every scenario."""

    quick: bool
    """Shorter runs and fewer rounds: a smoke check, not figures to quote."""
    baseline: str | None = None
    """The earlier commit a scenario that measures this checkout against one takes instead of
    its own (`--baseline`); None: the scenario's own."""

    def pick(self, quick: T, full: T) -> T:
        """`quick` on a --quick run, else `full`: a duration, a count of rounds or requests."""
        return quick if self.quick else full


Run = Callable[[Options], None]


@dataclass(frozen=True)
class Scenario:
    name: str
    """What `--only` takes."""
    summary: str
    """One line, for --help."""
    run: Run
    in_quick_run: bool
    """False: a --quick run leaves it out unless --only names it."""


_REGISTRY: dict[str, Scenario] = {}


def register(name: str, summary: str, *, in_quick_run: bool = True) -> Callable[[Run], Run]:
    """Registers the decorated function as the scenario `name` (see Scenario)."""

    def add(run: Run) -> Run:
        if name in _REGISTRY:
            raise ValueError(f"two scenarios are named {name!r}")
        _REGISTRY[name] = Scenario(name, summary, run, in_quick_run)
        return run

    return add


def load() -> dict[str, Scenario]:
    """Every scenario by name, in FULL_RUN order, its module imported (and so registered)."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    if unplaced := set(_REGISTRY) ^ set(FULL_RUN):
        raise RuntimeError(f"FULL_RUN and the registered scenarios differ in {sorted(unplaced)}")
    return {name: _REGISTRY[name] for name in FULL_RUN}
