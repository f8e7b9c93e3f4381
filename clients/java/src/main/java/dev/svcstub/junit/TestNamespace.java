package dev.svcstub.junit;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;
import org.opentest4j.TestAbortedException;

/**
 * A test's namespace on the run's stub, kept in the test's own store: created (with the test's
 * fixtures and keys) when the test first asks for a {@link SvcStub}, its journal written if the
 * test failed, and deleted when the test's context closes.
 */
@SuppressWarnings("deprecation") // CloseableResource: what JUnit before 5.13 closes
final class TestNamespace implements ExtensionContext.Store.CloseableResource, AutoCloseable {
    private final ControlClient client;
    private final SvcStub stub;
    private final Journal journal;
    private boolean closed;

    private TestNamespace(ControlClient client, Journal journal) {
        this.client = client;
        this.stub = new SvcStub(client);
        this.journal = journal;
    }

    /** Creates the namespace of the test (or class) {@code context} is, on the run's stub, set up as its annotation says. */
    static TestNamespace open(RunStub run, ExtensionContext context) {
        Optional<SvcStubFixtures> setup = setupOf(context);
        List<String> keys = setup.map(annotation -> List.of(annotation.keys())).orElse(List.of());
        ControlClient client = run.client().createNamespace(testId(context), keys);
        TestNamespace namespace = new TestNamespace(client, run.journal());
        try {
            String[] fixtures = setup.map(SvcStubFixtures::value).orElse(new String[0]);
            for (int i = 0; i < fixtures.length; i++) {
                client.fixtures(fixtureText(fixtures[i], context.getTestClass().orElse(null)), i > 0);
            }
        } catch (RuntimeException failed) {
            namespace.close();
            throw failed;
        }
        return namespace;
    }

    SvcStub stub() {
        return stub;
    }

    /**
     * The test as Java names it, which the stub makes the namespace's name from:
     * {@code CheckoutTest#fallsBack}, then a repetition's or parameterized invocation's display
     * name ({@code [2] HTTP_500}); for a class-wide namespace (a {@code @BeforeAll} parameter), the class.
     */
    static String testId(ExtensionContext context) {
        String type = context.getTestClass().map(Class::getSimpleName).orElse(context.getDisplayName());
        if (context.getTestMethod().isEmpty()) {
            return type;
        }
        boolean invocation = context.getParent().flatMap(ExtensionContext::getTestMethod).isPresent();
        return type + "#" + context.getTestMethod().get().getName() + (invocation ? " " + context.getDisplayName() : "");
    }

    /**
     * If the test failed (not aborted), writes its journal and names it: as a report entry (IDEs
     * and JUnit's console launcher show those) and on standard error (which build tools show).
     */
    void keepJournalIfFailed(ExtensionContext context) {
        Optional<Throwable> failure = context.getExecutionException();
        if (failure.isEmpty() || failure.get() instanceof TestAbortedException) {
            return;
        }
        try {
            Path kept = journal.keep(client);
            context.publishReportEntry(Journal.REPORT_KEY, kept.toString());
            System.err.println(Journal.line(kept));
        } catch (IOException | SvcStubException notKept) {
            context.publishReportEntry(Journal.REPORT_KEY, "not written: " + notKept.getMessage());
            System.err.println(Journal.REPORT_KEY + " not written: " + notKept.getMessage());
        }
    }

    /** Deletes the namespace and everything in it (a namespace the test deleted itself is fine). */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            client.deleteNamespace();
        } catch (StubRefusedException refused) {
            if (refused.status() != 404) {
                throw refused;
            }
        }
    }

    /** The nearest {@link SvcStubFixtures}: the test method's, else its class's (or an enclosing class's). */
    private static Optional<SvcStubFixtures> setupOf(ExtensionContext context) {
        Optional<SvcStubFixtures> onMethod = context.getTestMethod()
                .flatMap(method -> AnnotationSupport.findAnnotation(method, SvcStubFixtures.class));
        if (onMethod.isPresent()) {
            return onMethod;
        }
        for (Class<?> type = context.getTestClass().orElse(null); type != null; type = type.getEnclosingClass()) {
            Optional<SvcStubFixtures> onClass = AnnotationSupport.findAnnotation(type, SvcStubFixtures.class);
            if (onClass.isPresent()) {
                return onClass;
            }
        }
        return Optional.empty();
    }

    /** A fixture file's text: a classpath resource beside the test class, else a file. */
    static ControlClient.FileText fixtureText(String name, Class<?> testClass) {
        URL resource = testClass == null ? null : testClass.getResource(name);
        try {
            if (resource != null) {
                try (InputStream in = resource.openStream()) {
                    return new ControlClient.FileText(new String(in.readAllBytes(), StandardCharsets.UTF_8));
                }
            }
            Path file = Path.of(name);
            if (Files.isRegularFile(file)) {
                return new ControlClient.FileText(Files.readString(file, StandardCharsets.UTF_8));
            }
        } catch (IOException unreadable) {
            throw new SvcStubException("svc-stub: @SvcStubFixtures: " + name + ": " + unreadable.getMessage(), unreadable);
        }
        String beside = testClass == null ? "" : "beside " + testClass.getName() + " on the classpath, nor ";
        throw new SvcStubException("svc-stub: @SvcStubFixtures: no '" + name + "' " + beside + "at " + Path.of(name).toAbsolutePath());
    }
}
