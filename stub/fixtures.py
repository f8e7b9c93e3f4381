"""The fixture loader: files and directories, YAML/JSON, one FixtureSet; each plane validates its
own section."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import orjson

from stub.keys import KeyRules, parse_keys_section
from stub.management.seed import (
    DEFAULT_SEED,
    ManagementSeed,
    check_unique_across_orgs,
    parse_management,
)
from stub.runtime.flags import _EMPTY, Flag, parse_flag
from stub.validation import (
    FixtureError,
    JsonValue,
    Where,
    check_document_size,
    check_json_value,
    mapping,
    optional_json_object,
    or_empty,
)

if TYPE_CHECKING:
    import yaml

__all__ = [
    "FIXTURE_SUFFIXES",
    "FixtureError",
    "FixtureSet",
    "Flag",
    "JsonValue",
    "check_json_value",
    "default_fixture_dir",
    "load_fixture_file",
    "load_fixture_paths",
    "parse_fixture_document",
    "parse_json",
    "parse_yaml",
]

T = TypeVar("T")
FIXTURE_SUFFIXES = (".yaml", ".yml", ".json")
_TOP_LEVEL_KEYS = ("flags", "vendor", "management", "keys")
_VENDOR_KEYS = ("flags", "definitions")


class FixtureSet(NamedTuple):
    """Everything a fixture document can say: the flags, optional verbatim vendor bodies and
    the management plane's seed (None: the document has no `management:` section)."""

    flags: Mapping[str, Flag] = _EMPTY
    vendor_flags: Mapping[str, JsonValue] | None = None
    vendor_definitions: Mapping[str, JsonValue] | None = None
    management: ManagementSeed | None = None
    keys: KeyRules | None = None
    """The `keys:` section (None: the document has none)."""

    @property
    def management_seed(self) -> ManagementSeed:
        """What the management plane starts from: the default organisation without a section."""
        return self.management if self.management is not None else DEFAULT_SEED

    def overlaid_with(self, later: FixtureSet) -> FixtureSet:
        """The later set wins per flag key, per vendor body and per organisation."""
        management = self.management
        if later.management is not None:
            management = (
                later.management
                if management is None
                else management.overlaid_with(later.management)
            )
        return FixtureSet(
            flags=MappingProxyType({**self.flags, **later.flags}),
            vendor_flags=later.vendor_flags
            if later.vendor_flags is not None
            else self.vendor_flags,
            vendor_definitions=(
                later.vendor_definitions
                if later.vendor_definitions is not None
                else self.vendor_definitions
            ),
            management=management,
            keys=later.keys
            if self.keys is None
            else (self.keys if later.keys is None else self.keys.overlaid_with(later.keys)),
        )


DEFAULT_SET = Path(__file__).resolve().parent / "default_fixtures.json"
"""`fixtures/default.yaml`, parsed: the YAML (with its comments) is the source; this copy lets
a stub started without --fixtures skip importing a YAML parser (a tenth of its start-up).
`python -m stub.fixtures` writes it; a test keeps the two equal."""


def default_fixture_dir() -> Path:
    """The default set: inside the installed wheel, or at the repository top in a checkout."""
    packaged = Path(__file__).resolve().parent / "fixtures"
    if packaged.is_dir():
        return packaged
    # Editable installs and plain checkouts: the wheel's force-include has not run.
    return Path(__file__).resolve().parent.parent / "fixtures"


_PAUSES = 0
_WAS_ENABLED = True
_PAUSES_LOCK = threading.Lock()


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a large document is built. Each full
    collection walks every object, holding the GIL, and a growing document sets off one after
    another: a 1 MB document spent as long collecting as parsing, in pauses of up to half a
    second that stalled the event loop's thread however the parsing itself was threaded. A
    document holds no cycles to collect. Counted, so that parses in several threads at once
    turn it back on only when the last one ends."""
    global _PAUSES, _WAS_ENABLED
    with _PAUSES_LOCK:
        _PAUSES += 1
        if _PAUSES == 1:
            _WAS_ENABLED = gc.isenabled()  # off already at start-up (see stub/entry.py)
            gc.disable()
    try:
        yield
    finally:
        with _PAUSES_LOCK:
            _PAUSES -= 1
            if _PAUSES == 0 and _WAS_ENABLED:
                gc.enable()


_BUILDING = threading.Lock()
"""One document built at a time: each costs about a hundred times its text in memory while it
is built, and a hundred uploads at once must not cost a hundred times that."""


async def built_off_loop(build: Callable[[], T]) -> T:
    """`build()` (parsing and deriving a fixture document) in a worker thread, one at a time,
    with the collector paused, so the event loop answers every other request meanwhile. The
    thread is a daemon: a stop (SIGTERM) never waits for a parse nobody will use, as it would
    for asyncio's own executor."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def work() -> None:
        try:
            with _BUILDING, collection_paused():
                result = build()
        except BaseException as exc:  # handed to the awaiting request, which answers it
            _hand_back(loop, _fail, done, exc)
        else:
            _hand_back(loop, _resolve, done, result)

    threading.Thread(target=work, name="svc-stub fixtures", daemon=True).start()
    return await done


def _hand_back(loop: asyncio.AbstractEventLoop, *call: Any) -> None:
    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody is waiting
        loop.call_soon_threadsafe(*call)


def _resolve(done: asyncio.Future[T], result: T) -> None:
    if not done.done():  # else the request gave up waiting (its client went away)
        done.set_result(result)


def _fail(done: asyncio.Future[T], error: BaseException) -> None:
    if not done.done():
        done.set_exception(error)


def load_fixture_paths(paths: Sequence[Path]) -> FixtureSet:
    """Load files and directories in order; a later file wins per key."""
    with collection_paused():
        return _load_paths(paths)


def _load_paths(paths: Sequence[Path]) -> FixtureSet:
    combined = FixtureSet()
    for path in _expand(paths):
        loaded = load_fixture_file(path)
        combined = combined.overlaid_with(loaded)
        if loaded.management is not None and combined.management is not None:
            # tokens and ids are global: a later file may not reuse an earlier one's
            check_unique_across_orgs(combined.management, Where(str(path)) / "management" / "orgs")
    return combined


def load_fixture_file(path: Path) -> FixtureSet:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FixtureError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise FixtureError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise FixtureError(f"{path}: cannot read ({exc.strerror})") from None
    return parse_fixture_document(_parse(text, path), str(path))


def _parse(text: str, path: Path) -> object:
    """The stub's own parsed default set through orjson (quick, and written by a tool); a
    `.json` file as JSON (the YAML parser splits an escaped surrogate pair such as
    `\\ud83d\\ude80` into two lone halves); any other file as YAML."""
    if path == DEFAULT_SET:
        return orjson.loads(text)
    if path.suffix == ".json":
        return parse_json(text, str(path))
    return parse_yaml(text, str(path))


def parse_json(text: str, source: str) -> object:
    """JSON text to plain values, with a one-line error that names the source and the line; a
    key given twice in one object is an error, as in YAML (JSON parsers keep the last)."""
    try:
        document = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise FixtureError(
            f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise FixtureError(f"{source}: invalid JSON: nested too deeply") from None
    except ValueError as exc:
        raise FixtureError(f"{source}: invalid JSON: {exc}") from None
    check_document_size(document, source, len(text))
    return document


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) < len(pairs):
        keys = [key for key, _ in pairs]
        twice = next(key for index, key in enumerate(keys) if key in keys[:index])
        raise ValueError(f"the key {twice!r} appears twice in one object")
    return document


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def parse_yaml(text: str, source: str) -> object:
    """YAML (and so JSON) text to plain values, with a one-line error that names the source; a
    key given twice in one mapping is an error (YAML would quietly keep the last)."""
    import yaml  # here: a stub started without fixture files never pays for importing it

    try:
        document = _load_yaml(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise FixtureError(f"{source}: invalid YAML{where}: {exc.problem}{_hint(exc)}") from None
    except yaml.YAMLError as exc:
        raise FixtureError(f"{source}: invalid YAML: {exc}") from None
    except RecursionError:
        raise FixtureError(f"{source}: invalid YAML: nested too deeply") from None
    except (ValueError, OverflowError) as exc:  # a timestamp like 2001-13-01 fails to construct
        raise FixtureError(f"{source}: invalid YAML: {exc}") from None
    check_document_size(document, source, len(text))  # before anything expands its aliases
    return document


_YAML_HINTS = (
    (
        "expected <block end>, but found '<block",
        "usually a line indented differently from the lines beside it",
    ),
    ("mapping values are not allowed", "usually a key indented under a value, or ': ' in a value"),
    ("found character '\\t'", "YAML indents with spaces, never tabs"),
    ("could not find expected ':'", "usually a key without ': ' after it, or a quote left open"),
)
"""What PyYAML's problems usually mean in a fixture file, in the words of someone editing one."""


def _hint(error: yaml.MarkedYAMLError) -> str:
    problem = error.problem or ""
    for start, meaning in _YAML_HINTS:
        if problem.startswith(start):
            return f" ({meaning})"
    return ""


def _load_yaml(text: str) -> object:
    """libyaml's parser where PyYAML was built with it (four times faster on a large document);
    a document it refuses is read again by PyYAML's own, whose messages are the ones the docs
    show (and which has the last word on what is valid)."""
    import yaml

    fast, pure = _unique_key_loaders()
    if fast is not None:
        try:
            return yaml.load(text, Loader=fast)
        except yaml.YAMLError:
            pass
    return yaml.load(text, Loader=pure)


@functools.cache
def _unique_key_loaders() -> tuple[type[Any] | None, type[Any]]:
    """PyYAML's safe loaders (on libyaml's parser, if built, and its own), refusing a mapping
    that gives one key twice (made on first use: they need yaml imported)."""
    import yaml

    class UniqueKeys(yaml.constructor.SafeConstructor):
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    duplicate = key in seen
                except TypeError:  # unhashable: the safe loader says so itself
                    continue
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {key!r} appears twice", key_node.start_mark
                    )
                seen.add(key)
            return super().construct_mapping(node, deep)

    class PureLoader(UniqueKeys, yaml.SafeLoader):
        pass

    if not yaml.__with_libyaml__:
        return None, PureLoader

    class FastLoader(UniqueKeys, yaml.CSafeLoader):
        pass

    return FastLoader, PureLoader


def parse_fixture_document(document: object, source: str) -> FixtureSet:
    """Validate one parsed document; raise FixtureError naming `source` and the key path. An
    empty document, or one with no section, is a mistake (a file saved empty, a wrong file)."""
    where = Where(source)
    if document is None or document == {}:
        raise FixtureError(
            where.says(
                f"{'empty' if document is None else 'no section'}: a fixture document holds at "
                f"least one of {', '.join(_TOP_LEVEL_KEYS)} (see docs/reference/fixtures.md)"
            )
        )
    top = mapping(document, where, _TOP_LEVEL_KEYS)
    flags_doc = mapping(or_empty(top.get("flags")), where / "flags")
    flags = {key: parse_flag(key, body, where / "flags" / key) for key, body in flags_doc.items()}
    vendor = mapping(or_empty(top.get("vendor")), where / "vendor", _VENDOR_KEYS)
    return FixtureSet(
        flags=MappingProxyType(flags),
        vendor_flags=optional_json_object(vendor.get("flags"), where / "vendor" / "flags"),
        vendor_definitions=optional_json_object(
            vendor.get("definitions"), where / "vendor" / "definitions"
        ),
        management=(
            parse_management(top["management"], where / "management")
            if "management" in top
            else None
        ),
        keys=parse_keys_section(top["keys"], where / "keys") if "keys" in top else None,
    )


def _expand(paths: Sequence[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(
                p for p in path.iterdir() if p.suffix in FIXTURE_SUFFIXES and p.is_file()
            )
            if not found:
                raise FixtureError(f"{path}: no *.yaml, *.yml or *.json files in this directory")
            files.extend(found)
        else:
            files.append(path)
    return files


def write_default_set() -> None:
    """Parse fixtures/default.yaml into DEFAULT_SET (run after editing the YAML)."""
    source = default_fixture_dir() / "default.yaml"
    document = parse_yaml(source.read_text(encoding="utf-8"), str(source))
    parse_fixture_document(document, str(source))  # only a valid set is written
    DEFAULT_SET.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")


if __name__ == "__main__":
    write_default_set()
