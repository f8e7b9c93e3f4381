package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.opentest4j.AssertionFailedError;

/**
 * Assertions on the journal: the stub's verdicts (GET /_test/checks/*). Passing ones pass; failing
 * ones fail with the stub's words as they are, which say what was recorded instead.
 */
@ExtendWith(SvcStubExtension.class)
class AssertionsTest {

    @Test
    void passingAssertionsPass(SvcStub stub) {
        Http.capture(stub.url(), WaitsTest.EXPOSURE);
        Http.evaluate(stub.url(), "checkout-v2");
        stub.assertExposure("checkout-v2", "user-1", "treatment-b");
        stub.assertExposure("checkout-v2", "user-1");
        stub.assertNoRequest(Route.REGISTER);
        stub.assertNoWarnings();
        stub.assertNoRetryBeforeRetryAfter(Route.EVALUATE);
        stub.assertNoRetryBeforeRetryAfter();
        assertEquals(List.of(SvcEvent.from(WaitsTest.EXPOSURE)), stub.recorded().exposures());
    }

    @Test
    void aMissingExposureListsTheExposuresRecorded(SvcStub stub) {
        Http.capture(stub.url(), WaitsTest.EXPOSURE);
        AssertionFailedError missing = assertThrows(AssertionFailedError.class,
                () -> stub.assertExposure("checkout-v2", "user-2"));
        assertEquals(EXPOSURE_MISSING, missing.getMessage());
        AssertionFailedError otherVariant = assertThrows(AssertionFailedError.class,
                () -> stub.assertExposure("checkout-v2", "user-1", "control"));
        assertEquals("no exposure of checkout-v2 for user-1 (variant control); exposures recorded:\n"
                + "  checkout-v2 for user-1: variant treatment-b", otherVariant.getMessage());
    }

    /** How the stub words a missing exposure of checkout-v2 for user-2, when WaitsTest.EXPOSURE was captured. */
    static final String EXPOSURE_MISSING = "no exposure of checkout-v2 for user-2; exposures recorded:\n"
            + "  checkout-v2 for user-1: variant treatment-b";

    @Test
    void anExposureCanBeWaitedFor(SvcStub stub) {
        CompletableFuture<Void> late = CompletableFuture.runAsync(() -> Http.capture(stub.url(), WaitsTest.EXPOSURE),
                CompletableFuture.delayedExecutor(200, TimeUnit.MILLISECONDS));
        stub.assertExposure("checkout-v2", "user-1", "treatment-b", Http.HANG_GUARD); // a hang guard: it returns once it came
        late.join();
        AssertionFailedError missing = assertThrows(AssertionFailedError.class,
                () -> stub.assertExposure("checkout-v2", "user-2", null, Duration.ofMillis(100)));
        assertEquals(EXPOSURE_MISSING, missing.getMessage());
    }

    @Test
    void noExposureAtAllSaysNone(SvcStub stub) {
        AssertionFailedError missing = assertThrows(AssertionFailedError.class,
                () -> stub.assertExposure("checkout-v2", "user-1"));
        assertEquals("no exposure of checkout-v2 for user-1; exposures recorded:\n  (none)", missing.getMessage());
    }

    @Test
    void anUnexpectedRequestIsListed(SvcStub stub) {
        Http.capture(stub.url(), WaitsTest.EXPOSURE);
        AssertionFailedError unexpected = assertThrows(AssertionFailedError.class, () -> stub.assertNoRequest(Route.CAPTURE));
        assertTrue(unexpected.getMessage().matches("expected no request to route 'capture', got 1:\n  #\\d+ POST /v1/capture -> 200"),
                unexpected.getMessage());
    }

    @Test
    void aKeyTheServiceWouldRefuseIsAWarning(SvcStub stub) {
        // a browser key (phc_) on the server's evaluate route: served, with a warning
        Http.send(stub.url(), "/v1/flags/evaluate", "Bearer phc_browser_key", Http.EVALUATE_BODY, Map.of(), Http.HANG_GUARD);
        AssertionFailedError warned = assertThrows(AssertionFailedError.class, stub::assertNoWarnings);
        assertTrue(warned.getMessage().matches("1 request used a key where the service refuses it:\n  #\\d+ POST /v1/flags/evaluate: .+"),
                warned.getMessage());
    }

    @Test
    void aRetryBeforeRetryAfterIsNamed(SvcStub stub) {
        // an hour: the retry at once comes before it however slow the machine
        stub.arm(Fault.of(FaultMode.HTTP_429).retryAfterSeconds(3600).applyTo(Selector.EVALUATE).times(1));
        Http.evaluate(stub.url(), "checkout-v2");
        Http.evaluate(stub.url(), "checkout-v2"); // at once, not an hour later
        AssertionFailedError early = assertThrows(AssertionFailedError.class,
                () -> stub.assertNoRetryBeforeRetryAfter(Route.EVALUATE));
        assertTrue(early.getMessage().matches(
                "retried 'evaluate' before Retry-After allowed:\n  #\\d+ came \\d+ ms after #\\d+ was answered 429 with Retry-After: 3600"),
                early.getMessage());
        assertEquals(early.getMessage(), assertThrows(AssertionFailedError.class, stub::assertNoRetryBeforeRetryAfter).getMessage());
        List<Double> gaps = stub.gapsMs(Route.EVALUATE);
        assertEquals(1, gaps.size());
        assertTrue(gaps.get(0) >= 0 && gaps.get(0) < 3_600_000, gaps::toString);
    }

    @Test
    void aRequestInFull(SvcStub stub) {
        Http.evaluate(stub.url(), "checkout-v2");
        RecordedRequest listed = stub.requests(Route.EVALUATE).get(0);
        assertEquals(listed, stub.request(listed.seq()));
        assertEquals("{\"targetingKey\":\"user-1\",\"flagKeys\":[\"checkout-v2\"]}", listed.text());
        assertEquals(200, listed.answer().orElseThrow().status());
        assertTrue(listed.answer().orElseThrow().body().orElseThrow().text().orElseThrow().contains("\"decisions\""));
        assertTrue(listed.curl().contains("curl"), listed.curl());
        assertEquals("Bearer project-api-key_[redacted]", listed.headers().get("authorization"));
        assertTrue(stub.snapshot().contains("/v1/flags/evaluate"));
        Recorded recorded = stub.recorded();
        assertEquals(0, recorded.events().size() + recorded.svcEvents().size() + recorded.targets().size(),
                "an evaluate is not kept");
    }
}
