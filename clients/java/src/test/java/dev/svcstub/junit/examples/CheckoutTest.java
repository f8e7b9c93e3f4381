// CheckoutTest.java: run with `mvn test`
package dev.svcstub.junit.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.svcstub.junit.ArmedFault;
import dev.svcstub.junit.Fault;
import dev.svcstub.junit.FaultMode;
import dev.svcstub.junit.Route;
import dev.svcstub.junit.Selector;
import dev.svcstub.junit.SvcStub;
import dev.svcstub.junit.SvcStubExtension;
import dev.svcstub.junit.SvcStubFixtures;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(SvcStubExtension.class)
class CheckoutTest {

    @Test
    void readsTheServedVariant(SvcStub stub) { // this test's namespace: give the code under test stub.url()
        Checkout checkout = new Checkout(stub.url());

        assertEquals("treatment-b", checkout.variant("user-1")); // the default fixtures
        Map<String, Object> sent = stub.requests(Route.EVALUATE).get(0).json(); // what it sent, as JSON
        assertEquals("user-1", sent.get("targetingKey"));
    }

    @Test
    void fallsBackWhenTheServiceIsUnreachable(SvcStub stub) {
        Checkout offline = new Checkout(stub.offlineUrl()); // nothing listens there: connections are refused

        assertEquals("control", offline.variant("user-1"));
    }

    @Test
    void fallsBackWhileEvaluateFails(SvcStub stub) {
        Checkout checkout = new Checkout(stub.url());

        try (ArmedFault outage = stub.arm(Fault.of(FaultMode.HTTP_500).applyTo(Selector.EVALUATE))) {
            assertEquals("control", checkout.variant("user-1"));
        } // disarmed here
        assertEquals("treatment-b", checkout.variant("user-1"));
        stub.assertNoRequest(Route.CAPTURE);
    }

    @Test
    void givesUpOnASlowService(SvcStub stub) {
        stub.setFixtures(Map.of("flags", Map.of("checkout-v2", Map.of("type", "string", "value", "one-page"))));
        stub.arm(Fault.of(FaultMode.DELAY).delay(Duration.ofSeconds(5)).times(1)); // for the rest of the test
        Checkout checkout = new Checkout(stub.url());

        assertEquals("control", checkout.variant("user-1")); // after its 2 s timeout
        assertEquals("one-page", checkout.variant("user-1"));
    }

    @Test
    @SvcStubFixtures("pricing.yaml") // beside this class on the test classpath
    void servesTheTestsOwnFixtures(SvcStub stub) {
        assertEquals("annual-first", new Checkout(stub.url()).variant("user-1"));
    }

    @Test
    void reportsTheExposure(SvcStub stub) throws Exception {
        new Checkout(stub.url()).reportExposure("user-1", "treatment-b");

        stub.waitForSvcEvents(1); // the stub's long-poll: returns as soon as it arrives
        stub.assertExposure("checkout-v2", "user-1", "treatment-b");
    }
}
