package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;

/**
 * The run's coverage: typed, gated, and at the run's end (JUnit closing its root store, where the
 * run's stub stops) summarised on standard output and written as {@code coverage.json} where the
 * journals go. Proven on a run of its own ({@link Launch}) with a stub of its own (other options
 * than this run's), whose one test arms only a 500 on evaluate.
 */
class CoverageTest {
    /** Options of the child run's own, so that its stub, and so its run's coverage, is its own. */
    private static final String OWN_STUB = "--namespace-max-recorded 1001";

    @Test
    void aRunThatArmedOnlyA500OnEvaluateIsToldWhatItNeverMet(@TempDir Path journals) throws IOException {
        assumeTrue(System.getenv("SVC_STUB_URL") == null, "a stub at SVC_STUB_URL is shared: its run is not the child's alone");
        Launch.Outcome outcome = Launch.withParameter("svcstub.args", OWN_STUB)
                .and("svcstub.journal-dir", journals.toString())
                .run(ArmsOnlyA500.class);

        // the gate, through the runner: under its threshold, the test fails naming the gaps
        String failure = outcome.failure("evaluatesTwiceThenGates");
        assertTrue(failure.startsWith("svc-stub coverage: runtime 1 of 15 cells met (6.7 %), under 80 %; gaps:"), failure);
        assertTrue(failure.contains("  - evaluate never met a 429 with Retry-After"), failure);

        // the run's end: the full report where the journals go, and the summary said from it
        // (the failed test's journal beside it)
        assertEquals(2, listed(journals).size(), listed(journals).toString());
        Coverage report = Coverage.parse(Files.readString(journals.resolve(Coverage.FILE)));
        assertEquals("run", report.scope());
        assertEquals(List.of(new Coverage.Cell("evaluate", "fault 500", 2)), report.cells());
        String summary = report.summary();
        assertTrue(summary.startsWith("svc-stub coverage: runtime 1 of 15 cells met; gaps: evaluate was never answered successfully; "), summary);
        assertTrue(summary.contains("evaluate never met a 429 with Retry-After"), summary);
        assertTrue(summary.endsWith("; and 9 more"), summary); // the first five of 14; the report has every one
        assertEquals(1, summary.lines().count(), summary); // the profiles it met nothing of stay quiet
        report.assertCovers("runtime", 5); // 1 of 15 is over 5 %
        assertThrows(AssertionFailedError.class, () -> report.assertCovers("runtime"));
    }

    @Test
    void aReportOfNothingMetIsOneLineAndAnUnknownProfileIsNamed() {
        Coverage nothing = Coverage.parse("""
                {"scope": "run", "cells": [], "profiles": {"runtime": {"name": "runtime", "description": "",
                  "met": 0, "of": 15, "gaps": [{"route": "evaluate", "expected": ["ok"], "says": "evaluate was never answered successfully"}]}}}
                """);
        assertEquals("svc-stub coverage: no cell of any profile met (runtime 0 of 15)", nothing.summary());
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> nothing.assertCovers("vendor", 50));
        assertEquals("svc-stub coverage: no profile 'vendor' in the report (it has runtime)", unknown.getMessage());
        assertThrows(IllegalArgumentException.class, () -> nothing.assertCovers("runtime", 101));
    }

    private static List<Path> listed(Path directory) throws IOException {
        try (var files = Files.list(directory)) {
            return files.toList();
        }
    }

    /** A suite that arms only a 500 on evaluate, calls it twice, then holds the run to 80 % of the runtime profile. */
    @ChildTest
    @ExtendWith(SvcStubExtension.class)
    static class ArmsOnlyA500 {
        @Test
        void evaluatesTwiceThenGates(SvcStub stub) {
            stub.arm(Fault.of(FaultMode.HTTP_500).applyTo(Selector.EVALUATE));
            assertEquals(500, Http.evaluate(stub.url(), Map.of(), Http.HANG_GUARD).status);
            assertEquals(500, Http.evaluate(stub.url(), Map.of(), Http.HANG_GUARD).status);
            Coverage coverage = stub.coverage();
            assertEquals(List.of(new Coverage.Cell("evaluate", "fault 500", 2)), coverage.cells());
            coverage.assertCovers("runtime", 80);
        }
    }
}
