package dev.svcstub.junit;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * svc-stub in JUnit 5: one stub for the test run, a namespace per test, injected as a
 * {@link SvcStub} parameter.
 *
 * <pre>{@code
 * @ExtendWith(SvcStubExtension.class)
 * class CheckoutTest {
 *     @Test
 *     void readsTheServedVariant(SvcStub stub) {
 *         assertEquals("treatment-b", new Checkout(stub.url()).variant("user-1"));
 *     }
 * }
 * }</pre>
 *
 * <ul>
 *   <li><b>The run's stub</b> lives in JUnit's root store, so every test class of the run shares
 *       it: {@code svc-stub shared --owner <this JVM>} (from {@code SVC_STUB_BIN} or PATH) starts
 *       it on first use, or attaches to the one this run already has, and {@code --stop} stops it
 *       when the run ends (a killed JVM's stub stops by itself); or the one at
 *       {@code SVC_STUB_URL}, checked once. A stub that cannot be had fails each test that asks,
 *       with one line.</li>
 *   <li><b>A namespace per test</b>: a {@code SvcStub} parameter of a test method, or of its
 *       {@code @BeforeEach} and {@code @AfterEach} methods (the same one), is the test's own,
 *       named by the stub after it ({@code CheckoutTest#fallsBack}), created when first asked
 *       for and deleted after the test. In a {@code @BeforeAll} method (or a constructor, which
 *       JUnit 5 resolves for the class), it is one for the class. Tests run in parallel (JUnit's
 *       concurrent mode) never see each other's faults, fixtures or journal.</li>
 *   <li><b>On failure</b> the test's journal (the stub's inspector page, one HTML file) is
 *       written to {@code target/svc-stub-journal} ({@code build/} under Gradle; earlier runs'
 *       pages removed), or {@code SVC_STUB_JOURNAL_DIR}, and named in a report entry,
 *       {@code svc-stub journal}, and on standard error.</li>
 * </ul>
 *
 * <p>Each setting is a JUnit configuration parameter or an environment variable (the parameter
 * wins): {@code svcstub.url} / {@code SVC_STUB_URL}, {@code svcstub.control-token} /
 * {@code SVC_STUB_CONTROL_TOKEN}, {@code svcstub.bin} / {@code SVC_STUB_BIN},
 * {@code svcstub.journal-dir} / {@code SVC_STUB_JOURNAL_DIR}, and {@code svcstub.args}: more
 * options for the stub the run starts. Or, in code, the extension's own builder, whose settings
 * win over both:
 *
 * <pre>{@code
 * class PricingTest {
 *     @RegisterExtension
 *     static SvcStubExtension svcStub = SvcStubExtension.newInstance()
 *             .args("--fixtures", "src/test/resources/flags.yaml", "--strict-keys")
 *             .build();
 *
 *     @Test
 *     void readsThePrice(SvcStub stub) { ... }
 * }
 * }</pre>
 *
 * <p>Test classes whose extensions were built alike share one stub (the run's, for the default
 * settings); other settings are another stub, stopped when the run ends too. A class that
 * registers one this way needs no {@code @ExtendWith}: the registered one answers for it, a
 * {@link SvcStubFixtures} annotation included.
 */
public final class SvcStubExtension implements ParameterResolver, BeforeAllCallback, BeforeEachCallback,
        AfterEachCallback, AfterAllCallback {
    private static final ExtensionContext.Namespace STORE = ExtensionContext.Namespace.create(SvcStubExtension.class);
    /** In a class's (or a test's) store while an extension built in code serves it: the declared one steps aside. */
    private static final String REGISTERED = "registered";

    /** The builder's settings, by parameter name; empty: the declared extension's (parameters and variables only). */
    private final Map<String, String> given;
    /** Whether it was built in code ({@link #newInstance()}), rather than declared. */
    private final boolean inCode;

    /** The extension {@code @ExtendWith(SvcStubExtension.class)} registers: settings from parameters and variables. */
    public SvcStubExtension() {
        this(Map.of(), false);
    }

    private SvcStubExtension(Map<String, String> given, boolean inCode) {
        this.given = Map.copyOf(given);
        this.inCode = inCode;
    }

    /**
     * A builder of an extension for {@code @RegisterExtension}, configured in code; what it is not
     * given comes from parameters and variables as usual.
     *
     * @return a builder with nothing set
     */
    public static Builder newInstance() {
        return new Builder();
    }

    /** The settings of an extension registered in code; each wins over its parameter and its variable. */
    public static final class Builder {
        private final Map<String, String> given = new LinkedHashMap<>();

        private Builder() {
        }

        /**
         * Uses the stub already running at {@code url} (as {@code SVC_STUB_URL}), checked once.
         *
         * @param url the stub's base URL ({@code http://127.0.0.1:3901})
         * @return this builder
         */
        public Builder url(String url) {
            return set(Settings.URL, url);
        }

        /**
         * The control token of the stub at {@link #url} (as {@code SVC_STUB_CONTROL_TOKEN}).
         *
         * @param token the stub's {@code --control-token}
         * @return this builder
         */
        public Builder controlToken(String token) {
            return set(Settings.CONTROL_TOKEN, token);
        }

        /**
         * The {@code svc-stub} command to run (as {@code SVC_STUB_BIN}).
         *
         * @param bin a path, or a name on {@code PATH}
         * @return this builder
         */
        public Builder bin(String bin) {
            return set(Settings.BIN, bin);
        }

        /**
         * Where failed tests' journals go (as {@code SVC_STUB_JOURNAL_DIR}): kept as it is.
         *
         * @param directory the directory
         * @return this builder
         */
        public Builder journalDir(Path directory) {
            return set(Settings.JOURNAL_DIR, Objects.requireNonNull(directory, "directory").toString());
        }

        /**
         * More options for the stub this extension starts ({@code "--fixtures", "flags.yaml"}), each
         * as one argument; a stub started with other options than the run's is a stub of its own.
         *
         * @param args the stub's options
         * @return this builder
         */
        public Builder args(String... args) {
            for (String arg : args) {
                if (Objects.requireNonNull(arg, "args").contains(Settings.ARGS_SEPARATOR)) {
                    throw new IllegalArgumentException("args: " + arg.replace(Settings.ARGS_SEPARATOR, "\\0") + " holds a NUL");
                }
            }
            given.put(Settings.ARGS.parameter(), String.join(Settings.ARGS_SEPARATOR, List.of(args)));
            return this;
        }

        private Builder set(Settings.Setting setting, String value) {
            if (Objects.requireNonNull(value, setting.parameter()).isBlank()) {
                throw new IllegalArgumentException(setting.parameter().substring("svcstub.".length()) + ": empty");
            }
            given.put(setting.parameter(), value.strip());
            return this;
        }

        /**
         * The extension, for a {@code @RegisterExtension} field (static: one stub and namespace
         * per test as usual; an instance field works too).
         *
         * @return the configured extension
         */
        public SvcStubExtension build() {
            return new SvcStubExtension(given, true);
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        claim(context);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        claim(context);
    }

    /** An extension built in code marks the contexts it serves, so a declared one there steps aside. */
    private void claim(ExtensionContext context) {
        if (inCode) {
            context.getStore(STORE).put(REGISTERED, this);
        }
    }

    /**
     * Whether this extension serves {@code context}: the one built in code where there is one (a
     * {@code @SvcStubFixtures} annotation declares one too: they must not compete), else the
     * declared one.
     */
    private boolean serves(ExtensionContext context) {
        Object registered = context.getStore(STORE).get(REGISTERED);
        return registered == null || registered == this;
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == SvcStub.class && serves(context);
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        try {
            return namespaceOf(context, given).stub();
        } catch (SvcStubException | IllegalArgumentException failed) {
            throw new ParameterResolutionException(failed.getMessage(), failed);
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (serves(context)) {
            finish(context);
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (serves(context)) {
            finish(context);
        }
    }

    /**
     * The namespace of this context (a test, or a class), opened on first use. Stored under the
     * context's own id: a test's store also sees its class's values, and the class's namespace
     * must not become the test's.
     */
    private static TestNamespace namespaceOf(ExtensionContext context, Map<String, String> given) {
        ExtensionContext.Store store = context.getStore(STORE);
        String key = namespaceKey(context);
        TestNamespace namespace = store.get(key, TestNamespace.class);
        if (namespace == null) { // one test's lifecycle runs on one thread: no other can be here
            namespace = TestNamespace.open(runStub(context, given), context);
            store.put(key, namespace);
        }
        return namespace;
    }

    private static void finish(ExtensionContext context) {
        TestNamespace namespace = context.getStore(STORE).get(namespaceKey(context), TestNamespace.class);
        if (namespace != null) {
            namespace.keepJournalIfFailed(context); // the store deletes the namespace after this
        }
    }

    private static String namespaceKey(ExtensionContext context) {
        return "namespace " + context.getUniqueId();
    }

    /**
     * The run's stub for these settings, in the root store: one for every test class of the run
     * that was given the same ones in code (none: the declared extension's). (JUnit 6 prefers
     * {@code computeIfAbsent}, which JUnit 5 does not have; this one is in both.)
     */
    @SuppressWarnings("deprecation")
    private static RunStub runStub(ExtensionContext context, Map<String, String> given) {
        return context.getRoot().getStore(STORE).getOrComputeIfAbsent(new RunKey(given),
                key -> new RunStub(new Settings(given, context::getConfigurationParameter, System.getenv())), RunStub.class);
    }

    /** The root store's key of a run's stub: the settings given in code. */
    private record RunKey(Map<String, String> given) {
    }
}
