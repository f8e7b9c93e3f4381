package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The library's words are the stub's: every fault mode, selector, route name, arming member,
 * header, query parameter and control path it uses, checked against the stub's own description of
 * its control plane (stub/openapi.json, read with the library's own JSON reader), so it cannot
 * drift; and its names for the ideas every helper shares are the shared vocabulary's
 * (clients/vocabulary.json), spelled in Java.
 */
class OpenApiTest {
    static final Path OPENAPI = Path.of("../../stub/openapi.json");
    static final Path VOCABULARY = Path.of("../vocabulary.json");
    static final Path SOURCES = Path.of("src/main/java/dev/svcstub/junit");

    static Members document() throws IOException {
        return Members.of(Json.parse(Files.readString(OPENAPI, StandardCharsets.UTF_8)));
    }

    static Members schema(String name) throws IOException {
        return document().object("components").object("schemas").object(name);
    }

    static String source(String file) throws IOException {
        return Files.readString(SOURCES.resolve(file), StandardCharsets.UTF_8);
    }

    private static <T> List<String> wireNames(List<T> words, Function<T, String> name) {
        return words.stream().map(name).collect(Collectors.toList());
    }

    @Test
    void theEnumsAreTheStubsLists() throws IOException {
        assertEquals(schema("FaultMode").strings("enum"), wireNames(List.of(FaultMode.values()), FaultMode::wireName),
                "FaultMode");
        assertEquals(schema("Selector").strings("enum"), wireNames(List.of(Selector.values()), Selector::wireName),
                "Selector");
        assertEquals(schema("RouteName").strings("enum"), wireNames(Route.routeNames(), Route::wireName), "RouteName");
        assertEquals(List.of("projects", "environments", "control-points"), Arrays.stream(Route.values())
                .filter(route -> !route.isRouteName() && route != Route.PREFLIGHT).map(Route::wireName).collect(Collectors.toList()),
                "a resource filter for each management resource the stub selects");
        for (Route resource : List.of(Route.PROJECTS, Route.ENVIRONMENTS, Route.CONTROL_POINTS)) {
            assertTrue(schema("Selector").strings("enum").contains(resource.wireName()), resource::toString);
        }
    }

    @Test
    void noneIsASequenceStep() throws IOException {
        List<Members> alternatives = schema("SequenceStep").objects("oneOf");
        assertTrue(alternatives.get(0).strings("enum").contains("none"));
        assertEquals("none", Step.none().document().get("mode"));
    }

    @Test
    void aFaultSetsEveryMemberOfTheArmingDocument() throws IOException {
        Set<String> members = new TreeSet<>(schema("ArmingDocument").object("properties").asMap().keySet());
        Set<String> set = new TreeSet<>(everything(Fault.of(FaultMode.STATUS)).times(1).probability(0.5, 3).document().keySet());
        set.addAll(everything(Fault.sequence(Step.none())).document().keySet());
        assertEquals(members, set);
    }

    @Test
    void aStepSetsEveryMemberOfASequenceStep() throws IOException {
        Members object = schema("SequenceStep").objects("oneOf").stream().filter(o -> o.has("properties")).findFirst().orElseThrow();
        Step step = Step.of(FaultMode.STATUS).delay(Duration.ofMillis(1)).status(503).body("x").retryAfterSeconds(1);
        assertEquals(new TreeSet<>(object.object("properties").asMap().keySet()), new TreeSet<>(step.document().keySet()));
    }

    private static Fault everything(Fault fault) {
        return fault.applyTo(Selector.ALL).delay(Duration.ofMillis(1)).status(503).body("x").retryAfterSeconds(1);
    }

    @Test
    void anArmedFaultReadsTheParametersARecordListsAndNoOther() throws IOException {
        Set<String> parameters = new TreeSet<>(schema("FaultStep").object("properties").asMap().keySet());
        parameters.remove("mode");
        assertEquals(Set.of("body", "delayMs", "retryAfter", "status"), parameters,
                "a parameter ArmedFault does not read (read it, and add it here)");
        List<Members> examples = schema("ArmedFault").objects("examples");
        assertTrue(examples.size() >= 3, "the document shows too few armed faults");
        for (Members listed : examples) {
            ArmedFault armed = ArmedFault.from(null, listed);
            Map<String, Optional<?>> read = Map.of(
                    "delayMs", armed.delay().map(Duration::toMillis),
                    "status", asLong(armed.status()),
                    "body", armed.body(),
                    "retryAfter", asLong(armed.retryAfterSeconds()));
            for (String name : parameters) {
                // absent, or null (the mode's own status or body), reads empty
                assertEquals(Optional.ofNullable(listed.raw(name)), read.get(name), () -> name + " of " + Json.write(listed.asMap()));
            }
        }
    }

    private static Optional<Long> asLong(OptionalInt value) {
        return value.isPresent() ? Optional.of((long) value.getAsInt()) : Optional.empty();
    }

    @Test
    void everyControlCallIsOneTheStubServes() throws IOException {
        Members paths = document().object("paths");
        Set<String> served = new HashSet<>();
        for (Map.Entry<String, Object> path : paths.asMap().entrySet()) {
            for (String method : Members.of(path.getValue()).asMap().keySet()) {
                served.add(method.toUpperCase() + " " + path.getKey().replaceAll("\\{[^}]+}", "{x}"));
            }
        }
        String client = source("ControlClient.java");
        List<String> calls = new ArrayList<>();
        Matcher call = Pattern.compile("Call\\.(get|post|delete)\\(\"(/[^\"]*)\"").matcher(client);
        while (call.find()) {
            calls.add(call.group(1).toUpperCase() + " " + call.group(2));
        }
        Matcher document = Pattern.compile("document\\(\"(/[^\"]*)\"").matcher(client);
        while (document.find()) {
            calls.add("POST " + document.group(1));
        }
        assertTrue(calls.size() >= 15, () -> "found only " + calls);
        for (String each : calls) {
            String path = each.endsWith("/") ? each + "{x}" : each; // "/_test/fault/" + id
            assertTrue(served.contains(path), () -> "ControlClient calls " + each + ", which the stub's document does not have");
        }
    }

    @Test
    void theQueryParametersAreTheStubs() throws IOException {
        Members document = document();
        String stub = source("SvcStub.java") + source("ControlClient.java");
        Map<String, List<String>> used = Map.of(
                "/_test/events", List.of("minEvents", "minSvcEvents", "minTargets", "waitMs"),
                "/_test/requests", List.of("route", "min", "waitMs", "bodies"),
                "/_test/checks/{check}", List.of("route", "flagKey", "targetingKey", "variant", "waitMs"),
                "/_test/fixtures", List.of("merge"));
        for (Map.Entry<String, List<String>> path : used.entrySet()) {
            Members operation = document.object("paths").object(path.getKey())
                    .object(path.getKey().equals("/_test/fixtures") ? "post" : "get");
            List<String> parameters = operation.objects("parameters").stream().map(p -> resolve(document, p).string("name"))
                    .collect(Collectors.toList());
            for (String name : path.getValue()) {
                assertTrue(stub.contains("\"" + name + "\""), () -> "the library does not send " + name + " (update this test)");
                assertTrue(parameters.contains(name), () -> name + " is not a parameter of " + path.getKey() + ": " + parameters);
            }
        }
    }

    @Test
    void theHeadersAreTheStubs() throws IOException, IllegalAccessException {
        Members document = document();
        Set<String> headers = document.object("components").object("parameters").asMap().values().stream()
                .map(Members::of).filter(p -> "header".equals(p.string("in"))).map(p -> p.string("name").toLowerCase())
                .collect(Collectors.toSet());
        int checked = 0;
        for (Field field : Headers.class.getFields()) {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == String.class) {
                String header = (String) field.get(null);
                assertTrue(headers.contains(header.toLowerCase()), () -> header + " is not a header the stub reads: " + headers);
                assertTrue(document.object("info").string("description").contains(header), header);
                checked++;
            }
        }
        assertEquals(5, checked);
    }

    /** Where each shared idea lives in this library: a type, or a member of a type. */
    private static final Map<String, Class<?>> HOLDERS = Map.of(
            "routeSelector", Fault.class,
            "bodyAsText", RecordedRequest.class,
            "bodyAsJson", RecordedRequest.class,
            "offlineUrl", SvcStub.class);

    @Test
    void theSharedVocabularyIsSpelledHereAsItSays() throws IOException, ClassNotFoundException {
        Members words = Members.of(Json.parse(Files.readString(VOCABULARY, StandardCharsets.UTF_8))).object("words");
        for (String idea : words.asMap().keySet()) {
            String java = words.object(idea).string("java");
            if (idea.equals("perTestObject")) {
                assertEquals(SvcStub.class, Class.forName(SvcStub.class.getPackageName() + "." + java), idea);
                continue;
            }
            Class<?> holder = HOLDERS.get(idea);
            assertTrue(holder != null, () -> "clients/vocabulary.json has " + idea + ", which this test does not know where to find (add it to HOLDERS)");
            assertTrue(Arrays.stream(holder.getMethods()).anyMatch(method -> method.getName().equals(java)),
                    () -> holder.getSimpleName() + " has no " + java + "(...), the vocabulary's Java for " + idea);
        }
    }

    @Test
    void theVocabularysControlPlaneWordsAreTheStubs() throws IOException {
        Members words = Members.of(Json.parse(Files.readString(VOCABULARY, StandardCharsets.UTF_8))).object("words");
        String selector = words.object("routeSelector").string("controlPlane");
        assertTrue(schema("ArmingDocument").object("properties").has(selector),
                () -> selector + " is not a member of the stub's arming document (ArmingDocument)");
        String offline = words.object("offlineUrl").string("controlPlane");
        assertTrue(document().object("paths").has(offline), () -> offline + " is not a path of the stub's control plane");
    }

    @Test
    void oneVersionNumber() throws IOException {
        String stub = document().object("info").string("version");
        Matcher pyproject = Pattern.compile("(?m)^version = \"(.*)\"$")
                .matcher(Files.readString(Path.of("../../pyproject.toml"), StandardCharsets.UTF_8));
        assertTrue(pyproject.find(), "pyproject.toml has no version line");
        Matcher pom = Pattern.compile("<artifactId>svc-stub-junit</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(Files.readString(Path.of("pom.xml"), StandardCharsets.UTF_8));
        assertTrue(pom.find(), "pom.xml names no version");
        assertEquals(stub, SvcStub.VERSION, "SvcStub.VERSION");
        assertEquals(stub, pyproject.group(1), "pyproject.toml");
        assertEquals(stub, pom.group(1), "pom.xml");
    }

    private static Members resolve(Members document, Members parameter) {
        if (!parameter.has("$ref")) {
            return parameter;
        }
        String ref = parameter.string("$ref");
        return document.object("components").object("parameters").object(ref.substring(ref.lastIndexOf('/') + 1));
    }
}
