package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** One stub per test run: every test class of a run shares it, and it stops when the run ends. */
class SharedStubTest {
    static final Set<String> STUBS = ConcurrentHashMap.newKeySet();
    static final Set<String> NAMESPACES = ConcurrentHashMap.newKeySet();

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

    @Test
    void everyTestClassOfARunSharesItsStubWhichStopsWhenTheRunEnds() {
        assumeTrue(System.getenv("SVC_STUB_URL") == null, "SVC_STUB_URL is set: the run would use it rather than start a stub");
        Launch.Outcome outcome = Launch.plain()
                .and("junit.jupiter.execution.parallel.mode.classes.default", "concurrent")
                .run(OneClass.class, AnotherClass.class);

        assertEquals(3, outcome.testsRun());
        for (String test : new String[] {"first", "second", "third"}) {
            assertEquals(java.util.Optional.empty(), outcome.result(test).getThrowable(), test);
        }
        assertEquals(1, STUBS.size(), () -> "stubs: " + STUBS);
        assertEquals(3, NAMESPACES.size(), () -> "namespaces: " + NAMESPACES);

        ControlClient stopped = new ControlClient(STUBS.iterator().next(), null);
        StubUnreachableException gone = assertThrows(StubUnreachableException.class, stopped::healthy);
        assertEquals("connection refused", gone.reason());
    }
}
