package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * A failed test's journal is written before its namespace goes, and named in a report entry:
 * read from a test run of its own, as an IDE or a build tool's listener reads it. By default it
 * goes among the build's output (target/ here), where each run removes the runs' before it.
 */
@ExtendWith(SvcStubExtension.class)
class JournalTest {
    /** One run of FailsOnPurpose at a time. */
    static final String FAILS_ON_PURPOSE = "FailsOnPurpose";

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
    @ResourceLock(FAILS_ON_PURPOSE) // the namespaces left after it are its own
    void aFailedTestsJournalIsNamedInAReportEntry(SvcStub stub, @TempDir Path journals) throws IOException {
        Launch.Outcome outcome = Launch.withParameter("svcstub.url", stub.baseUrl())
                .and("svcstub.journal-dir", journals.toString())
                .run(FailsOnPurpose.class);

        assertEquals(AssertionsTest.EXPOSURE_MISSING, outcome.failure("failing"));
        Path journal = journalOf(outcome);
        assertEquals(journals, journal.getParent());
        assertEquals("svc-stub journal of this test: " + journal + " (open it in a browser)", Journal.line(journal));
        assertTrue(journal.getFileName().toString().matches("FailsOnPurpose-failing-[0-9a-f]{8}\\.html"), journal::toString);
        String page = Files.readString(journal, StandardCharsets.UTF_8);
        assertTrue(page.regionMatches(true, 0, "<!doctype html>", 0, 15), () -> page.substring(0, Math.min(200, page.length())));
        assertTrue(page.contains("/v1/capture"), "the inspector page lists the test's capture");

        assertEquals(List.of(), outcome.reported("passing", Journal.REPORT_KEY), "a passing test keeps no journal");
        assertEquals(List.of(), outcome.reported("aborted", Journal.REPORT_KEY), "nor does an aborted one");
        assertEquals(List.of(journal), pages(journals));

        for (String namespace : new ControlClient(stub.baseUrl(), System.getenv("SVC_STUB_CONTROL_TOKEN")).namespaces()) {
            assertFalse(namespace.startsWith("FailsOnPurpose-"), () -> namespace + " is still there after its test ended");
        }
    }

    @Test
    @ResourceLock(FAILS_ON_PURPOSE)
    void byDefaultJournalsGoUnderTargetPrunedToTheLastRun(SvcStub stub) throws IOException {
        assumeTrue(System.getenv("SVC_STUB_JOURNAL_DIR") == null, "SVC_STUB_JOURNAL_DIR is set: journals go there");
        Path target = Path.of("target/svc-stub-journal").toAbsolutePath();
        Files.createDirectories(target);
        Path earlier = Files.writeString(target.resolve("FailsOnPurpose-failing-0badc0de.html"), "<!doctype html> an earlier run's");
        Files.setLastModifiedTime(earlier, FileTime.from(Instant.now().minusSeconds(3600)));
        Path notAJournal = Files.writeString(target.resolve("notes.txt"), "not a journal: left alone");
        Files.setLastModifiedTime(notAJournal, FileTime.from(Instant.now().minusSeconds(3600)));

        Path first = journalOf(Launch.withParameter("svcstub.url", stub.baseUrl()).run(FailsOnPurpose.class));
        assertEquals(target, first.getParent());
        assertTrue(Files.exists(first));
        assertFalse(Files.exists(earlier), "an earlier run's journal is removed when a run writes its first");
        assertTrue(Files.exists(notAJournal));

        Path second = journalOf(Launch.withParameter("svcstub.url", stub.baseUrl()).run(FailsOnPurpose.class));
        assertTrue(Files.exists(second));
        assertFalse(Files.exists(first), "the run before's journal is gone too");
        assertEquals(List.of(second), pages(target).stream().filter(page -> page.getFileName().toString().startsWith("FailsOnPurpose-")).toList());
        Files.delete(notAJournal);
    }

    @Test
    void gradleBuildsKeepThemUnderBuild(@TempDir Path project) throws IOException {
        assertEquals(project.resolve("target/svc-stub-journal"), Journal.defaultDirectory(project));
        Files.writeString(project.resolve("build.gradle.kts"), "plugins { java }");
        assertEquals(project.resolve("build/svc-stub-journal"), Journal.defaultDirectory(project));
        Files.writeString(project.resolve("pom.xml"), "<project/>");
        assertEquals(project.resolve("target/svc-stub-journal"), Journal.defaultDirectory(project), "a pom.xml says Maven");
    }

    /** The one journal a run of FailsOnPurpose names, in its failing test's report entry. */
    private static Path journalOf(Launch.Outcome outcome) {
        List<String> named = outcome.reported("failing", Journal.REPORT_KEY);
        assertEquals(1, named.size(), () -> "report entries: " + named);
        return Path.of(named.get(0));
    }

    private static List<Path> pages(Path directory) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(file -> file.toString().endsWith(".html")).sorted().toList();
        }
    }
}
