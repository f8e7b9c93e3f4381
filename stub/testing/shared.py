"""`svc-stub shared`: the one stub of a test run, for test runners in every language.

A run (`go test ./...`, `cargo test`, `mvn test`, a pytest-xdist session) is several processes
that each want a stub; they should share one, and it should go when the run goes, however it
ends. Each helper used to decide that for itself; this command decides it once. The first
process of a run to ask starts the stub; the others attach to it. It prints the stub's ready
line and exits, leaving the stub running in a session of its own, `--stop-with` the run's owner
process: a run killed outright leaves no stub behind.

The run is keyed by its owner's PID and the stub's options (`SVC_STUB_*` settings included): a
run asking for two option sets gets two stubs. A file lock in a directory per run decides who
starts it; the directory also says where it listens and its PID, and keeps its log.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from stub import __version__
from stub.packaged import install_source
from stub.process import (
    PYTHON_M,
    START_TIMEOUT_S,
    StubProcess,
    StubStartError,
    is_running,
    ready_line,
    url_of,
)

USAGE = """\
usage: svc-stub shared [--owner PID | --owner-named NAME] [--require VERSION] [--stop]
                       [-- STUB_OPTIONS...]

Starts the test run's one stub, or attaches to the one already started for this run; prints
its ready line (svc-stub listening on URL) and exits 0. The stub stops when the owner process
ends (a run killed outright included), or at `--stop`.

  --owner PID         the process whose life is the run's
  --owner-named NAME  the nearest process named NAME from the caller up its parents (go for
                      `go test`, cargo for `cargo test`); none: the caller
  --require VERSION   refuse (exit 2) if this svc-stub is older than VERSION (a helper's own)
  --stop              stop the run's stub (same owner and options) now, if it runs
  STUB_OPTIONS        svc-stub's own options (--fixtures F, --api-key K, ...), but --port,
                      --host and --stop-with, which the command sets

Without --owner or --owner-named, the owner is the caller."""

_SET_BY_THE_COMMAND = ("--port", "--host", "--stop-with")
_NOT_THE_STUBS = frozenset({"SVC_STUB_BIN", "SVC_STUB_JOURNAL_DIR", "SVC_STUB_URL"})
"""Helpers' settings: they do not change the stub, so they do not make another run key."""
STOP_TIMEOUT_S = 5.0
_STUB_FILE = "stub"
_LOG_FILE = "log"


class SharedError(Exception):
    """One line for the caller; `code` is the exit code (2: usage, 1: the stub did not start)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Asked:
    owner: int
    stub_options: tuple[str, ...]
    required: str | None
    stop: bool


def shared_stub_url(owner: int, stub_options: Sequence[str]) -> str:
    """For Python callers (the pytest plugin): the command run as any helper runs it."""
    return _command(["--owner", str(owner), "--", *stub_options])


def stop_shared_stub(owner: int, stub_options: Sequence[str]) -> None:
    _command(["--stop", "--owner", str(owner), "--", *stub_options])


def _command(args: list[str]) -> str:
    said = subprocess.run(
        [*PYTHON_M, "stub", "shared", *args],
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S + STOP_TIMEOUT_S,
        check=False,
    )
    if said.returncode != 0:
        raise StubStartError(said.stderr.strip() or f"exit code {said.returncode}")
    return url_of(said.stdout) or ""


def main(args: Sequence[str]) -> None:
    if list(args[:1]) in (["-h"], ["--help"]):
        print(USAGE)
        return
    try:
        asked = parsed(args, caller=os.getppid())
        if asked.required is not None:
            check_version(asked.required)
        run = run_directory(asked)
        if asked.stop:
            stop(run)
            return
        print(ready_line(shared_stub(run, asked)), flush=True)
    except SharedError as exc:
        print(f"svc-stub: error: shared: {exc}", file=sys.stderr)
        sys.exit(exc.code)


def parsed(args: Sequence[str], caller: int) -> Asked:
    own, stub_options = _split(list(args))
    owner, named, required, stop_now = None, None, None, False
    while own:
        option = own.pop(0)
        if option == "--stop":
            stop_now = True
        elif option in ("--owner", "--owner-named", "--require"):
            if not own:
                raise SharedError(f"{option} needs a value")
            value = own.pop(0)
            if option == "--owner":
                owner = _pid(value)
            elif option == "--owner-named":
                named = value
            else:
                required = value
        else:
            raise SharedError(f"{option}: unknown option (stub options go after --); see --help")
    if owner is not None and named is not None:
        raise SharedError("give --owner or --owner-named, not both")
    if named is not None:
        owner = nearest_named(named, caller)
    return Asked(owner or caller, tuple(stub_options), required, stop_now)


def _split(args: list[str]) -> tuple[list[str], list[str]]:
    if "--" not in args:
        return args, []
    at = args.index("--")
    stub_options = args[at + 1 :]
    for option in stub_options:
        if option.split("=", 1)[0] in _SET_BY_THE_COMMAND:
            raise SharedError(f"{option.split('=', 1)[0]}: the command sets it; leave it out")
    return args[:at], stub_options


def _pid(raw: str) -> int:
    if not raw.isdigit() or not is_running(int(raw)):
        raise SharedError(f"--owner {raw}: no such process (give the test run's PID)")
    return int(raw)


def nearest_named(name: str, caller: int) -> int:
    """The caller, or the nearest of its ancestors, whose process name is `name`; the caller
    when none is."""
    pid: int | None = caller
    while pid is not None and pid > 1:
        if _name_of(pid) == name:
            return pid
        pid = _parent_of(pid)
    return caller


def _name_of(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        said = _ps(pid, "comm")
        return None if said is None else os.path.basename(said)


def _parent_of(pid: int) -> int | None:
    try:
        # the fields after the name, which is in parentheses and may hold anything
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return int(fields[1])
    except (OSError, IndexError, ValueError):
        said = _ps(pid, "ppid")
        return int(said) if said is not None and said.isdigit() else None


def _ps(pid: int, field: str) -> str | None:
    """Where there is no /proc (macOS, the BSDs)."""
    try:
        said = subprocess.run(
            ["ps", "-o", f"{field}=", "-p", str(pid)], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        return None
    return said or None


def check_version(required: str) -> None:
    """`--require`: a helper of version `required` works with this stub (`compatible`)."""
    if release_of(required) is None:
        raise SharedError(f"--require {required}: expected a version like 0.1.0")
    if not compatible(__version__, required):
        raise SharedError(
            f"this svc-stub is {__version__}, older than the {required} the helper needs; "
            f"upgrade it ({sys.executable} -m pip install --upgrade {install_source()})"
        )


_VERSION = re.compile(
    r"v?(\d+)\.(\d+)\.(\d+)(?P<prerelease>[-.]?[A-Za-z][0-9A-Za-z.-]*)?(?:\+[0-9A-Za-z.-]+)?"
)


def release_of(version: str) -> tuple[int, int, int, bool] | None:
    """A version's release numbers and whether it is final (not a prerelease), in either
    spelling (PEP 440's 0.2.0rc1, semver's 0.2.0-rc.1); None if it is not a version."""
    found = _VERSION.fullmatch(version.strip())
    if found is None:
        return None
    major, minor, patch = (int(found.group(n)) for n in (1, 2, 3))
    return major, minor, patch, found.group("prerelease") is None


def compatible(stub: str, helper: str) -> bool:
    """The one rule of which stub a helper works with (clients/compatibility.json, whose
    cases every helper's suite runs): release numbers at least the helper's; at equal numbers
    a prerelease stub is older than a final helper, and prereleases go together."""
    have, need = release_of(stub), release_of(helper)
    return have is not None and need is not None and have >= need


def run_directory(asked: Asked) -> Path:
    """This run's directory (made if new), ended runs' directories removed."""
    base = Path(tempfile.gettempdir()) / f"svc-stub-{os.getuid()}"
    base.mkdir(mode=0o700, exist_ok=True)
    _remove_ended(base)
    settings = sorted(
        f"{name}={value}"
        for name, value in os.environ.items()
        if name.startswith("SVC_STUB_") and name not in _NOT_THE_STUBS
    )
    key = hashlib.sha256("\0".join([*asked.stub_options, "", *settings]).encode()).hexdigest()
    run = base / f"run-{asked.owner}-{key[:12]}"
    run.mkdir(mode=0o700, exist_ok=True)
    return run


def _remove_ended(base: Path) -> None:
    """Nothing else would: a run's stub outlives every process of the run that could."""
    for run in base.glob("run-*-*"):
        owner = run.name.split("-")[1]
        if owner.isdigit() and not is_running(int(owner)):
            shutil.rmtree(run, ignore_errors=True)


def shared_stub(run: Path, asked: Asked) -> str:
    """The URL of the run's stub, started if it is not running yet."""
    with (run / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        started = _started(run)
        if started is not None and is_running(started[1]) and _answers(started[0]):
            return started[0]
        url, pid = _start(run, asked)
        (run / _STUB_FILE).write_text(f"{url}\n{pid}\n")
        return url


def _start(run: Path, asked: Asked) -> tuple[str, int]:
    """The stub in a session of its own (a Ctrl-C to the caller's group is the runner's to
    handle, and the owner's end stops the stub), its log in the run's directory."""
    with (run / _LOG_FILE).open("w") as log:
        try:
            started = StubProcess.start(
                ["--stop-with", str(asked.owner), *asked.stub_options], stderr=log, detached=True
            )
        except StubStartError:
            said = (run / _LOG_FILE).read_text().strip().splitlines()
            last = said[-1].removeprefix("svc-stub: error: ") if said else "it said nothing"
            raise SharedError(f"the stub did not start: {last}", code=1) from None
    assert started.process.stdout is not None
    started.process.stdout.close()  # the stub writes nothing more that anyone reads
    return started.url, started.pid


def stop(run: Path) -> None:
    """The run's stub stopped, if it still answers at its address (a PID the system has
    since reused is left alone), and the run's directory removed."""
    started = _started(run)
    try:
        if started is not None and _answers(started[0]):
            url, pid = started
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + STOP_TIMEOUT_S
            while _answers(url) and time.monotonic() < deadline:
                time.sleep(0.05)
            if _answers(url):
                os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # gone already
    finally:
        shutil.rmtree(run, ignore_errors=True)


def _started(run: Path) -> tuple[str, int] | None:
    try:
        url, pid = (run / _STUB_FILE).read_text().split()
    except (FileNotFoundError, ValueError):
        return None
    return url, int(pid)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=1) as answer:
            return bool(answer.status == 200)
    except urllib.error.HTTPError as refused:  # something else listens there now
        refused.close()
        return False
    except OSError:
        return False
