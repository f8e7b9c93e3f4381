"""`AsyncStubClient`: the control plane over aiohttp, which is imported on the first call."""

from __future__ import annotations

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


class AsyncFaultScope:
    """`async with stub.fault(...) as armed:`; a class for the reason `FaultScope` is one."""

    def __init__(self, client: AsyncStubClient, mode: str | None, arming: ArmOptions) -> None:
        self._client, self._mode, self._arming = client, mode, arming
        self._armed: ArmedFault | None = None

    async def __aenter__(self) -> ArmedFault:
        self._armed = await self._client.arm(self._mode, **self._arming)
        return self._armed

    async def __aexit__(self, *exc_info: object) -> None:
        if self._armed is None:
            return
        try:
            await self._client.disarm(self._armed.id)
        except StubError as exc:
            if exc.status != 404:  # it ran out meanwhile
                raise


class AsyncStubClient(Control):
    """The control plane over aiohttp, for tests whose stub runs in their own event loop."""

    _session: Any = None  # made on first use: a session needs a running event loop

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def health(self) -> bool:
        return await self._run(Calls.health())

    async def reset(self) -> None:
        await self._run(Calls.reset())

    async def arm(self, mode: str | None = None, **options: Unpack[ArmOptions]) -> ArmedFault:
        """Arm a fault (or a `sequence` of them); `apply_to` defaults to every route."""
        return await self._run(Calls.arm(mode, options))

    def fault(self, mode: str | None = None, **arming: Unpack[ArmOptions]) -> AsyncFaultScope:
        """`async with`: arm a fault for the block, then disarm just that one (if it has not
        run out)."""
        return AsyncFaultScope(self, mode, arming)

    async def armed(self) -> list[ArmedFault]:
        return await self._run(Calls.armed())

    async def disarm(self, fault_id: int) -> None:
        await self._run(Calls.disarm(fault_id))

    async def clear_faults(self) -> None:
        await self._run(Calls.clear_faults())

    async def recorded(self) -> Recorded:
        return await self._run(Calls.recorded())

    async def events(self) -> list[Json]:
        return (await self.recorded()).events

    async def svc_events(self) -> list[Json]:
        return (await self.recorded()).svc_events

    async def targets(self) -> list[Json]:
        return (await self.recorded()).targets

    async def requests(self, route: str | None = None) -> list[RecordedRequest]:
        """What clients sent (to `route`), in the order it arrived, each with its body
        (`.text`, `.json()`); a request is listed once it has ended."""
        return await self._run(Calls.requests(route))

    async def coverage(self, scope: str = "namespace", profile: str | None = None) -> Json:
        """What the namespace's requests met (`scope="run"`: the whole run's), route by
        outcome, and each profile's gaps in words (`GET /_test/coverage`)."""
        return await self._run(Calls.coverage(scope, profile))

    async def offline_url(self) -> str:
        """An address where nothing listens (every connection refused at once), the stub's
        for as long as it runs: for a test of a client's offline behaviour."""
        return await self._run(Calls.offline_url())

    async def request(self, seq: int) -> RequestInFull:
        """One recorded request in full: the body it sent, the answer it got, and a curl line
        that sends it again."""
        return await self._run(Calls.request(seq))

    async def snapshot(self) -> str:
        """The inspector page of this namespace as one self-contained HTML file."""
        return await self._run(Calls.snapshot())

    async def set_fixtures(
        self, document: Mapping[str, Any] | str | Path, *, merge: bool = False
    ) -> list[str]:
        return await self._run(Calls.set_fixtures(document, merge))

    async def served_fixtures(self) -> ServedFixtures:
        """The flag keys served, and with `--watch` how many changes to the files were served
        and why the last was refused."""
        return await self._run(Calls.served_fixtures())

    async def seed_management(
        self, section: Mapping[str, Any] | str | Path, *, merge: bool = False
    ) -> ManagementState:
        """Re-seed the management plane until reset (or with `merge`, overlay organisations):
        a `management:` section's content, or a fixture file holding one (a mapping, YAML
        text or a file path); runtime flags stay."""
        return await self._run(Calls.seed_management(section, merge))

    async def set_rate_limit(
        self, per_second: float | None = None, *, per_key: Mapping[str, float] | None = None
    ) -> None:
        """Per-key rate limits until reset (requests a second; `per_key` overrides); no
        arguments lift them. Every key's window starts afresh."""
        await self._run(Calls.set_rate_limit(per_second, per_key))

    async def assert_no_warnings(self) -> None:
        """No recorded request used a key where the service would refuse it (the wrong plane,
        a browser key outside its scope); the failure lists the ones that did."""
        passed(await self._run(Calls.check("no-warnings", {})))

    async def management(self) -> ManagementState:
        """The management plane as it is now, every organisation: for asserting what a
        tool created, changed or deleted."""
        return await self._run(Calls.management())

    async def create_namespace(
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
        it (a client with its own session: close it too). A name in use, or a key bound
        elsewhere, is a 409 StubError."""
        if (name is None) == (test is None):
            raise ValueError("create_namespace(): give a name, or test= to have the stub make one")
        made = await self._run(Calls.create_namespace(name, keys, test))
        scoped = self.in_namespace(made.name)
        if fixtures is not None:
            await scoped.set_fixtures(fixtures)
        return scoped

    async def namespaces(self) -> list[NamespaceInfo]:
        """Every namespace (the default one first) and what each holds."""
        return await self._run(Calls.namespaces())

    async def delete_namespace(self, name: str | None = None) -> None:
        """Delete namespace `name` (by default this client's) and all it holds."""
        await self._run(Calls.delete_namespace(self._namespace_name(name)))

    async def set_vendor_flags(self, body: Mapping[str, Any]) -> list[str]:
        return await self._run(Calls.set_vendor_flags(body))

    async def wait_for_svc_events(self, n: int, timeout: float = DEFAULT_WAIT_S) -> list[Json]:
        got = (await self._run(Calls.recorded({"minSvcEvents": n}, timeout))).svc_events
        return check_count("svcEvents", got, n, timeout)

    async def wait_for_events(self, n: int, timeout: float = DEFAULT_WAIT_S) -> list[Json]:
        got = (await self._run(Calls.recorded({"minEvents": n}, timeout))).events
        return check_count("events", got, n, timeout)

    async def wait_for_targets(self, n: int, timeout: float = DEFAULT_WAIT_S) -> list[Json]:
        got = (await self._run(Calls.recorded({"minTargets": n}, timeout))).targets
        return check_count("targets", got, n, timeout)

    async def wait_for_requests(
        self, n: int, route: str | None = None, timeout: float = DEFAULT_WAIT_S
    ) -> list[RecordedRequest]:
        got = await self._run(Calls.requests(route, n, timeout))
        return check_requests(route, got, n, timeout)

    async def assert_exposure(
        self,
        flag_key: str,
        targeting_key: str,
        variant: str | None = None,
        timeout: float = 0,
    ) -> None:
        wanted = {"flagKey": flag_key, "targetingKey": targeting_key}
        if variant is not None:
            wanted["variant"] = variant
        passed(await self._run(Calls.check("exposure", wanted, timeout)))

    async def gaps_ms(self, route: str) -> list[float]:
        """The time between each request to `route` and the next, in ms: how a client spaced
        its retries."""
        return gaps_ms(await self.requests(route))

    async def assert_no_retry_before_retry_after(self, route: str) -> None:
        """Every request to `route` that followed an answer carrying `Retry-After` waited at
        least that long after it; the failure lists the ones that came back early."""
        passed(await self._run(Calls.check("retry-after", {"route": route})))

    async def assert_no_request(self, route: str) -> None:
        passed(await self._run(Calls.check("no-request", {"route": route})))

    async def _run(self, call: Call[T]) -> T:
        import aiohttp  # here, not at the top: the pytest plugin imports this module at start-up

        if self._session is None:
            self._session = aiohttp.ClientSession(headers=self._headers)
        timeout = aiohttp.ClientTimeout(total=self._timeout_s + wait_of(call))
        try:
            async with self._session.request(
                call.method,
                call.url(self),
                data=call.body,
                headers={"Content-Type": call.content_type},
                timeout=timeout,
            ) as answer:
                raw = await answer.read()
        except (aiohttp.ClientConnectionError, TimeoutError) as exc:
            raise StubUnreachable(self.base_url, str(exc) or type(exc).__name__) from None
        if answer.status >= 400:
            raise stub_error(answer.status, raw, call.source)
        return call.read(call.decoded(raw))
