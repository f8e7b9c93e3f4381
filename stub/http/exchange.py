"""A request's journal entry: the one place a `RequestRecord` is made, for the routed lane and
the direct lane alike, once its answer was handed to the transport (or, for a client gone,
never was)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from stub.coverage import Key, key_of
from stub.faults.arming import Fired
from stub.state import RawHeaders, RequestRecord, StubState, Upstreamed, bounded_headers


def record(
    state: StubState,
    generation: int,
    seq: int,
    method: str,
    target: str,
    route: str | None,
    started: float,
    ended: float,
    status: int | None,
    fired: Fired | None,
    warning: str | None,
    raw_headers: RawHeaders,
    gone: bool,
    upstreamed: Upstreamed | None,
    body: bytes | None,
    answer_headers: Mapping[str, str] | None,
    answer_body: bytes | None,
) -> None:
    """Journal one exchange (see `RequestRecord` for each field), once its answer was handed
    to the transport, or was not and never will be; unless a reset cleared the journal since
    it began (`generation`): a request of the last test never lands in the next test's log.
    `started` and `ended` are `time.perf_counter()` readings: when it arrived, and just before
    its answer went out (so no client can have had it sooner: a Retry-After counts from
    there), or when it ended unanswered. Whatever the generation, it counts in the coverage:
    it happened."""
    met = route if status == 200 and fired is None else coverage_key(route, status, fired)
    try:
        state.coverage.cells[met] += 1  # no call on the plain path: under 1 % of an evaluate
    except KeyError:
        state.coverage.first(met)
    if state.generation == generation:
        state.requests.append(
            RequestRecord(  # by position: by keyword it costs 2.6 % of an evaluate's instructions
                seq,
                method,
                target,
                route,
                status,
                fired,
                started,
                ended - started,
                warning,
                bounded_headers(raw_headers),
                gone,
                upstreamed,
                body,
                answer_headers,
                answer_body,
                (len(body) if body else 0) + (len(answer_body) if answer_body else 0),
            )
        )


class SentHeaders(Mapping[str, str]):
    """An answer's headers as the journal reads them, from the very bytes sent (the fast
    lane's): read when a test or the inspector asks, not on the request's way out."""

    __slots__ = ("_head",)

    def __init__(self, head: bytes) -> None:
        self._head = head

    def _pairs(self) -> Iterator[tuple[str, str]]:
        for line in self._head.decode("latin-1").split("\r\n")[1:]:
            if line:
                name, _, value = line.partition(": ")
                yield name, value

    def __getitem__(self, name: str) -> str:
        for one, value in self._pairs():
            if one.lower() == name.lower():
                return value
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self._pairs())

    def __len__(self) -> int:
        return sum(1 for _ in self._pairs())


def coverage_key(route: str | None, status: int | None, fired: Fired | None) -> Key:
    """The coverage cell a request counts in (stub/coverage.py): built here alone, for the
    count and for whoever names a recorded request's outcome (the inspector)."""
    if fired is None:
        return key_of(route, status, None, None)
    return key_of(route, status, fired.spec.mode.value if fired.spec else "none", fired.source)
