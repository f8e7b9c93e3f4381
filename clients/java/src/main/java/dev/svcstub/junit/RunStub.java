package dev.svcstub.junit;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The stub of one test run, kept in JUnit's root store so every test class shares it: the one a
 * setting names ({@code SVC_STUB_URL}), checked once, or the run's own, which the stub's
 * {@code svc-stub shared} starts (or attaches to) with this JVM as its owner, and stops when the
 * run ends (or by itself, should the JVM be killed). How a run gets one stub is the stub's
 * rule, not this class's. Reached once, under a lock: if that fails, each test that asks gets
 * the same one line, as an exception of its own whose cause is the first (a test's stack trace
 * is its own; one exception object is never thrown on several threads).
 *
 * <p>Both {@code AutoCloseable} (JUnit 5.13 and later close those) and {@code CloseableResource}
 * (which earlier JUnit 5 versions close); JUnit closes it once either way.
 */
@SuppressWarnings("deprecation") // CloseableResource: what JUnit before 5.13 closes
final class RunStub implements ExtensionContext.Store.CloseableResource, AutoCloseable {
    static final String READY = "svc-stub listening on ";
    /** {@code off}: the run's end neither prints nor writes its coverage. */
    static final String COVERAGE_VARIABLE = "SVC_STUB_COVERAGE";
    /** A guard against a command that never ends, not a budget: the command itself waits 30 s at most. */
    private static final long HANG_GUARD_SECONDS = 60;
    private static final Pattern SVC_STUB_PROJECT = Pattern.compile("(?m)^name\\s*=\\s*\"svc-stub\"\\s*$");

    private final Settings settings;
    private final Journal journal;
    private ControlClient client; // guarded by this
    private SvcStubException failure; // guarded by this
    private List<String> shared; // guarded by this: the command that gave this run its stub; null: none
    private boolean closed; // guarded by this

    RunStub(Settings settings) {
        this.settings = settings;
        this.journal = settings.journal(Path.of("").toAbsolutePath(), Instant.now());
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
            throw failure.again();
        }
        return client;
    }

    Journal journal() {
        return journal;
    }

    private ControlClient reach() {
        Optional<Settings.Value> running = settings.get(Settings.URL);
        if (running.isPresent()) {
            return checked(running.get());
        }
        List<String> command = List.of(executable().toString(), "shared", "--owner", Long.toString(ProcessHandle.current().pid()));
        List<String> said = run(command, List.of("--require", SvcStub.VERSION));
        String url = said.stream().filter(line -> line.startsWith(READY)).findFirst()
                .orElseThrow(() -> new StubStartException("svc-stub: '" + String.join(" ", command)
                        + "' printed no ready line: " + String.join(" | ", said)))
                .substring(READY.length());
        shared = command;
        return new ControlClient(url, settings.controlToken());
    }

    /** Stops the run's stub, if this run started (or attached to) one; a stub at a URL is left running. */
    @Override
    public synchronized void close() {
        closed = true;
        // the run's own stub only: one at SVC_STUB_URL serves other runs too (svc-stub coverage --url tells its coverage)
        if (client != null && shared != null && !"off".equals(settings.variable(COVERAGE_VARIABLE).orElse(""))) {
            reportCoverage(client);
        }
        if (shared != null) {
            try {
                run(shared, List.of("--stop"));
            } catch (SvcStubException notStopped) { // it stops with this JVM anyway
                System.err.println(notStopped.getMessage());
            }
            shared = null;
        }
    }

    /**
     * The run's end: prints the run's coverage summary, the stub's lines as it words them
     * ({@code svc-stub coverage: runtime 2 of 15 cells met; gaps: ...}, then the fixture flags never
     * read), and writes the full report, {@code coverage.json}, where the journals go. Never fails
     * the run: a stub that cannot say is one line instead.
     */
    private void reportCoverage(ControlClient stub) {
        try {
            Members answer = stub.coverage("run");
            List<String> summary = Coverage.of(answer).summary();
            Path file = journal.keepCoverage(Json.pretty(answer.asMap()) + System.lineSeparator());
            List<String> lines = new ArrayList<>(summary);
            lines.add("svc-stub coverage report: " + file);
            System.out.println(String.join(System.lineSeparator(), lines));
        } catch (SvcStubException | IOException | IllegalArgumentException failed) {
            System.out.println("svc-stub coverage not reported: " + failed.getMessage());
        }
    }

    /**
     * Runs {@code command} with {@code options}, then {@code --} and the run's stub options, to its
     * end: what it printed, a line each. A command that fails gives its own one line.
     */
    private List<String> run(List<String> command, List<String> options) {
        List<String> line = new ArrayList<>(command);
        line.addAll(options);
        line.add("--");
        line.addAll(settings.args());
        Process process;
        try {
            process = new ProcessBuilder(line).redirectErrorStream(true).start();
            process.getOutputStream().close();
        } catch (IOException failed) {
            throw new StubStartException("svc-stub: could not run '" + command.get(0) + "': " + failed.getMessage());
        }
        CompletableFuture<String> output = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try {
                output.complete(new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException failed) {
                output.completeExceptionally(failed);
            }
        }, "svc-stub shared");
        reader.setDaemon(true);
        reader.start();
        try {
            List<String> said = output.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS).lines().map(String::strip)
                    .filter(each -> !each.isEmpty()).toList();
            if (!process.waitFor(HANG_GUARD_SECONDS, TimeUnit.SECONDS)) {
                throw new TimeoutException();
            }
            if (process.exitValue() != 0) {
                throw new StubStartException(said.isEmpty() ? "svc-stub: '" + String.join(" ", line) + "' failed (exit code "
                        + process.exitValue() + ") and said nothing" : said.get(said.size() - 1));
            }
            return said;
        } catch (TimeoutException | ExecutionException | InterruptedException stuck) {
            process.destroyForcibly();
            if (stuck instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new StubStartException("svc-stub: '" + String.join(" ", line) + "' did not end: "
                    + (stuck instanceof TimeoutException ? "no end of its output in " + HANG_GUARD_SECONDS + " s" : stuck));
        }
    }

    /** The {@code svc-stub} command: SVC_STUB_BIN (a path, or a name on PATH), else {@code svc-stub} on PATH. */
    private Path executable() {
        Optional<Settings.Value> bin = settings.get(Settings.BIN);
        String name = bin.map(Settings.Value::value).orElse("svc-stub");
        Stream<Path> candidates = name.contains("/") || name.contains(File.separator) ? Stream.of(Path.of(name))
                : Stream.of(settings.variable("PATH").orElse("").split(File.pathSeparator)).filter(dir -> !dir.isEmpty())
                        .flatMap(dir -> Stream.of(Path.of(dir, name), Path.of(dir, name + ".exe")));
        return candidates.filter(path -> Files.isRegularFile(path) && Files.isExecutable(path)).findFirst()
                .orElseThrow(() -> new StubStartException(noCommand(bin)));
    }

    /** The line for a run with no svc-stub to run: the command that installs one, on this machine. */
    static String noCommand(Optional<Settings.Value> bin) {
        String why = bin.map(v -> v.name() + "=" + v.value() + " is no executable file")
                .orElse("SVC_STUB_BIN is not set and none is on PATH");
        return "svc-stub: no svc-stub command (" + why + "); install it from its clone (python3 -m venv .venv && "
                + ".venv/bin/pip install " + cloneOfSvcStub() + ") and set SVC_STUB_BIN=$PWD/.venv/bin/svc-stub, or SVC_STUB_URL to a running stub";
    }

    /**
     * The clone of svc-stub this library runs from (two levels above its folder,
     * {@code clients/java}, whose {@code target/classes} or jar is on the classpath), else a placeholder.
     */
    static String cloneOfSvcStub() {
        try {
            Path clone = Path.of(SvcStub.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                    .toAbsolutePath().getParent().getParent().getParent().getParent();
            if (SVC_STUB_PROJECT.matcher(Files.readString(clone.resolve("pyproject.toml"))).find()) {
                return clone.toString();
            }
        } catch (IOException | RuntimeException | java.net.URISyntaxException notAClone) {
            // a jar from a repository, or a class loader that does not say where it is
        }
        return "path/to/svc-stub";
    }

    /** The stub a setting names, if it answers as svc-stub and is not older than this library. */
    private ControlClient checked(Settings.Value setting) {
        String url = setting.value().replaceAll("/+$", "");
        String named = setting.name() + "=" + url;
        ControlClient stub = new ControlClient(url, settings.controlToken());
        String version;
        try {
            if (!stub.healthy()) {
                throw new IllegalArgumentException("its /health does not say ok");
            }
            version = stub.version();
        } catch (StubUnreachableException unreachable) {
            throw notTheStub(named, setting.name(), unreachable.reason());
        } catch (StubRefusedException refused) {
            if (refused.status() == 401) {
                throw refused; // its line says to set the token
            }
            throw notTheStub(named, setting.name(), refused.status() + " from "
                    + refused.call().substring(refused.call().indexOf(' ') + 1) + ": " + refused.detail());
        } catch (IllegalArgumentException notTheDocument) {
            throw notTheStub(named, setting.name(), notTheDocument.getMessage());
        }
        if (!recentEnough(version)) {
            throw new StubUnreachableException("svc-stub: " + named + " is svc-stub " + version + ", older than this package ("
                    + SvcStub.VERSION + "); upgrade it (.venv/bin/pip install --upgrade " + cloneOfSvcStub() + ") and start it again",
                    "version " + version);
        }
        return stub;
    }

    private static StubUnreachableException notTheStub(String named, String setting, String problem) {
        return new StubUnreachableException("svc-stub: " + named + " does not answer as svc-stub (" + problem
                + "); start one there (svc-stub --port PORT) or unset " + setting + " to have one started", problem);
    }

    /** Whether a stub of {@code version} is recent enough for this library (see {@link #compatible}). */
    static boolean recentEnough(String version) {
        return compatible(version, SvcStub.VERSION);
    }

    /** X.Y.Z, a leading v allowed; then a prerelease (-rc.1, rc1, .dev1); then build metadata, ignored. */
    private static final Pattern RELEASE = Pattern.compile(
            "v?(\\d+)\\.(\\d+)\\.(\\d+)(-[0-9A-Za-z.-]+|\\.?[A-Za-z][0-9A-Za-z.]*)?(\\+[0-9A-Za-z.-]*)?");

    /**
     * Whether a helper of version {@code helper} works with a stub of version {@code stub}, by the
     * one rule of clients/compatibility.json: the stub's release numbers at least the helper's; at
     * equal numbers a prerelease stub is older than a final helper, and prereleases go together.
     * Anything that is not a version is not compatible.
     */
    static boolean compatible(String stub, String helper) {
        Matcher have = RELEASE.matcher(stub);
        Matcher need = RELEASE.matcher(helper);
        if (!have.matches() || !need.matches()) {
            return false;
        }
        for (int group = 1; group <= 3; group++) {
            int order = new java.math.BigInteger(have.group(group)).compareTo(new java.math.BigInteger(need.group(group)));
            if (order != 0) {
                return order > 0;
            }
        }
        return have.group(4) == null || need.group(4) != null;
    }
}
