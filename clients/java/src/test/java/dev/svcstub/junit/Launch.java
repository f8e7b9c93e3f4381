package dev.svcstub.junit;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.reporting.ReportEntry;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Runs {@link ChildTest} classes in a JUnit launcher of their own, in this JVM, as a build tool
 * would: a test run of its own (its own root store, so its own stub unless a URL is given or
 * this JVM's run already has one with the same options), with the configuration parameters
 * given. What each test ended with, and what it reported. Its {@link #main} does the same in a
 * JVM of its own, for a run a test can kill.
 */
final class Launch {
    private final Map<String, String> parameters = new LinkedHashMap<>();

    private Launch() {
        parameters.put(ChildTest.PARAMETER, "true");
    }

    static Launch withParameter(String name, String value) {
        return new Launch().and(name, value);
    }

    static Launch plain() {
        return new Launch();
    }

    Launch and(String name, String value) {
        parameters.put(name, value);
        return this;
    }

    /**
     * Runs the test classes named, as {@link #run} does, in the JVM this is the main class of
     * (its configuration parameters, such as {@code svcstub.args}, as {@code -D} system
     * properties), then prints each failed test's message and how many tests ran.
     */
    public static void main(String[] classNames) throws ClassNotFoundException {
        List<Class<?>> classes = new ArrayList<>();
        for (String name : classNames) {
            classes.add(Class.forName(name));
        }
        Outcome outcome = plain().run(classes.toArray(new Class<?>[0]));
        outcome.failures().forEach((name, message) -> System.out.println("test " + name + " failed: " + message));
        System.out.println("tests run: " + outcome.testsRun());
    }

    Outcome run(Class<?>... classes) {
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(Arrays.stream(classes).map(type -> selectClass(type)).collect(Collectors.toList()))
                .configurationParameters(parameters)
                .build();
        Outcome outcome = new Outcome();
        LauncherFactory.create().execute(request, outcome);
        return outcome;
    }

    /** What the tests (methods, not containers) of one launch ended with, by method name. */
    static final class Outcome implements TestExecutionListener {
        private final Map<String, TestExecutionResult> results = new ConcurrentHashMap<>();
        private final Map<String, List<ReportEntry>> entries = new ConcurrentHashMap<>();
        private final List<Throwable> containerFailures = new ArrayList<>();

        @Override
        public void executionFinished(TestIdentifier test, TestExecutionResult result) {
            if (test.isTest()) {
                results.put(methodName(test), result);
            } else if (result.getThrowable().isPresent()) {
                synchronized (containerFailures) {
                    containerFailures.add(result.getThrowable().get());
                }
            }
        }

        @Override
        public void reportingEntryPublished(TestIdentifier test, ReportEntry entry) {
            entries.computeIfAbsent(methodName(test), name -> new ArrayList<>()).add(entry);
        }

        private static String methodName(TestIdentifier test) {
            String name = test.getLegacyReportingName();
            int parenthesis = name.indexOf('(');
            return parenthesis < 0 ? name : name.substring(0, parenthesis);
        }

        /** How the test method {@code name} ended; an AssertionError if it did not run. */
        TestExecutionResult result(String name) {
            TestExecutionResult result = results.get(name);
            if (result == null) {
                throw new AssertionError("no test " + name + " ran; ran " + results.keySet()
                        + (containerFailures.isEmpty() ? "" : ", containers failed: " + containerFailures));
            }
            return result;
        }

        /** The message test {@code name} failed with; an AssertionError if it passed. */
        String failure(String name) {
            Optional<Throwable> thrown = result(name).getThrowable();
            return thrown.orElseThrow(() -> new AssertionError(name + " passed")).getMessage();
        }

        /** The values of the report entries test {@code name} published under {@code key}. */
        List<String> reported(String name, String key) {
            return entries.getOrDefault(name, List.of()).stream()
                    .map(entry -> entry.getKeyValuePairs().get(key))
                    .filter(value -> value != null)
                    .collect(Collectors.toList());
        }

        /** Each failed test's message, by method name. */
        Map<String, String> failures() {
            Map<String, String> failed = new java.util.TreeMap<>();
            results.forEach((name, result) -> result.getThrowable()
                    .ifPresent(thrown -> failed.put(name, String.valueOf(thrown.getMessage()))));
            return failed;
        }

        int testsRun() {
            return results.size();
        }
    }
}
