package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Tests run at once (JUnit's concurrent mode, junit-platform.properties), each in a namespace of
 * its own on the run's one stub: what one serves, arms and records, no other sees; and each
 * namespace is gone once its test has ended.
 */
@ExtendWith(SvcStubExtension.class)
class ParallelTest {
    private static final int TESTS = 24;
    private static final Set<String> NAMESPACES = ConcurrentHashMap.newKeySet();
    private static final Set<String> STUBS = ConcurrentHashMap.newKeySet();
    private static final AtomicReference<String> STUB = new AtomicReference<>();

    static IntStream tests() {
        return IntStream.range(0, TESTS);
    }

    @ParameterizedTest
    @MethodSource("tests")
    void eachTestSeesItsOwnValueFaultsAndRequests(int test, SvcStub stub) {
        NAMESPACES.add(stub.namespace());
        STUBS.add(stub.baseUrl());
        STUB.set(stub.baseUrl());
        // "ParallelTest#eachTestSeesItsOwnValueFaultsAndRequests [1] 0": the stub keeps both ends,
        // so each invocation's name says which it is
        assertTrue(stub.namespace().matches(
                "ParallelTest-eachTestSeesIt\\.\\.[A-Za-z]*FaultsAndRequests-" + (test + 1) + "-" + test + "-[0-9a-f]{8}"),
                stub.namespace());
        assertEquals(stub.baseUrl() + "/ns/" + stub.namespace(), stub.url());

        String mine = String.format("value of test %02d", test);
        stub.setFixtures(Map.of("flags", Map.of("mine", Map.of("type", "string", "value", mine))));
        boolean faulted = test % 2 == 0;
        if (faulted) {
            stub.arm(Fault.of(FaultMode.HTTP_500).applyTo(Selector.EVALUATE).times(1));
        }

        Http.Seen first = Http.evaluate(stub.url(), "mine");
        if (faulted) {
            assertEquals(500, first.status, () -> "the first evaluate, faulted by this test: " + first);
        } else {
            assertTrue(first.body.contains(mine), () -> "the first evaluate: " + first);
        }
        assertEquals(mine, Http.valueOf(stub.url(), "mine"));
        assertEquals(List.of(), stub.armed());

        List<RecordedRequest> requests = stub.requests(Route.EVALUATE);
        assertEquals(2, requests.size(), () -> "this test's two requests: " + requests);
        assertEquals(faulted, requests.get(0).fault().isPresent(), requests::toString);
        assertFalse(requests.get(1).fault().isPresent());
        String answered = requests.get(1).answer().orElseThrow().body().orElseThrow().text().orElseThrow();
        assertTrue(answered.contains(mine), answered);
    }

    @AfterAll
    static void everyTestHadItsOwnNamespaceOnOneStubAndEachIsGone() {
        assertEquals(TESTS, NAMESPACES.size());
        assertEquals(1, STUBS.size(), () -> "stubs: " + STUBS);
        List<String> left = new ControlClient(STUB.get(), System.getenv("SVC_STUB_CONTROL_TOKEN")).namespaces();
        for (String namespace : NAMESPACES) {
            assertFalse(left.contains(namespace), () -> namespace + " is still there after its test ended");
        }
    }
}
