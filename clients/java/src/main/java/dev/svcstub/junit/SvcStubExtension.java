package dev.svcstub.junit;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
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
 * options for the stub the run starts.
 */
public final class SvcStubExtension implements ParameterResolver, AfterEachCallback, AfterAllCallback {
    private static final ExtensionContext.Namespace STORE = ExtensionContext.Namespace.create(SvcStubExtension.class);

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == SvcStub.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        try {
            return namespaceOf(context).stub();
        } catch (SvcStubException | IllegalArgumentException failed) {
            throw new ParameterResolutionException(failed.getMessage(), failed);
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        finish(context);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        finish(context);
    }

    /**
     * The namespace of this context (a test, or a class), opened on first use. Stored under the
     * context's own id: a test's store also sees its class's values, and the class's namespace
     * must not become the test's.
     */
    private static TestNamespace namespaceOf(ExtensionContext context) {
        ExtensionContext.Store store = context.getStore(STORE);
        String key = namespaceKey(context);
        TestNamespace namespace = store.get(key, TestNamespace.class);
        if (namespace == null) { // one test's lifecycle runs on one thread: no other can be here
            namespace = TestNamespace.open(runStub(context), context);
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
     * The run's stub, in the root store: one for every test class of the run. (JUnit 6 prefers
     * {@code computeIfAbsent}, which JUnit 5 does not have; this one is in both.)
     */
    @SuppressWarnings("deprecation")
    private static RunStub runStub(ExtensionContext context) {
        return context.getRoot().getStore(STORE).getOrComputeIfAbsent(RunStub.class,
                type -> new RunStub(new Settings(context::getConfigurationParameter, System.getenv())), RunStub.class);
    }
}
