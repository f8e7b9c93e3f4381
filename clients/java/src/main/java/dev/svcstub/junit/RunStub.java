package dev.svcstub.junit;

import java.util.Optional;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The stub of one test run, kept in JUnit's root store so every test class shares it: the one a
 * setting names ({@code SVC_STUB_URL}), checked once, or one started on first use and stopped
 * when the run ends. Reaching it happens once, under a lock: tests running in parallel wait for
 * the one start, and if it fails, each test that asks gets the same one line (no test retries a
 * start that failed).
 *
 * <p>Both {@code AutoCloseable} (JUnit 5.13 and later close those) and {@code CloseableResource}
 * (which earlier JUnit 5 versions close); JUnit closes it once either way.
 */
@SuppressWarnings("deprecation") // CloseableResource: what JUnit before 5.13 closes
final class RunStub implements ExtensionContext.Store.CloseableResource, AutoCloseable {
    private final Settings settings;
    private ControlClient client; // guarded by this
    private SvcStubException failure; // guarded by this
    private StubProcess process; // guarded by this
    private boolean closed; // guarded by this

    RunStub(Settings settings) {
        this.settings = settings;
    }

    /** The control client of the run's stub (its default namespace), reaching the stub on first use. */
    synchronized ControlClient client() {
        if (closed) {
            throw new SvcStubException("svc-stub: the test run's stub was already stopped");
        }
        if (client == null && failure == null) {
            try {
                client = reach();
            } catch (SvcStubException failed) {
                failure = failed;
            }
        }
        if (failure != null) {
            throw failure;
        }
        return client;
    }

    private ControlClient reach() {
        String token = settings.controlToken();
        Optional<Settings.Value> running = settings.get(Settings.URL);
        if (running.isPresent()) {
            String url = running.get().value.replaceAll("/+$", "");
            ControlClient stub = new ControlClient(url, token);
            StubCheck.check(stub, running.get().name + "=" + url, running.get().name);
            return stub;
        }
        StubProcess started = StubProcess.start(settings.bin(), settings.args());
        try {
            ControlClient stub = new ControlClient(started.url(), token);
            StubCheck.check(stub, started.url(), null);
            process = started;
            return stub;
        } catch (SvcStubException failed) {
            started.stop();
            throw failed;
        }
    }

    /** The settings this run reads (for the journal's directory). */
    Settings settings() {
        return settings;
    }

    /** Stops a stub this run started; a stub at a URL is left running. */
    @Override
    public synchronized void close() {
        closed = true;
        if (process != null) {
            process.stop();
            process = null;
        }
    }
}
