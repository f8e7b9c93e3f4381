package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A failed test's journal is written before its namespace goes, and named in a report entry:
 * read from a test run of its own, as an IDE or a build tool's listener reads it.
 */
@ExtendWith(SvcStubExtension.class)
class JournalTest {

    @ExtendWith(SvcStubExtension.class)
    @ChildTest
    static class FailsOnPurpose {
        @Test
        void failing(SvcStub stub) {
            Http.capture(stub.url(), WaitsTest.EXPOSURE);
            stub.assertExposure("checkout-v2", "user-2");
        }

        @Test
        void passing(SvcStub stub) {
            Http.capture(stub.url(), WaitsTest.EXPOSURE);
        }

        @Test
        void aborted(SvcStub stub) {
            assumeTrue(false, "not on this machine");
        }
    }

    @Test
    void aFailedTestsJournalIsNamedInAReportEntry(SvcStub stub, @TempDir Path journals) throws IOException {
        Launch.Outcome outcome = Launch.withParameter("svcstub.url", stub.baseUrl())
                .and("svcstub.journal-dir", journals.toString())
                .run(FailsOnPurpose.class);

        assertEquals("no exposure of checkout-v2 for user-2; exposures recorded:\n" + WaitsTest.EXPOSURE_SHOWN,
                outcome.failure("failing"));
        List<String> named = outcome.reported("failing", Journal.REPORT_KEY);
        assertEquals(1, named.size(), () -> "report entries: " + named);
        Path journal = Path.of(named.get(0));
        assertEquals(journals, journal.getParent());
        assertTrue(journal.getFileName().toString().matches("FailsOnPurpose\\.failing-[0-9a-f]{8}\\.html"), journal::toString);
        String page = Files.readString(journal, StandardCharsets.UTF_8);
        assertTrue(page.regionMatches(true, 0, "<!doctype html>", 0, 15), () -> page.substring(0, Math.min(200, page.length())));
        assertTrue(page.contains("/v1/capture"), "the inspector page lists the test's capture");

        assertEquals(List.of(), outcome.reported("passing", Journal.REPORT_KEY), "a passing test keeps no journal");
        assertEquals(List.of(), outcome.reported("aborted", Journal.REPORT_KEY), "nor does an aborted one");
        try (var files = Files.list(journals)) {
            assertEquals(1, files.count());
        }

        for (String namespace : new ControlClient(stub.baseUrl(), System.getenv("SVC_STUB_CONTROL_TOKEN")).namespaces()) {
            assertFalse(namespace.startsWith("FailsOnPurpose."), () -> namespace + " is still there after its test ended");
        }
    }

    @Test
    void anotherAttemptOfTheSameTestKeepsItsOwn(SvcStub stub, @TempDir Path journals) throws IOException {
        ControlClient client = new ControlClient(stub.baseUrl(), System.getenv("SVC_STUB_CONTROL_TOKEN")).inNamespace(stub.namespace());
        Path first = Journal.keep(client, journals, "Checkout [1] a/b", "[engine:junit-jupiter]/[class:X]/[method:y()]");
        Path second = Journal.keep(client, journals, "Checkout [1] a/b", "[engine:junit-jupiter]/[class:X]/[method:y()]");
        assertTrue(first.getFileName().toString().matches("Checkout_1_a_b-[0-9a-f]{8}\\.html"), first::toString);
        assertEquals(first.getFileName().toString().replace(".html", "-2.html"), second.getFileName().toString());
        assertEquals("svc-stub journal of this test: " + first + " (open it in a browser)", Journal.line(first));
    }
}
