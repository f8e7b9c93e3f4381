package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Which namespace a SvcStub parameter is, and its name: the stub's, made from the test's (Class#method). */
@ExtendWith(SvcStubExtension.class)
class NamespacesTest {
    private static final Set<String> REPETITIONS = ConcurrentHashMap.newKeySet();
    private static SvcStub classWide;
    private SvcStub beforeEach;

    @BeforeAll
    static void keepTheClassesNamespace(SvcStub stub) {
        classWide = stub;
    }

    @BeforeEach
    void keepTheTestsNamespace(SvcStub stub) {
        beforeEach = stub;
    }

    @Test
    void aTestAndItsBeforeEachShareItsNamespaceAndTheClassHasOneOfItsOwn(SvcStub stub, SvcStub again) {
        assertSame(beforeEach, stub);
        assertSame(stub, again);
        assertTrue(classWide.namespace().matches("NamespacesTest-[0-9a-f]{8}"), classWide.namespace());
        assertNotEquals(classWide.namespace(), stub.namespace());
        assertEquals(classWide.baseUrl(), stub.baseUrl());
        // NamespacesTest#aTestAnd..., made safe and kept to 55 characters, both ends, by the stub,
        // and a random suffix
        assertTrue(stub.namespace().matches("NamespacesTest-aTestAndItsB\\.\\.eAndTheClassHasOneOfItsOwn-[0-9a-f]{8}"),
                stub.namespace());
    }

    @RepeatedTest(2)
    void aRepetitionHasANamespaceOfItsOwn(SvcStub stub) {
        // "NamespacesTest#aRepetitionHasANamespaceOfItsOwn repetition 1 of 2": the stub keeps both
        // ends, so each repetition's name says which it is
        assertTrue(stub.namespace().matches("NamespacesTest-aRepetitionH\\.\\.OfItsOwn-repetition-[12]-of-2-[0-9a-f]{8}"),
                stub.namespace());
        assertTrue(REPETITIONS.add(stub.namespace()), () -> stub.namespace() + " twice");
    }

    @Nested
    class InANestedClass {
        @Test
        void theNameIsTheNestedClasss(SvcStub stub) {
            assertTrue(stub.namespace().matches("InANestedClass-theNameIsTheNestedClasss-[0-9a-f]{8}"), stub.namespace());
        }
    }
}
