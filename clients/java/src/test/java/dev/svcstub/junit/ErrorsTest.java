package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ParameterResolutionException;

/**
 * No stub to be had is one line that says what to do (a command that works on this machine),
 * and every test that asks for a SvcStub fails with it: first as the run's stub reports it, then
 * through the extension in a test run of its own (each of its tests gets the line; the stub is
 * reached, or tried, once).
 */
class ErrorsTest {
    /** This library runs from the clone of svc-stub two levels above clients/java: the line names it. */
    static final String CLONE = Path.of("../..").toAbsolutePath().normalize().toString();
    static final String INSTALL = "; install it from its clone (python3 -m venv .venv && .venv/bin/pip install " + CLONE
            + ") and set SVC_STUB_BIN=$PWD/.venv/bin/svc-stub, or SVC_STUB_URL to a running stub";
    static final String NO_COMMAND = "svc-stub: no svc-stub command (SVC_STUB_BIN is not set and none is on PATH)" + INSTALL;
    static final String DOES_NOT_START = "svc-stub: error: shared: the stub did not start: /nonexistent/flags.yaml: no such file";

    @ExtendWith(SvcStubExtension.class)
    @ChildTest
    static class NeedsAStub {
        @Test
        void first(SvcStub stub) {
            stub.requests();
        }

        @Test
        void second(SvcStub stub) {
            stub.requests();
        }
    }

    /** The line the run's stub fails with, given these environment variables (and no configuration parameter). */
    private static String lineWith(Map<String, String> environment) {
        RunStub run = new RunStub(new Settings(name -> Optional.empty(), environment));
        try {
            return assertThrows(SvcStubException.class, run::client).getMessage();
        } finally {
            run.close();
        }
    }

    /** Runs NeedsAStub with these parameters: the line both its tests failed with, the run's stub not had. */
    private static String lineThroughTheExtension(Launch launch) {
        return lineThroughTheExtension(launch, true);
    }

    /** {@code cached}: the run's stub could not be had, once for both tests (else each failed on its own). */
    private static String lineThroughTheExtension(Launch launch, boolean cached) {
        Launch.Outcome outcome = launch.run(NeedsAStub.class);
        String first = outcome.failure("first");
        assertEquals(first, outcome.failure("second"));
        Throwable one = outcome.result("first").getThrowable().orElseThrow();
        Throwable other = outcome.result("second").getThrowable().orElseThrow();
        assertEquals(ParameterResolutionException.class, one.getClass());
        // each test's failure its own (its own stack trace, never one object thrown on two threads), the first beneath
        assertNotSame(one.getCause(), other.getCause());
        assertEquals(one.getCause().getClass(), other.getCause().getClass());
        if (cached) {
            assertSame(one.getCause().getCause(), other.getCause().getCause());
            assertEquals(one.getCause().getClass(), one.getCause().getCause().getClass());
            assertEquals(one.getCause().getMessage(), one.getCause().getCause().getMessage());
        }
        assertEquals(1, first.lines().count(), first);
        return first;
    }

    private static void assumeNoUrlInTheEnvironment() {
        assumeTrue(System.getenv("SVC_STUB_URL") == null, "SVC_STUB_URL is set: the extension would use it rather than start a stub");
    }

    @Test
    void noCommand() {
        assertEquals(NO_COMMAND, lineWith(Map.of("PATH", "/nonexistent")));
        assertEquals(NO_COMMAND, lineWith(Map.of()));
        assertEquals("svc-stub: no svc-stub command (SVC_STUB_BIN=/nonexistent/svc-stub is no executable file)" + INSTALL,
                lineWith(Map.of("SVC_STUB_BIN", "/nonexistent/svc-stub")));
        assumeNoUrlInTheEnvironment();
        assertEquals("svc-stub: no svc-stub command (svcstub.bin=/nonexistent/svc-stub is no executable file)" + INSTALL,
                lineThroughTheExtension(Launch.withParameter("svcstub.bin", "/nonexistent/svc-stub")));
    }

    @Test
    void aStubThatDoesNotStart() {
        assumeNoUrlInTheEnvironment();
        assertEquals(DOES_NOT_START, lineThroughTheExtension(
                Launch.withParameter("svcstub.args", "--fixtures /nonexistent/flags.yaml")));
    }

    @Test
    @ExtendWith(SvcStubExtension.class)
    void aUrlWhereNothingAnswers(SvcStub stub) {
        String url = stub.offlineUrl();
        assertEquals("svc-stub: SVC_STUB_URL=" + url + " does not answer as svc-stub (connection refused);"
                + " start one there (svc-stub --port PORT) or unset SVC_STUB_URL to have one started",
                lineWith(Map.of("SVC_STUB_URL", url)));
        assertEquals("svc-stub: svcstub.url=" + url + " does not answer as svc-stub (connection refused);"
                + " start one there (svc-stub --port PORT) or unset svcstub.url to have one started",
                lineThroughTheExtension(Launch.withParameter("svcstub.url", url)));
    }

    @Test
    void aUrlWhereSomethingElseAnswers() throws IOException {
        try (FakeServer other = new FakeServer(Map.of())) {
            assertEquals("svc-stub: SVC_STUB_URL=" + other.url() + " does not answer as svc-stub (404 from /health: not here);"
                    + " start one there (svc-stub --port PORT) or unset SVC_STUB_URL to have one started",
                    lineWith(Map.of("SVC_STUB_URL", other.url() + "/")));
        }
        try (FakeServer page = new FakeServer(Map.of("/health", Map.entry(200, "<html>healthy</html>")))) {
            assertEquals("svc-stub: SVC_STUB_URL=" + page.url() + " does not answer as svc-stub (/health answers something"
                    + " other than svc-stub's JSON); start one there (svc-stub --port PORT) or unset SVC_STUB_URL to have one started",
                    lineWith(Map.of("SVC_STUB_URL", page.url())));
            int before = page.requests();
            String line = lineThroughTheExtension(Launch.withParameter("svcstub.url", page.url()));
            assertEquals("svc-stub: svcstub.url=" + page.url() + " does not answer as svc-stub (/health answers something"
                    + " other than svc-stub's JSON); start one there (svc-stub --port PORT) or unset svcstub.url to have one started",
                    line);
            assertEquals(1, page.requests() - before, "checked once, for both tests");
        }
    }

    @Test
    void aStubTooOld() throws IOException {
        try (FakeServer old = FakeServer.stubOfVersion("0.0.9")) {
            assertEquals("svc-stub: SVC_STUB_URL=" + old.url() + " is svc-stub 0.0.9, older than this package (0.1.0);"
                    + " upgrade it (.venv/bin/pip install --upgrade " + CLONE + ") and start it again",
                    lineWith(Map.of("SVC_STUB_URL", old.url())));
        }
    }

    @Test
    void aStubWithAControlTokenNeedsIt() {
        assumeNoUrlInTheEnvironment();
        Launch.Outcome withToken = Launch.withParameter("svcstub.args", "--control-token s3cret")
                .and("svcstub.control-token", "s3cret").run(NeedsAStub.class);
        assertEquals(Optional.empty(), withToken.result("first").getThrowable());
        String without = lineThroughTheExtension(Launch.withParameter("svcstub.args", "--control-token s3cret"), false);
        assertTrue(without.matches("svc-stub: POST /_test/namespaces: 401 \\w+: .*; set SVC_STUB_CONTROL_TOKEN to the stub's"
                + " --control-token"), without);
    }

    @Test
    void versionsAreComparedAsNumbers() {
        assertEquals(true, RunStub.recentEnough("0.1.0"));
        assertEquals(true, RunStub.recentEnough("0.1.1"));
        assertEquals(true, RunStub.recentEnough("0.10.0"));
        assertEquals(false, RunStub.recentEnough("1.0")); // not X.Y.Z: not a version (clients/compatibility.json)
        assertEquals(false, RunStub.recentEnough("0.1.0-dev1")); // a prerelease of this package's numbers
        assertEquals(false, RunStub.recentEnough("0.0.9"));
        assertEquals(false, RunStub.recentEnough("unknown"));
        assertEquals(false, RunStub.recentEnough(""));
    }
}
