package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Which namespace a SvcStub parameter is, and its name. */
@ExtendWith(SvcStubExtension.class)
class NamespacesTest {
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
        // Class.method, cut to 55 characters, and a random suffix
        assertTrue(stub.namespace().matches("NamespacesTest\\.aTestAndItsBeforeEachShareItsNamespaceAn-[0-9a-f]{8}"),
                stub.namespace());
    }

    @RepeatedTest(2)
    void aRepetitionHasANamespaceOfItsOwn(SvcStub stub) {
        assertTrue(stub.namespace().matches("NamespacesTest\\.aRepetitionHasANamespa-repetition-\\d-of-2-[0-9a-f]{8}"),
                stub.namespace());
    }

    @Nested
    class InANestedClass {
        @Test
        void theNameIsTheNestedClasss(SvcStub stub) {
            assertTrue(stub.namespace().matches("InANestedClass\\.theNameIsTheNestedClasss-[0-9a-f]{8}"), stub.namespace());
        }
    }

    @Test
    void namesAreMadeSafeAndShort() {
        check("plain", "plain");
        check("a b&üc", "a-b-c");
        check("Class.method-[1] spaces, symbols & ünïcode", "Class.method-1-spaces-symbols-n-code");
        check("trailing...", "trailing");
        check("...", "test");
        String longName = "x".repeat(80);
        check(longName, "x".repeat(55));
        check("y".repeat(54) + "-.z", "y".repeat(54)); // cut at 55, then trimmed
        assertNotEquals(NamespaceNames.of("same"), NamespaceNames.of("same"));
        // an invocation keeps its name whole; the test's is cut to make room
        String invoked = NamespaceNames.of("C." + "m".repeat(60), "[12] HTTP_500");
        assertTrue(invoked.matches("C\\.m{41}-12-HTTP_500-[0-9a-f]{8}"), invoked);
    }

    private static void check(String testName, String readable) {
        String name = NamespaceNames.of(testName);
        assertTrue(Pattern.matches(Pattern.quote(readable) + "-[0-9a-f]{8}", name), () -> testName + " -> " + name);
        assertTrue(name.length() <= 64);
    }
}
