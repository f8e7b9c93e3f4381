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
    @SuppressWarnings("try") // javac -Xlint: the block does not name the fault it is armed for
    void fallsBackWhileEvaluateFails(SvcStub stub) {
        Checkout checkout = new Checkout(stub.url());

        try (ArmedFault outage = stub.arm(Fault.of(FaultMode.HTTP_500).applyTo(Selector.EVALUATE))) {
            assertEquals("control", checkout.variant("user-1"));
        } // disarmed here
        assertEquals("treatment-b", checkout.variant("user-1"));
        stub.assertNoRequest(Route.CAPTURE);
    }

    @Test
    @SuppressWarnings("try")
    void givesUpOnAServiceThatDoesNotAnswer(SvcStub stub) {
        stub.setFixtures(Map.of("flags", Map.of("checkout-v2", Map.of("type", "string", "value", "one-page"))));
        Checkout impatient = new Checkout(stub.url(), Duration.ofMillis(500));

        try (ArmedFault hung = stub.arm(Fault.of(FaultMode.HANG).applyTo(Selector.EVALUATE))) {
            assertEquals("control", impatient.variant("user-1")); // after its timeout: no answer comes
        }
        assertEquals("one-page", new Checkout(stub.url()).variant("user-1"));
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
