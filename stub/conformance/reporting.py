"""What a run reports once it is over: the JUnit XML file and the one-line summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from xml.etree import ElementTree

from stub.conformance.runner import Result, safe_text


def junit_xml(results: Sequence[Result], adapter_name: str) -> bytes:
    suite = ElementTree.Element(
        "testsuite",
        name=f"svc-stub conformance: {adapter_name}",
        tests=str(len(results)),
        failures=str(sum(result.failed for result in results)),
        errors="0",
        skipped=str(sum(result.verdict in ("SKIP", "XFAIL") for result in results)),
        time=f"{sum(result.duration_s for result in results):.3f}",
    )
    for result in results:
        case = ElementTree.SubElement(
            suite,
            "testcase",
            classname=result.case.area,
            name=result.case.name,
            time=f"{result.duration_s:.3f}",
        )
        message = safe_text("; ".join(result.problems), limit=10_000)
        if result.failed:
            ElementTree.SubElement(case, "failure", message=result.case.description).text = message
        elif result.verdict in ("SKIP", "XFAIL"):
            ElementTree.SubElement(case, "skipped", message=f"{result.verdict}: {message}")
        elif result.verdict == "WARN":
            ElementTree.SubElement(case, "system-out").text = message
    written: bytes = ElementTree.tostring(suite, encoding="utf-8", xml_declaration=True)
    return written


def summary(results: Sequence[Result]) -> str:
    counts = Counter(result.verdict for result in results)
    failed = counts["FAIL"] + counts["XPASS"]
    parts = [f"{counts['PASS'] + counts['WARN']} passed", f"{failed} failed"]
    for verdict, label in (
        ("WARN", "with warnings"),
        ("XFAIL", "expected failures"),
        ("SKIP", "skipped"),
    ):
        if counts[verdict]:
            parts.append(f"{counts[verdict]} {label}")
    return ", ".join(parts)
