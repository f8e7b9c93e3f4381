package dev.svcstub.junit;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * How a test run reaches its stub: each setting given to the extension's builder
 * ({@link SvcStubExtension#newInstance()}), else a JUnit configuration parameter
 * ({@code junit-platform.properties}, or a JVM system property), else an environment variable,
 * the same variables every language's helper reads. The narrower, more deliberate choice wins:
 * the code of one test class, then one project's build, then a variable set for everything in a
 * CI job.
 */
final class Settings {
    static final Setting URL = new Setting("svcstub.url", "SVC_STUB_URL");
    static final Setting CONTROL_TOKEN = new Setting("svcstub.control-token", "SVC_STUB_CONTROL_TOKEN");
    static final Setting BIN = new Setting("svcstub.bin", "SVC_STUB_BIN");
    static final Setting JOURNAL_DIR = new Setting("svcstub.journal-dir", "SVC_STUB_JOURNAL_DIR");
    /** More options for the stub the run starts ({@code --fixtures src/test/resources/flags.yaml --strict-keys}). */
    static final Setting ARGS = new Setting("svcstub.args", null);

    /** How a message names a setting given to the builder ({@code url} becomes {@code SvcStubExtension's url}). */
    static final String GIVEN = "SvcStubExtension's ";

    private final Map<String, String> given;
    private final Function<String, Optional<String>> parameters;
    private final Map<String, String> environment;

    Settings(Function<String, Optional<String>> parameters, Map<String, String> environment) {
        this(Map.of(), parameters, environment);
    }

    /** {@code given}: the builder's settings, by their parameter's name ({@code svcstub.url}). */
    Settings(Map<String, String> given, Function<String, Optional<String>> parameters, Map<String, String> environment) {
        this.given = Map.copyOf(given);
        this.parameters = parameters;
        this.environment = environment;
    }

    /** One setting's two names; {@code variable} null: a parameter only. */
    record Setting(String parameter, String variable) {
    }

    /** A setting's value, and the name it was given under (for a message that says where to change it). */
    record Value(String name, String value) {
    }

    Optional<Value> get(Setting setting) {
        String byCode = given.get(setting.parameter());
        if (byCode != null) {
            return Optional.of(new Value(GIVEN + setting.parameter().substring("svcstub.".length()), byCode));
        }
        Optional<String> parameter = parameters.apply(setting.parameter()).map(String::strip).filter(v -> !v.isEmpty());
        if (parameter.isPresent()) {
            return Optional.of(new Value(setting.parameter(), parameter.get()));
        }
        return Optional.ofNullable(setting.variable()).map(environment::get).map(String::strip).filter(v -> !v.isEmpty())
                .map(v -> new Value(setting.variable(), v));
    }

    /** An environment variable as this run sees it ({@code PATH}). */
    Optional<String> variable(String name) {
        return Optional.ofNullable(environment.get(name));
    }

    List<String> args() {
        String byCode = given.get(ARGS.parameter());
        if (byCode != null) { // the builder's, each as given
            return byCode.isEmpty() ? List.of() : Arrays.asList(byCode.split(ARGS_SEPARATOR, -1));
        }
        return get(ARGS).map(v -> Arrays.asList(v.value().split("\\s+"))).orElse(List.of());
    }

    /** Between the builder's stub options, each of which may hold spaces. */
    static final String ARGS_SEPARATOR = "\u0000";

    String controlToken() {
        return get(CONTROL_TOKEN).map(Value::value).orElse(null);
    }

    /**
     * Where this run's failed tests' journals go: the setting's directory, kept as it is; else
     * the build's own output folder seen from {@code workingDirectory}, pruned of earlier runs'.
     */
    Journal journal(Path workingDirectory, Instant runStarted) {
        return get(JOURNAL_DIR).map(v -> new Journal(Path.of(v.value()).toAbsolutePath(), null))
                .orElseGet(() -> new Journal(Journal.defaultDirectory(workingDirectory), runStarted));
    }
}
