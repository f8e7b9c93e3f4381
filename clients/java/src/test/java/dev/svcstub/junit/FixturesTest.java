package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** What a test's namespace serves: fixtures from a map, a file or an annotation; keys; the management plane. */
@ExtendWith(SvcStubExtension.class)
class FixturesTest {
    static final Path RESOURCES = Path.of("src/test/resources/dev/svcstub/junit");

    @Test
    void theDefaultFixturesServeCheckout(SvcStub stub) {
        assertEquals("treatment-b", Http.valueOf(stub.url(), "checkout-v2"));
    }

    @Test
    void fixturesFromFilesAndMaps(SvcStub stub) {
        assertEquals(List.of("beta-banner"), stub.setFixtures(RESOURCES.resolve("beta.yaml")));
        assertEquals(List.of("beta-banner", "pricing-layout"), stub.mergeFixtures(RESOURCES.resolve("pricing.json")));
        assertEquals(List.of("beta-banner", "pricing-layout"), stub.mergeFixtures(
                Map.of("flags", Map.of("pricing-layout", Map.of("type", "string", "value", "list")))));
        assertEquals(true, Http.valueOf(stub.url(), "beta-banner"));
        assertEquals("list", Http.valueOf(stub.url(), "pricing-layout"));

        SvcStubException missing = assertThrows(SvcStubException.class, () -> stub.setFixtures(RESOURCES.resolve("missing.yaml")));
        assertEquals("svc-stub: fixtures: " + RESOURCES.resolve("missing.yaml").toAbsolutePath() + ": no such file",
                missing.getMessage());
        StubRefusedException invalid = assertThrows(StubRefusedException.class,
                () -> stub.setFixtures(Map.of("flags", Map.of("x", Map.of("type", "colour")))));
        assertEquals(400, invalid.status());
    }

    @Test
    @SvcStubFixtures(value = {"beta.yaml", "/dev/svcstub/junit/pricing.json"}, keys = "project-api-key_fixtures-keys")
    void anAnnotationServesFilesBesideTheTestAndBindsKeys(SvcStub stub) {
        assertEquals(true, Http.valueOf(stub.url(), "beta-banner"));
        assertEquals("grid", Http.valueOf(stub.url(), "pricing-layout"));
        // no namespace in the URL: the bound key says which
        Http.Seen byKey = Http.send(stub.baseUrl(), "/v1/flags/evaluate", "Bearer project-api-key_fixtures-keys",
                "{\"targetingKey\":\"user-1\",\"flagKeys\":[\"beta-banner\"]}", Map.of(), Http.HANG_GUARD);
        assertTrue(byKey.body.contains("\"value\":true"), byKey::toString);
        assertEquals(3, stub.requests(Route.EVALUATE).size(), "the bound key's request is in the test's journal");
    }

    @Nested
    @SvcStubFixtures("beta.yaml")
    class AnnotatedClass {
        @Test
        void everyTestOfTheClassIsServedItsFixtures(SvcStub stub) {
            assertEquals(true, Http.valueOf(stub.url(), "beta-banner"));
            assertTrue(Http.evaluate(stub.url(), "checkout-v2").body.contains("\"found\":false"));
        }

        @Test
        @SvcStubFixtures("pricing.json")
        void aMethodsAnnotationWinsOverItsClasss(SvcStub stub) {
            assertEquals("grid", Http.valueOf(stub.url(), "pricing-layout"));
            assertTrue(Http.evaluate(stub.url(), "beta-banner").body.contains("\"found\":false"));
        }
    }

    @Test
    void aFixtureFileThatIsNowhereIsOneLine() {
        SvcStubException missing = assertThrows(SvcStubException.class, () -> TestNamespace.fixtureText("nowhere.yaml", FixturesTest.class));
        assertEquals("svc-stub: @SvcStubFixtures: no 'nowhere.yaml' beside dev.svcstub.junit.FixturesTest on the classpath, nor at "
                + Path.of("nowhere.yaml").toAbsolutePath(), missing.getMessage());
    }

    /** The management: section a Terraform provider's tests seed. */
    static final Map<String, Object> ACME = Map.of("orgs", Map.of("org_acme", Map.of(
            "keys", List.of(Map.of("key", "svc_org_acme_admin", "scope", "org:management")),
            "projects", List.of(Map.of("projectId", "proj_shop", "name", "Shop", "slug", "shop")))));

    @Test
    void seedManagementServesTheManagementPlane(SvcStub stub) {
        Map<String, Object> state = stub.seedManagement(ACME);
        assertTrue(((Map<?, ?>) state.get("orgs")).containsKey("org_acme"), state::toString);
        assertEquals(state, stub.management());

        Http.Seen listed = Http.get(stub.url(), "/v1/projects", "Bearer svc_org_acme_admin");
        assertEquals(200, listed.status, listed::toString);
        assertTrue(listed.body.contains("\"projectId\":\"proj_shop\""), listed::toString);
        List<RecordedRequest> projects = stub.requests(Route.PROJECTS);
        assertEquals(1, projects.size());
        assertEquals(Route.PROJECTS_LIST.wireName(), projects.get(0).route().orElseThrow());

        // the seed is the test's own: the default namespace does not know the key
        assertEquals(401, Http.get(stub.baseUrl(), "/v1/projects", "Bearer svc_org_acme_admin").status);
    }

    @Test
    void aRateLimitAnswers429(SvcStub stub) {
        stub.setRateLimit(0.01); // one request per 100 s: the second is limited however slow the machine
        Http.evaluate(stub.url(), "checkout-v2");
        Http.Seen limited = Http.evaluate(stub.url(), "checkout-v2");
        assertEquals(429, limited.status, limited::toString);
        assertEquals("rate-limit", stub.requests(Route.EVALUATE).get(1).fault().orElseThrow().source());
        stub.setRateLimit(0);
    }

    @Test
    void vendorFlagsAreServedVerbatim(SvcStub stub) {
        Map<String, Object> body = Map.of("flags", Map.of("java-flag", Map.of("enabled", true, "variant", "jvm")));
        stub.setVendorFlags(body);
        Http.Seen flags = Http.send(stub.url(), "/flags?v=2", "Bearer phc_java", "{\"api_key\":\"phc_java\",\"distinct_id\":\"user-1\"}", Map.of(),
                Http.HANG_GUARD);
        assertTrue(flags.body.contains("java-flag"), flags::toString);
    }
}
