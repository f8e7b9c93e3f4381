package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An extension built in code ({@code @RegisterExtension}, as WireMock's): its settings win over
 * parameters and variables; other stub options are a stub of their own; an annotation's fixtures
 * are served by it, not by a second, declared one.
 */
class BuilderTest {
    @RegisterExtension
    static SvcStubExtension svcStub = SvcStubExtension.newInstance()
            .args("--fixtures", FixturesTest.RESOURCES.resolve("beta.yaml").toString())
            .build();

    @Test
    void itsStubServesItsOwnOptions(SvcStub stub) {
        assertEquals(true, Http.valueOf(stub.url(), "beta-banner"));
        assertTrue(Http.evaluate(stub.url(), "checkout-v2").body.contains("\"found\":false"), "beta.yaml alone is served");
        assertTrue(stub.namespace().startsWith("BuilderTest-itsStubServesItsOwnOptions-"), stub.namespace());
    }

    @Test
    @SvcStubFixtures("pricing.json")
    void anAnnotationIsServedByIt(SvcStub stub) {
        assertEquals("grid", Http.valueOf(stub.url(), "pricing-layout"));
    }

    @Test
    void givenSettingsWinAndAreNamedInMessages() {
        Settings settings = new Settings(Map.of("svcstub.url", "http://127.0.0.1:1", "svcstub.args", "--a b\u0000--c"),
                name -> Optional.of("from-a-parameter"), Map.of("SVC_STUB_URL", "from-a-variable"));
        assertEquals(Optional.of(new Settings.Value("SvcStubExtension's url", "http://127.0.0.1:1")), settings.get(Settings.URL));
        assertEquals(List.of("--a b", "--c"), settings.args());
        assertEquals("from-a-parameter", settings.get(Settings.BIN).orElseThrow().value());
        assertEquals("url: empty", assertThrows(IllegalArgumentException.class, () -> SvcStubExtension.newInstance().url(" ")).getMessage());
    }

    @ChildTest
    static class AtAUrlWhereNothingAnswers {
        @RegisterExtension
        static SvcStubExtension svcStub = SvcStubExtension.newInstance().url("http://127.0.0.1:1").build();

        @Test
        void first(SvcStub stub) {
            stub.requests();
        }
    }

    @Test
    void aUrlGivenInCodeIsNamedSoInItsLine() {
        String line = Launch.plain().run(AtAUrlWhereNothingAnswers.class).failure("first");
        assertEquals("svc-stub: SvcStubExtension's url=http://127.0.0.1:1 does not answer as svc-stub (connection refused);"
                + " start one there (svc-stub --port PORT) or unset SvcStubExtension's url to have one started", line);
    }
}
