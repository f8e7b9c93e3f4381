package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;

/**
 * The run's coverage: typed, gated, and at the run's end (JUnit closing its root store, where the
 * run's stub stops) the stub's summary printed on standard output and the report written as
 * {@code coverage.json} where the journals go. Proven on a run of its own, in a JVM of its own
 * ({@link Launch#main}), so its standard output is what a user's build shows, with a stub of its
 * own (other options than this run's), whose one test arms only a 500 on evaluate.
 */
class CoverageTest {
    /** Options of the child run's own, so that its stub, and so its run's coverage, is its own. */
    private static final String OWN_STUB = "--namespace-max-recorded 1001";
    private static final long HANG_GUARD_SECONDS = 120;

    @Test
    void aRunThatArmedOnlyA500OnEvaluateIsToldWhatItNeverMet(@TempDir Path journals) throws Exception {
        assumeTrue(System.getenv("SVC_STUB_URL") == null, "a stub at SVC_STUB_URL is shared: its run is not the child's alone");
        List<String> said = runInAJvmOfItsOwn(ArmsOnlyA500.class, journals);

        // the gate, through the runner: under its threshold, the test fails naming the gaps
        String failure = String.join("\n", said);
        assertTrue(failure.contains("test evaluatesThenGates failed: svc-stub coverage: runtime 2 of 15 cells met (13.3 %), under 80 %; gaps:"), failure);
        assertTrue(failure.contains("  - evaluate never met a 429 with Retry-After"), failure);

        // the run's end, as the build shows it: the stub's summary, verbatim, then where the full
        // report is (the failed test's journal beside it)
        Path file = journals.resolve(Coverage.FILE);
        assertEquals(List.of(
                "svc-stub coverage: runtime 2 of 15 cells met; gaps: evaluate never met a 401; evaluate never met a 429 with Retry-After; "
                        + "evaluate never met a timeout (a delay or a hang); evaluate never met a malformed answer (invalid_json); "
                        + "evaluate never met a truncated answer; and 8 more",
                "svc-stub coverage: fixture flags read 1 of 9; never read: dark-mode, discount-rate, enterprise-dashboard, legacy-banner, "
                        + "max-items, and 3 more",
                "svc-stub coverage report: " + file),
                said.stream().filter(line -> line.startsWith("svc-stub coverage")).toList(), String.join("\n", said));
        assertEquals(2, listed(journals).size(), listed(journals).toString());

        // the full report, typed: the flags never read by name, every gap, the same summary
        Coverage report = Coverage.parse(Files.readString(file));
        assertEquals("run", report.scope());
        assertEquals(List.of(new Coverage.Cell("evaluate", "fault 500", 2), new Coverage.Cell("evaluate", "ok", 1)), report.cells());
        assertEquals(List.of("checkout-v2"), report.flags().read());
        assertTrue(report.flags().neverRead().contains("ui-config"), report.flags().toString()); // one the summary counts, not names
        assertEquals(8, report.flags().neverRead().size(), report.flags().toString());
        assertEquals(9, report.flags().of());
        assertEquals(13, report.profile("runtime").gaps().size());
        assertEquals(said.stream().filter(line -> line.startsWith("svc-stub coverage: ")).toList(), report.summary());
        report.assertCovers("runtime", 10); // 2 of 15 is over 10 %
        assertThrows(AssertionFailedError.class, () -> report.assertCovers("runtime"));
    }

    @Test
    void aSavedReportIsReadAsTheStubWroteItAndAnUnknownProfileIsNamed() {
        Coverage nothing = Coverage.parse("""
                {"scope": "run", "cells": [], "profiles": {"runtime": {"name": "runtime", "description": "",
                  "met": 0, "of": 15, "gaps": [{"route": "evaluate", "expected": ["ok"], "says": "evaluate was never answered successfully"}]}},
                 "flags": {"read": [], "neverRead": ["checkout-v2"], "of": 1},
                 "summary": ["svc-stub coverage: no cell of any profile met (runtime 0 of 15)",
                             "svc-stub coverage: fixture flags read 0 of 1; never read: checkout-v2"]}
                """);
        assertEquals(List.of("svc-stub coverage: no cell of any profile met (runtime 0 of 15)",
                "svc-stub coverage: fixture flags read 0 of 1; never read: checkout-v2"), nothing.summary());
        assertEquals(new Coverage.Flags(List.of(), List.of("checkout-v2"), 1), nothing.flags());
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> nothing.assertCovers("vendor", 50));
        assertEquals("svc-stub coverage: no profile 'vendor' in the report (it has runtime)", unknown.getMessage());
        assertThrows(IllegalArgumentException.class, () -> nothing.assertCovers("runtime", 101));
    }

    /**
     * Runs {@code tests} as a build would, in a JVM of its own with its own stub and journals:
     * what it printed (its standard output and error), a line each.
     */
    private static List<String> runInAJvmOfItsOwn(Class<?> tests, Path journals) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dsvcstub.args=" + OWN_STUB, "-Dsvcstub.journal-dir=" + journals,
                "-cp", System.getProperty("java.class.path"), Launch.class.getName(), tests.getName())
                .redirectErrorStream(true);
        builder.environment().remove(RunStub.COVERAGE_VARIABLE);
        Process runner = builder.start();
        try {
            runner.getOutputStream().close();
            CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> {
                try {
                    return new String(runner.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                } catch (IOException closed) {
                    return "(" + closed + ")";
                }
            });
            String text = output.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS); // a hang guard, not a budget
            assertTrue(runner.waitFor(HANG_GUARD_SECONDS, TimeUnit.SECONDS), text);
            assertTrue(text.contains("tests run: 1"), text);
            return text.lines().toList();
        } finally {
            runner.destroyForcibly();
        }
    }

    private static List<Path> listed(Path directory) throws IOException {
        try (var files = Files.list(directory)) {
            return files.toList();
        }
    }

    /**
     * A suite that arms only a 500 on evaluate for two calls, evaluates checkout-v2 once after it,
     * then holds the run to 80 % of the runtime profile.
     */
    @ChildTest
    @ExtendWith(SvcStubExtension.class)
    static class ArmsOnlyA500 {
        @Test
        void evaluatesThenGates(SvcStub stub) {
            ArmedFault outage = stub.arm(Fault.of(FaultMode.HTTP_500).applyTo(Selector.EVALUATE));
            assertEquals(500, Http.evaluate(stub.url(), Map.of(), Http.HANG_GUARD).status);
            assertEquals(500, Http.evaluate(stub.url(), Map.of(), Http.HANG_GUARD).status);
            outage.close();
            assertEquals(200, Http.evaluate(stub.url(), "checkout-v2").status);
            Coverage coverage = stub.coverage();
            assertEquals(List.of("checkout-v2"), coverage.flags().read());
            coverage.assertCovers("runtime", 80);
        }
    }
}
