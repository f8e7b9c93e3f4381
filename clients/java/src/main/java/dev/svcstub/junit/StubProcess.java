package dev.svcstub.junit;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * A stub this JVM started: {@code svc-stub --host 127.0.0.1 --port 0 --stop-with <this JVM>},
 * ready once it prints its ready line (which names its URL). Its log goes to a file of its own,
 * never into the test output; a failed start quotes the last line of it. It stops when
 * {@link #stop()} is called, when the JVM shuts down, and, should the JVM be killed outright,
 * by itself ({@code --stop-with}).
 */
final class StubProcess {
    /** The first line a stub prints, once its port is bound; the rest of it is the stub's URL. */
    static final String READY_PREFIX = "svc-stub listening on ";
    static final long START_TIMEOUT_SECONDS = 30;
    private static final long STOP_TIMEOUT_SECONDS = 5;

    private final Process process;
    private final String url;
    private final Path logDirectory;
    private final Thread shutdownHook;

    private StubProcess(Process process, String url, Path logDirectory) {
        this.process = process;
        this.url = url;
        this.logDirectory = logDirectory;
        this.shutdownHook = new Thread(this::kill, "svc-stub shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /** Starts {@code bin} with {@code args} after the options above, and waits for its ready line. */
    static StubProcess start(String bin, List<String> args) {
        Path executable = resolve(bin).orElseThrow(() -> new StubStartException(
                "svc-stub: no '" + bin + "' to run; install it (pip install svc-stub) or set SVC_STUB_BIN to its path"));
        Path logDirectory;
        try {
            logDirectory = Files.createTempDirectory("svc-stub-");
        } catch (IOException failed) {
            throw new StubStartException("svc-stub: no temporary directory for its log: " + failed.getMessage());
        }
        Path log = logDirectory.resolve("stub.log");
        List<String> command = new ArrayList<>(List.of(executable.toString(), "--host", "127.0.0.1", "--port", "0",
                "--stop-with", Long.toString(ProcessHandle.current().pid())));
        command.addAll(args);
        Process process;
        try {
            process = new ProcessBuilder(command)
                    .redirectInput(ProcessBuilder.Redirect.from(nullFile()))
                    .redirectError(log.toFile())
                    .start();
        } catch (IOException failed) {
            deleteQuietly(logDirectory);
            throw new StubStartException("svc-stub: could not run '" + executable + "': " + failed.getMessage());
        }
        try {
            return new StubProcess(process, readyUrl(process, log), logDirectory);
        } catch (StubStartException failed) {
            process.destroyForcibly();
            deleteQuietly(logDirectory);
            throw failed;
        }
    }

    String url() {
        return url;
    }

    long pid() {
        return process.pid();
    }

    /** Stops it: SIGTERM (to it and anything it started), then SIGKILL after 5 s; its log goes with it. */
    void stop() {
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running, or about to: it stops the stub
        }
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        try {
            if (!process.waitFor(STOP_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                kill();
                process.waitFor(STOP_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            }
        } catch (InterruptedException interrupted) {
            kill();
            Thread.currentThread().interrupt();
        } finally {
            deleteQuietly(logDirectory);
        }
    }

    private void kill() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }

    /**
     * Reads the first line the stub prints, on a thread of its own (a read cannot time out), which
     * then keeps reading: the stub says nothing more, but a pipe must never fill and block it.
     */
    private static String readyUrl(Process process, Path log) {
        CompletableFuture<String> firstLine = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                firstLine.complete(out.readLine());
                while (out.readLine() != null) {
                    // drained
                }
            } catch (IOException closed) {
                firstLine.complete(null);
            }
        }, "svc-stub stdout");
        reader.setDaemon(true);
        reader.start();
        String line;
        try {
            line = firstLine.get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException slow) {
            throw new StubStartException("svc-stub did not start within " + START_TIMEOUT_SECONDS + "s: " + lastLine(log).orElse("it printed nothing"));
        } catch (ExecutionException | InterruptedException stopped) {
            if (stopped instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new StubStartException("svc-stub did not start: " + stopped);
        }
        if (line != null && line.startsWith(READY_PREFIX)) {
            return line.substring(READY_PREFIX.length()).strip();
        }
        if (line != null && !line.isBlank()) {
            throw new StubStartException("svc-stub did not start: it printed \"" + line.strip() + "\"");
        }
        String how = "it exited";
        try {
            if (process.waitFor(STOP_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                how = "exit code " + process.exitValue();
            }
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
        }
        throw new StubStartException("svc-stub did not start (" + how + "): " + lastLine(log).orElse("it printed nothing"));
    }

    /** The last thing the stub logged: why it gave up, as it said it. */
    static Optional<String> lastLine(Path log) {
        try (Stream<String> lines = Files.lines(log, StandardCharsets.UTF_8)) {
            return lines.map(String::strip).filter(line -> !line.isEmpty()).reduce((first, second) -> second);
        } catch (IOException | UncheckedIOException unreadable) {
            return Optional.empty();
        }
    }

    /** {@code bin} as a file to run: a path as it is, or a name looked up on PATH (with Windows' extensions). */
    static Optional<Path> resolve(String bin) {
        if (bin.contains("/") || bin.contains(File.separator)) {
            Path path = Path.of(bin);
            return Files.isRegularFile(path) && Files.isExecutable(path) ? Optional.of(path) : Optional.empty();
        }
        String searchPath = System.getenv("PATH");
        if (searchPath == null) {
            return Optional.empty();
        }
        List<String> extensions = new ArrayList<>(List.of(""));
        if (System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows")) {
            String pathext = System.getenv().getOrDefault("PATHEXT", ".COM;.EXE;.BAT;.CMD");
            extensions.addAll(List.of(pathext.toLowerCase(Locale.ROOT).split(";")));
        }
        for (String directory : searchPath.split(File.pathSeparator)) {
            for (String extension : extensions) {
                if (directory.isEmpty()) {
                    continue;
                }
                Path candidate = Path.of(directory, bin + extension);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return Optional.of(candidate);
                }
            }
        }
        return Optional.empty();
    }

    private static File nullFile() {
        return new File(System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows") ? "NUL" : "/dev/null");
    }

    private static void deleteQuietly(Path directory) {
        try (Stream<Path> paths = Files.walk(directory)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException | UncheckedIOException gone) {
            // a temporary directory: the system clears it in time
        }
    }
}
