package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * One stub per test run, which {@code svc-stub shared} starts for the run's first test: every test
 * class of the run shares it, and it is gone after the run, whether the run ends (the extension
 * stops it) or its JVM is killed (the stub stops with its owner).
 */
class SharedStubTest {
    /**
     * Options of the nested run's own. A run's stub is keyed by its owner (this JVM) and its
     * options: with none, the nested run would attach to this suite's own stub, and stop it.
     */
    static final String OPTIONS = "--strict-keys";
    /** A guard against a hang, not a budget: a stub stops in well under a second. */
    static final long HANG_GUARD_SECONDS = 60;
    static final String HELD = "held by the run: ";
    static final Set<String> STUBS = ConcurrentHashMap.newKeySet();
    static final Set<String> NAMESPACES = ConcurrentHashMap.newKeySet();

    @BeforeEach
    void noUrl() {
        assumeTrue(System.getenv("SVC_STUB_URL") == null, "SVC_STUB_URL is set: the run would use it rather than start a stub");
    }

    @ExtendWith(SvcStubExtension.class)
    @ChildTest
    static class OneClass {
        @Test
        void first(SvcStub stub) {
            STUBS.add(stub.baseUrl());
            NAMESPACES.add(stub.namespace());
        }

        @Test
        void second(SvcStub stub) {
            STUBS.add(stub.baseUrl());
            NAMESPACES.add(stub.namespace());
        }
    }

    @ExtendWith(SvcStubExtension.class)
    @ChildTest
    static class AnotherClass {
        @Test
        void third(SvcStub stub) {
            STUBS.add(stub.baseUrl());
            NAMESPACES.add(stub.namespace());
        }
    }

    /** Run in a JVM of its own ({@link Launch#main}), which the test below kills while this holds the run's stub. */
    @ExtendWith(SvcStubExtension.class)
    @ChildTest
    static class HeldUntilKilled {
        @Test
        void holds(SvcStub stub) throws InterruptedException {
            System.out.println(HELD + stub.baseUrl());
            new CountDownLatch(1).await(HANG_GUARD_SECONDS, TimeUnit.SECONDS); // killed long before
        }
    }

    @Test
    @ExtendWith(SvcStubExtension.class)
    void everyTestClassOfARunSharesItsStubWhichIsGoneAfterTheRun(SvcStub ours) throws InterruptedException {
        Launch.Outcome outcome = Launch.withParameter("svcstub.args", OPTIONS)
                .and("junit.jupiter.execution.parallel.mode.classes.default", "concurrent")
                .run(OneClass.class, AnotherClass.class);

        assertEquals(3, outcome.testsRun());
        for (String test : new String[] {"first", "second", "third"}) {
            assertEquals(Optional.empty(), outcome.result(test).getThrowable(), test);
        }
        assertEquals(1, STUBS.size(), () -> "stubs: " + STUBS);
        assertEquals(3, NAMESPACES.size(), () -> "namespaces: " + NAMESPACES);
        String theirs = STUBS.iterator().next();
        assertNotEquals(ours.baseUrl(), theirs, "a run with options of its own has a stub of its own");

        awaitGone(theirs); // stopped at the run's end: its owner, this JVM, lives on
        assertTrue(new ControlClient(ours.baseUrl(), System.getenv("SVC_STUB_CONTROL_TOKEN")).healthy(), "this run's stub is untouched");
    }

    @Test
    void aKilledRunsStubStopsWithIt() throws Exception {
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), Launch.class.getName(), HeldUntilKilled.class.getName());
        Process runner = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            List<String> said = new ArrayList<>();
            String url = CompletableFuture.supplyAsync(() -> heldStub(runner, said))
                    .get(HANG_GUARD_SECONDS, TimeUnit.SECONDS); // a hang guard: the test prints it once its stub is up
            assertTrue(url.startsWith("http://"), () -> "the runner said: " + said);
            assertTrue(new ControlClient(url, System.getenv("SVC_STUB_CONTROL_TOKEN")).healthy());

            runner.destroyForcibly(); // SIGKILL: no end-of-run hook runs, no shutdown hook
            runner.onExit().get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
            awaitGone(url);
        } finally {
            runner.destroyForcibly();
        }
    }

    /** The stub the runner's test holds, as it prints it; what it printed before, in {@code said}. */
    private static String heldStub(Process runner, List<String> said) {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(runner.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                if (line.startsWith(HELD)) {
                    return line.substring(HELD.length());
                }
                said.add(line);
            }
            return "(it ended)";
        } catch (java.io.IOException closed) {
            return "(" + closed + ")";
        }
    }

    /** Waits until connections to {@code url} are refused (polling: nothing says when a process has gone). */
    static void awaitGone(String url) throws InterruptedException {
        ControlClient stub = new ControlClient(url, System.getenv("SVC_STUB_CONTROL_TOKEN"));
        Instant guard = Instant.now().plusSeconds(HANG_GUARD_SECONDS);
        while (true) {
            try {
                stub.healthy();
            } catch (StubUnreachableException unreachable) {
                if (unreachable.reason().equals("connection refused")) {
                    return;
                }
            }
            assertTrue(Instant.now().isBefore(guard), url + " still answers");
            Thread.sleep(20);
        }
    }
}
