package dev.svcstub.junit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * A failed test's journal: its namespace's inspector page (one HTML file, everything the test's
 * client sent and got) written before the namespace is deleted, so CI can keep it.
 */
final class Journal {
    /** The report entry's key, and how the line that names the file starts. */
    static final String REPORT_KEY = "svc-stub journal";

    private Journal() {
    }

    /**
     * Writes {@code client}'s snapshot in {@code directory}, under a name made of the test's
     * readable name and a hash of its unique id; another attempt of the same test (a rerun, a
     * repetition) gets a name of its own, never writing over one.
     */
    static Path keep(ControlClient client, Path directory, String readableName, String uniqueId) throws IOException {
        String page = client.snapshot();
        Files.createDirectories(directory);
        String base = readableName.replaceAll("[^A-Za-z0-9._-]+", "_").replaceAll("^_+|_+$", "");
        if (base.length() > 120) {
            base = base.substring(0, 120);
        }
        base = (base.isEmpty() ? "test" : base) + "-" + shortHash(uniqueId);
        for (int attempt = 1; ; attempt++) {
            Path path = directory.resolve(attempt == 1 ? base + ".html" : base + "-" + attempt + ".html");
            try {
                Files.writeString(path, page, StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                return path;
            } catch (FileAlreadyExistsException taken) {
                // the next attempt's name
            }
        }
    }

    /** The line that names a kept journal in the test's output. */
    static String line(Path path) {
        return REPORT_KEY + " of this test: " + path + " (open it in a browser)";
    }

    private static String shortHash(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return String.format("%02x%02x%02x%02x", digest[0], digest[1], digest[2], digest[3]);
        } catch (NoSuchAlgorithmException impossible) {
            throw new IllegalStateException("every JVM has SHA-256", impossible);
        }
    }
}
