package dev.svcstub.junit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;

/**
 * Where one run's failed tests' journals go: each test's namespace's inspector page (one HTML
 * file, everything its client sent and got), written before the namespace is deleted, so CI can
 * keep it. In the build's output folder, earlier runs' pages are removed when this run writes
 * its first; a directory a setting names is left as it is (several builds may share it).
 */
final class Journal {
    /** The report entry's key, and how the line that names the file starts. */
    static final String REPORT_KEY = "svc-stub journal";

    private final Path directory;
    private final Instant runStarted; // null: never prune
    private boolean pruned; // guarded by this

    Journal(Path directory, Instant runStarted) {
        this.directory = directory;
        this.runStarted = runStarted;
    }

    /**
     * {@code target/svc-stub-journal} (Maven), or {@code build/svc-stub-journal} under Gradle (a
     * {@code build.gradle} or {@code build.gradle.kts}, and no {@code pom.xml}, in {@code workingDirectory}).
     */
    static Path defaultDirectory(Path workingDirectory) {
        boolean gradle = !Files.exists(workingDirectory.resolve("pom.xml"))
                && (Files.exists(workingDirectory.resolve("build.gradle")) || Files.exists(workingDirectory.resolve("build.gradle.kts")));
        return workingDirectory.resolve(gradle ? "build" : "target").resolve("svc-stub-journal");
    }

    Path directory() {
        return directory;
    }

    /** Writes the page of {@code client}'s namespace, named after the namespace (unique: the stub names it). */
    Path keep(ControlClient client) throws IOException {
        String page = client.snapshot();
        synchronized (this) {
            Files.createDirectories(directory);
            if (runStarted != null && !pruned) {
                pruned = true;
                prune();
            }
        }
        return Files.writeString(directory.resolve(client.namespace() + ".html"), page, StandardCharsets.UTF_8);
    }

    /** Removes the pages written before this run started (by earlier runs: a run at the same time keeps its own). */
    private void prune() throws IOException {
        List<Path> pages;
        try (Stream<Path> files = Files.list(directory)) {
            pages = files.filter(file -> file.getFileName().toString().endsWith(".html")).toList();
        }
        for (Path page : pages) {
            try {
                if (Files.getLastModifiedTime(page).toInstant().isBefore(runStarted)) {
                    Files.delete(page);
                }
            } catch (NoSuchFileException goneAlready) {
                // another run pruned it first
            }
        }
    }

    /** Writes the run's coverage report, {@code coverage.json}, beside the journals (over an earlier run's). */
    Path keepCoverage(String report) throws IOException {
        Files.createDirectories(directory);
        return Files.writeString(directory.resolve(Coverage.FILE), report, StandardCharsets.UTF_8);
    }

    /** The line that names a kept journal in the test's output. */
    static String line(Path path) {
        return REPORT_KEY + " of this test: " + path + " (open it in a browser)";
    }
}
