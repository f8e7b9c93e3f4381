package dev.svcstub.junit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * How a test run reaches its stub: each setting a JUnit configuration parameter
 * ({@code junit-platform.properties}, or a JVM system property) or else an environment variable,
 * the same variables every language's helper reads. The parameter wins: it is the narrower,
 * more deliberate choice (one project's build, one launcher run), while a variable is set for
 * everything in a CI job.
 */
final class Settings {
    static final Setting URL = new Setting("svcstub.url", "SVC_STUB_URL");
    static final Setting CONTROL_TOKEN = new Setting("svcstub.control-token", "SVC_STUB_CONTROL_TOKEN");
    static final Setting BIN = new Setting("svcstub.bin", "SVC_STUB_BIN");
    static final Setting JOURNAL_DIR = new Setting("svcstub.journal-dir", "SVC_STUB_JOURNAL_DIR");
    /** More options for the stub the run starts ({@code --fixtures src/test/resources/flags.yaml --strict-keys}). */
    static final Setting ARGS = new Setting("svcstub.args", null);

    private final Function<String, Optional<String>> parameters;
    private final Map<String, String> environment;

    Settings(Function<String, Optional<String>> parameters, Map<String, String> environment) {
        this.parameters = parameters;
        this.environment = environment;
    }

    /** One setting's two names. */
    static final class Setting {
        final String parameter;
        final String variable; // null: a parameter only

        private Setting(String parameter, String variable) {
            this.parameter = parameter;
            this.variable = variable;
        }
    }

    /** A setting's value, and the name it was given under (for a message that says where to change it). */
    static final class Value {
        final String name;
        final String value;

        private Value(String name, String value) {
            this.name = name;
            this.value = value;
        }
    }

    Optional<Value> get(Setting setting) {
        Optional<String> parameter = parameters.apply(setting.parameter).map(String::strip).filter(v -> !v.isEmpty());
        if (parameter.isPresent()) {
            return Optional.of(new Value(setting.parameter, parameter.get()));
        }
        if (setting.variable == null) {
            return Optional.empty();
        }
        return Optional.ofNullable(environment.get(setting.variable)).map(String::strip).filter(v -> !v.isEmpty())
                .map(v -> new Value(setting.variable, v));
    }

    String bin() {
        return get(BIN).map(v -> v.value).orElse("svc-stub");
    }

    List<String> args() {
        return get(ARGS).map(v -> Arrays.stream(v.value.split("\\s+")).collect(Collectors.toUnmodifiableList()))
                .orElse(List.of());
    }

    String controlToken() {
        return get(CONTROL_TOKEN).map(v -> v.value).orElse(null);
    }

    /**
     * Where failed tests' journals go: the setting, else the build's own output folder
     * ({@code target/} under Maven, {@code build/} under Gradle), as seen from the working directory.
     */
    Path journalDirectory() {
        Optional<Value> configured = get(JOURNAL_DIR);
        if (configured.isPresent()) {
            return Path.of(configured.get().value).toAbsolutePath();
        }
        Path here = Path.of("").toAbsolutePath();
        boolean gradle = !Files.exists(here.resolve("pom.xml"))
                && (Files.exists(here.resolve("build.gradle")) || Files.exists(here.resolve("build.gradle.kts")));
        return here.resolve(gradle ? "build" : "target").resolve("svc-stub-journal");
    }
}
