"""The test of the tester: a client written from the spec (tests/spec_client.py) passes every
case of the kit, and each violation of the spec's client rules planted in it, one at a time,
fails the case named beside it. The catch rate that docs/guides/client-libraries.md states is
this module's count."""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import SpawnedStub, spawn_stub
from spec_client import PLANTS, STRICT_PLANTS, SpecAdapter
from stub.conformance.cases import load_cases
from stub.conformance.protocol import Adapter
from stub.conformance.runner import Result, Run, run_cases

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guides" / "client-libraries.md"
AREAS = {"reads", "faults", "registration", "exposures", "lifecycle", "configuration"}


@pytest.fixture(scope="module")
def stub() -> Iterator[SpawnedStub]:
    with spawn_stub(read_log=False) as spawned:
        yield spawned


@pytest.fixture(scope="module")
def adapter() -> Iterator[SpecAdapter]:
    with SpecAdapter() as serving:
        yield serving


def run(
    stub: SpawnedStub, adapter: SpecAdapter, plant: str, cases: list[str], strict: bool = False
) -> dict[str, Result]:
    kit = Adapter(adapter.url(plant))
    chosen = [case for case in load_cases(cases) if case.plane == "runtime"]
    results = run_cases(Run(stub.url, kit, kit.info(), strict), chosen, 8, lambda _: None)
    return {result.case.id: result for result in results}


class TestTheSpecClient:
    def test_unplanted_it_passes_every_runtime_case(
        self, stub: SpawnedStub, adapter: SpecAdapter
    ) -> None:
        results = run(stub, adapter, "none", [], strict=True)
        assert set(results) == {case.id for case in load_cases() if case.plane == "runtime"}
        failed = {case: result.problems for case, result in results.items() if result.failed}
        assert failed == {}
        assert {result.verdict for result in results.values()} == {"PASS"}


@pytest.fixture(scope="module")
def verdicts(stub: SpawnedStub, adapter: SpecAdapter) -> dict[str, Result]:
    """Each plant against the case named beside it, all at once: a case that waits for a
    request the plant never sends waits its full time, and these waits overlap."""

    def caught(plant: str) -> Result:
        case = PLANTS[plant].caught_by
        return run(stub, adapter, plant, [case])[case]

    with ThreadPoolExecutor(16) as pool:
        return dict(zip(PLANTS, pool.map(caught, PLANTS), strict=True))


class TestEveryPlantedViolationIsCaught:
    @pytest.mark.parametrize("plant", sorted(PLANTS))
    def test_by_a_fail_of_the_case_named_beside_it(
        self, verdicts: dict[str, Result], plant: str
    ) -> None:
        result = verdicts[plant]
        assert result.verdict == "FAIL", f"{plant} ({PLANTS[plant].rule}) passed {result.case.id}"
        assert result.case.id == PLANTS[plant].caught_by

    @pytest.mark.parametrize("plant", sorted(STRICT_PLANTS))
    def test_where_the_spec_is_silent_by_a_warning_that_strict_makes_a_fail(
        self, stub: SpawnedStub, adapter: SpecAdapter, plant: str
    ) -> None:
        case = STRICT_PLANTS[plant].caught_by
        assert run(stub, adapter, plant, [case])[case].verdict == "WARN"
        assert run(stub, adapter, plant, [case], strict=True)[case].verdict == "FAIL"

    def test_the_plants_cover_every_area_of_the_spec_rules(self) -> None:
        assert len(PLANTS) >= 30
        plants = {**PLANTS, **STRICT_PLANTS}.values()
        assert {plant.caught_by.split("/")[0] for plant in plants} == AREAS
        runtime = {case.id for case in load_cases() if case.plane == "runtime"}
        assert {plant.caught_by for plant in plants} <= runtime

    def test_the_guide_states_this_catch_rate(self) -> None:
        text = " ".join(GUIDE.read_text(encoding="utf-8").split())
        stated = re.search(r"catches (\d+) of (\d+) planted violations", text)
        assert stated is not None, "the guide states no catch rate"
        assert stated.groups() == (str(len(PLANTS)), str(len(PLANTS)))
