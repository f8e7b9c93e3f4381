package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Java guide shows the examples the suite runs: each example file is one of its blocks,
 * verbatim, and its install lines and error lines are this library's (docs/guides/java.md).
 */
class GuideTest {
    static final Path IN_THE_DOCS = Path.of("../../docs/guides/java.md");
    static final Path EXAMPLES = Path.of("src/test/java/dev/svcstub/junit/examples");
    static final Path EXAMPLE_RESOURCES = Path.of("src/test/resources/dev/svcstub/junit/examples");

    static String guide() throws IOException {
        return Files.readString(IN_THE_DOCS, StandardCharsets.UTF_8);
    }

    static Set<String> blocks(String guide, String language) {
        Set<String> blocks = new HashSet<>();
        Matcher block = Pattern.compile("(?ms)^```" + language + "\n(.*?)^```$").matcher(guide);
        while (block.find()) {
            blocks.add(block.group(1));
        }
        return blocks;
    }

    private static List<Path> files(Path directory, String extension) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(file -> file.toString().endsWith(extension)).sorted().collect(Collectors.toList());
        }
    }

    @Test
    void everyExampleIsShownAsItRuns() throws IOException {
        String guide = guide();
        Set<String> java = blocks(guide, "java");
        Set<String> yaml = blocks(guide, "yaml");
        List<Path> examples = files(EXAMPLES, ".java");
        assertTrue(examples.size() >= 4, examples::toString);
        for (Path example : examples) {
            assertTrue(java.contains(Files.readString(example, StandardCharsets.UTF_8)), () -> example + " is not shown in the guide as it is");
        }
        for (Path fixture : files(EXAMPLE_RESOURCES, ".yaml")) {
            assertTrue(yaml.contains(Files.readString(fixture, StandardCharsets.UTF_8)), () -> fixture + " is not shown in the guide as it is");
        }
        for (String block : java) { // the examples, and the fireweave SDK's test (which builds only beside the SDK)
            assertTrue(block.startsWith("// ") && block.contains("\npackage "), () -> "a block is not a whole file:\n" + block);
        }
    }

    @Test
    void theReadmesLinksLeadToFilesThatExist() throws IOException {
        Matcher link = Pattern.compile("\\]\\(([^)#\\s]+)[^)]*\\)").matcher(Files.readString(Path.of("README.md"), StandardCharsets.UTF_8));
        int relative = 0;
        while (link.find()) {
            String target = link.group(1);
            if (!target.contains("://")) {
                relative++;
                assertTrue(Files.isRegularFile(Path.of(target)), () -> "README.md links " + target + ", which does not exist");
            }
        }
        assertTrue(relative >= 1, "README.md links the guide");
    }

    @Test
    void theInstallLinesNameThisLibrary() throws IOException {
        String guide = guide();
        for (String line : List.of("<groupId>dev.svcstub</groupId>", "<artifactId>svc-stub-junit</artifactId>",
                "<version>" + SvcStub.VERSION + "</version>", "testImplementation(\"dev.svcstub:svc-stub-junit:" + SvcStub.VERSION + "\")",
                "mvn install    # dev.svcstub:svc-stub-junit:" + SvcStub.VERSION)) {
            assertTrue(guide.contains(line), () -> "the guide lacks " + line);
        }
    }

    @Test
    void theErrorLinesAreTheOnesTheSuiteChecks() throws IOException {
        String guide = guide();
        for (String line : List.of(ErrorsTest.NO_COMMAND.replace(ErrorsTest.CLONE, "path/to/svc-stub"), ErrorsTest.DOES_NOT_START,
                "older than this package (" + SvcStub.VERSION + "); upgrade it (.venv/bin/pip install --upgrade path/to/svc-stub) and start it again",
                "does not answer as svc-stub (connection refused); start one there (svc-stub --port PORT) or unset SVC_STUB_URL to have one started")) {
            assertTrue(guide.contains(line), () -> "the guide lacks " + line);
        }
    }
}
