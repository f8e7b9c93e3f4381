// ProviderTest.java: run with `mvn test`
package dev.svcstub.junit.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.svcstub.junit.Fault;
import dev.svcstub.junit.FaultMode;
import dev.svcstub.junit.RecordedRequest;
import dev.svcstub.junit.Route;
import dev.svcstub.junit.Selector;
import dev.svcstub.junit.SvcStub;
import dev.svcstub.junit.SvcStubExtension;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(SvcStubExtension.class)
class ProviderTest {
    /** The organisation the tests work in: its key, and the project it already has. */
    static final Map<String, Object> ACME = Map.of("orgs", Map.of("org_acme", Map.of(
            "keys", List.of(Map.of("key", "svc_org_acme_tf")),
            "projects", List.of(Map.of("name", "Shop", "slug", "shop")))));

    @BeforeEach
    void seed(SvcStub stub) { // the same namespace as the test's
        stub.seedManagement(ACME);
    }

    @Test
    void createsAProject(SvcStub stub) throws Exception {
        String id = new Provider(stub.url(), "svc_org_acme_tf").createProject("Checkout", "checkout");

        assertTrue(id.startsWith("proj_"), id);
        List<RecordedRequest> created = stub.requests(Route.PROJECTS_CREATE);
        assertEquals(1, created.size());
        assertEquals(201, created.get(0).status().getAsInt());
    }

    @Test
    void reportsASlugTaken(SvcStub stub) {
        IOException taken = assertThrows(IOException.class,
                () -> new Provider(stub.url(), "svc_org_acme_tf").createProject("Shop again", "shop"));

        assertTrue(taken.getMessage().startsWith("409 "), taken.getMessage());
    }

    @Test
    void surfacesAnOutage(SvcStub stub) {
        stub.arm(Fault.of(FaultMode.STATUS).status(503).applyTo(Selector.PROJECTS).times(1));

        assertThrows(IOException.class, () -> new Provider(stub.url(), "svc_org_acme_tf").createProject("Checkout", "checkout"));
    }
}
