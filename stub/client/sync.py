"""`StubClient`: the control plane over blocking HTTP (standard library only)."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Self, TypeVar, Unpack

from stub.client.calls import (
    Call,
    Calls,
    Control,
    check_count,
    check_requests,
    gaps_ms,
    passed,
    stub_error,
    wait_of,
)
from stub.client.models import (
    DEFAULT_WAIT_S,
    ArmedFault,
    ArmOptions,
    Json,
    ManagementState,
    NamespaceInfo,
    Recorded,
    RecordedRequest,
    RequestInFull,
    ServedFixtures,
    StubError,
    StubUnreachable,
    hidden_in_failures,
)

__tracebackhide__ = hidden_in_failures

T = TypeVar("T")


class FaultScope:
    """`with stub.fault(...) as armed:`. A class, not a generator: a refused arming then
    fails on the test's own line, with no frame of contextlib's in the report."""

    def __init__(self, client: StubClient, mode: str | None, arming: ArmOptions) -> None:
        self._client, self._mode, self._arming = client, mode, arming
        self._armed: ArmedFault | None = None

    def __enter__(self) -> ArmedFault:
        self._armed = self._client.arm(self._mode, **self._arming)
        return self._armed

    def __exit__(self, *exc_info: object) -> None:
        if self._armed is not None:
            self._client._disarm_quietly(self._armed.id)


class StubClient(Control):
    """The control plane over blocking HTTP (standard library only)."""

    def health(self) -> bool:
        return self._run(Calls.health())

    def reset(self) -> None:
        self._run(Calls.reset())

    def arm(self, mode: str | None = None, **options: Unpack[ArmOptions]) -> ArmedFault:
        """Arm a fault (or a `sequence` of them); `apply_to` defaults to every route."""
        return self._run(Calls.arm(mode, options))

    def fault(self, mode: str | None = None, **arming: Unpack[ArmOptions]) -> FaultScope:
        """Arm a fault for the block, then disarm just that one (if it has not run out)."""
        return FaultScope(self, mode, arming)

    def armed(self) -> list[ArmedFault]:
        return self._run(Calls.armed())

    def disarm(self, fault_id: int) -> None:
        self._run(Calls.disarm(fault_id))

    def clear_faults(self) -> None:
        self._run(Calls.clear_faults())

    def recorded(self) -> Recorded:
        return self._run(Calls.recorded())

    def events(self) -> list[Json]:
        return self.recorded().events

    def svc_events(self) -> list[Json]:
        return self.recorded().svc_events

    def targets(self) -> list[Json]:
        return self.recorded().targets

    def requests(self, route: str | None = None) -> list[RecordedRequest]:
        """What clients sent (to `route`), in the order it arrived, each with its body
        (`.text`, `.json()`); a request is listed once it has ended."""
        return self._run(Calls.requests(route))

    def coverage(self, scope: str = "namespace", profile: str | None = None) -> Json:
        """What the namespace's requests met (`scope="run"`: the whole run's), route by
        outcome, and each profile's gaps in words (`GET /_test/coverage`)."""
        return self._run(Calls.coverage(scope, profile))

    def offline_url(self) -> str:
        """An address where nothing listens (every connection refused at once), the stub's
        for as long as it runs: for a test of a client's offline behaviour."""
        return self._run(Calls.offline_url())

    def request(self, seq: int) -> RequestInFull:
        """One recorded request in full: the body it sent, the answer it got, and a curl line
        that sends it again."""
        return self._run(Calls.request(seq))

    def snapshot(self) -> str:
        """The inspector page of this namespace as one self-contained HTML file (what the
        pytest plugin writes for a failed test)."""
        return self._run(Calls.snapshot())

    def set_fixtures(
        self, document: Mapping[str, Any] | str | Path, *, merge: bool = False
    ) -> list[str]:
        """Serve these fixtures (a mapping, YAML text or a file path) until reset."""
        return self._run(Calls.set_fixtures(document, merge))

    def served_fixtures(self) -> ServedFixtures:
        """The flag keys served, and with `--watch` how many changes to the files were served
        and why the last was refused."""
        return self._run(Calls.served_fixtures())

    def seed_management(
        self, section: Mapping[str, Any] | str | Path, *, merge: bool = False
    ) -> ManagementState:
        """Re-seed the management plane until reset (or with `merge`, overlay organisations):
        a `management:` section's content, or a fixture file holding one (a mapping, YAML
        text or a file path); runtime flags stay."""
        return self._run(Calls.seed_management(section, merge))

    def set_rate_limit(
        self, per_second: float | None = None, *, per_key: Mapping[str, float] | None = None
    ) -> None:
        """Per-key rate limits until reset (requests a second; `per_key` overrides); no
        arguments lift them. Every key's window starts afresh."""
        self._run(Calls.set_rate_limit(per_second, per_key))

    def assert_no_warnings(self) -> None:
        """No recorded request used a key where the service would refuse it (the wrong plane,
        a browser key outside its scope); the failure lists the ones that did."""
        passed(self._run(Calls.check("no-warnings", {})))

    def management(self) -> ManagementState:
        """The management plane as it is now, every organisation: for asserting what a
        tool created, changed or deleted."""
        return self._run(Calls.management())

    def create_namespace(
        self,
        name: str | None = None,
        *,
        test: str | None = None,
        keys: Sequence[str] = (),
        fixtures: Mapping[str, Any] | str | Path | None = None,
    ) -> Self:
        """Create namespace `name` (or one named from `test`, a test's identity, by the stub's
        rule for every helper) (its own fixtures, else the start-up ones; requests that
        name no namespace but present one of `keys` are served in it) and return a client in
        it. A name in use, or a key bound elsewhere, is a 409 StubError."""
        if (name is None) == (test is None):
            raise ValueError("create_namespace(): give a name, or test= to have the stub make one")
        made = self._run(Calls.create_namespace(name, keys, test))
        scoped = self.in_namespace(made.name)
        if fixtures is not None:
            scoped.set_fixtures(fixtures)
        return scoped

    def namespaces(self) -> list[NamespaceInfo]:
        """Every namespace (the default one first) and what each holds."""
        return self._run(Calls.namespaces())

    def delete_namespace(self, name: str | None = None) -> None:
        """Delete namespace `name` (by default this client's) and all it holds."""
        self._run(Calls.delete_namespace(self._namespace_name(name)))

    def set_vendor_flags(self, body: Mapping[str, Any]) -> list[str]:
        return self._run(Calls.set_vendor_flags(body))

    def wait_for_events(self, n: int, timeout: float = DEFAULT_WAIT_S) -> list[Json]:
        """Vendor batch items, once at least `n` arrived (SDKs flush in the background)."""
        got = self._run(Calls.recorded({"minEvents": n}, timeout)).events
        return check_count("events", got, n, timeout)

    def wait_for_svc_events(self, n: int, timeout: float = DEFAULT_WAIT_S) -> list[Json]:
        got = self._run(Calls.recorded({"minSvcEvents": n}, timeout)).svc_events
        return check_count("svcEvents", got, n, timeout)

    def wait_for_targets(self, n: int, timeout: float = DEFAULT_WAIT_S) -> list[Json]:
        got = self._run(Calls.recorded({"minTargets": n}, timeout)).targets
        return check_count("targets", got, n, timeout)

    def wait_for_requests(
        self, n: int, route: str | None = None, timeout: float = DEFAULT_WAIT_S
    ) -> list[RecordedRequest]:
        got = self._run(Calls.requests(route, n, timeout))
        return check_requests(route, got, n, timeout)

    def assert_exposure(
        self,
        flag_key: str,
        targeting_key: str,
        variant: str | None = None,
        timeout: float = 0,
    ) -> None:
        """An exposure for this flag and targeting key was captured (and, if given, variant),
        waited for up to `timeout` seconds; the failure, in the stub's words, lists those that
        were."""
        wanted = {"flagKey": flag_key, "targetingKey": targeting_key}
        if variant is not None:
            wanted["variant"] = variant
        passed(self._run(Calls.check("exposure", wanted, timeout)))

    def gaps_ms(self, route: str) -> list[float]:
        """The time between each request to `route` and the next, in ms: how a client spaced
        its retries."""
        return gaps_ms(self.requests(route))

    def assert_no_retry_before_retry_after(self, route: str) -> None:
        """Every request to `route` that followed an answer carrying `Retry-After` waited at
        least that long after it; the failure lists the ones that came back early."""
        passed(self._run(Calls.check("retry-after", {"route": route})))

    def assert_no_request(self, route: str) -> None:
        passed(self._run(Calls.check("no-request", {"route": route})))

    def _disarm_quietly(self, fault_id: int) -> None:
        try:
            self.disarm(fault_id)
        except StubError as exc:
            if exc.status != 404:  # 404: it ran out by itself
                raise

    def _run(self, call: Call[T]) -> T:
        request = urllib.request.Request(
            call.url(self),
            data=call.body,
            method=call.method,
            headers={**self._headers, "Content-Type": call.content_type},
        )
        try:
            with urllib.request.urlopen(request, timeout=self._timeout_s + wait_of(call)) as answer:
                return call.read(call.decoded(answer.read()))
        except urllib.error.HTTPError as exc:
            with exc:
                raise stub_error(exc.code, exc.read(), call.source) from None
        except urllib.error.URLError as exc:
            raise StubUnreachable(self.base_url, str(exc.reason)) from None
        except (TimeoutError, ConnectionError) as exc:  # once connected: silent, or cut off
            raise StubUnreachable(self.base_url, str(exc) or type(exc).__name__) from None
