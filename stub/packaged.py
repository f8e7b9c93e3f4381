"""Files the package ships (the OpenAPI document, the inspector's page), held open from
start-up and read on first use: a stub keeps serving them even when its installation is
replaced under it (a `pip install` into the environment it runs from), as the open file still
reaches what was there when it started."""

from __future__ import annotations

import atexit
import functools
import threading
from pathlib import Path


class PackagedFile:
    """One file of the package: opened now (a system call), read once when first asked for."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("rb")
        self._lock = threading.Lock()  # the in-process fixture may read from two threads
        atexit.register(self._file.close)  # one never read is closed too, not left to the GC

    @functools.cached_property
    def data(self) -> bytes:
        with self._lock:
            data = self._file.read()
            self._file.close()
            return data

    @functools.cached_property
    def text(self) -> str:
        return self.data.decode("utf-8")


def install_source() -> str:
    """What `pip install` takes to install svc-stub here: the clone this one runs from, if it
    runs from one (svc-stub is on no package index yet)."""
    clone = Path(__file__).resolve().parents[1]
    return str(clone) if (clone / "pyproject.toml").is_file() else "path/to/svc-stub"
