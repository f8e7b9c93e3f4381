"""aiohttp's server side without its client side, for the process that serves (the `svc-stub`
command, stub/entry.py). `import aiohttp`, and so `from aiohttp import
web`, first runs the package's `__init__`, which imports the whole client (sessions, connectors,
cookie jars, tracing, digest auth) and builds its two default SSL contexts there and then,
reading the system's CA bundle twice: nearly a third of a plain start, for a stub that never
opens a connection of its own. aiohttp's server modules need nothing of that `__init__` but
`__version__`.

`defer_client()` puts the package in `sys.modules` before anything imports it, its `__init__`
not yet run and `__version__` read from that file's first line: `aiohttp.web` and every other
module of the package then import as ever, each importing what it uses. The first name asked of
the package itself that is not one of its modules (`aiohttp.ClientSession`: proxy mode, `svc-stub
record`) runs the `__init__` then, into the same module object, which from then on is the one
`import aiohttp` makes (the modules it imports that were imported already are the same). On an
aiohttp the suite never ran on, the door (connection.py) runs it before the stub serves. Nothing
here imports aiohttp: it runs first.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from types import ModuleType
from typing import Any

PACKAGE = "aiohttp"
_VERSION = re.compile(rb"""^__version__\s*=\s*["']([^"']+)["']""", re.MULTILINE)
_COMPLETE = "__svc_stub_complete__"
"""The package module's attribute naming the function that runs its `__init__` (is_deferred)."""


def defer_client() -> bool:
    """aiohttp's package in `sys.modules`, its `__init__` deferred; False (nothing done) when
    something imported aiohttp already or its package cannot be found."""
    if PACKAGE in sys.modules:
        return False
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.loader is None or spec.origin is None:
        return False
    package = importlib.util.module_from_spec(spec)
    names = vars(package)
    loader = spec.loader

    def complete() -> None:
        """Run the package's `__init__`, once: aiohttp's own `__getattr__` replaces ours."""
        if names.pop("__getattr__", None) is not deferred_name:
            return
        names.pop(_COMPLETE, None)
        loader.exec_module(package)

    def deferred_name(name: str) -> Any:
        """A module of the package is imported (`from aiohttp import hdrs`, or `aiohttp.client`,
        which the `__init__` would have imported); any other name is the `__init__`'s, which
        runs now."""
        if _is_module(f"{PACKAGE}.{name}"):
            return importlib.import_module(f"{PACKAGE}.{name}")
        complete()
        return getattr(package, name)

    version = _version(spec.origin)
    if version is not None:
        names["__version__"] = version  # the one name its server modules take from it
    names["__getattr__"] = deferred_name
    names[_COMPLETE] = complete
    sys.modules[PACKAGE] = package
    return True


def is_deferred() -> bool:
    """aiohttp's `__init__` has not run (yet)."""
    package = sys.modules.get(PACKAGE)
    return package is not None and _COMPLETE in vars(package)  # no getattr: it would run it


def complete_package() -> None:
    """Run aiohttp's `__init__` now, if it was deferred (else nothing)."""
    package: ModuleType | None = sys.modules.get(PACKAGE)
    if package is not None and _COMPLETE in vars(package):
        vars(package)[_COMPLETE]()


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # not a name a module can have
        return False


def _version(origin: str) -> str | None:
    """The `__version__ = "3.14.5"` line the package's `__init__` begins with."""
    try:
        with open(origin, "rb") as source:
            match = _VERSION.search(source.read(4096))
    except OSError:
        return None
    return match.group(1).decode() if match else None
