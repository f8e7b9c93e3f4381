package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Waits use the stub's long-poll: they return as soon as what they wait for arrives, and say what did when it does not. */
@ExtendWith(SvcStubExtension.class)
class WaitsTest {
    static final Map<String, Object> EXPOSURE = exposure("user-1");

    /** EXPOSURE as a failure message shows it: in the order the client sent its members. */
    static final String EXPOSURE_SHOWN = "[\n"
            + "  {\n"
            + "    \"type\": \"exposure\",\n"
            + "    \"targetingKey\": \"user-1\",\n"
            + "    \"flagKey\": \"checkout-v2\",\n"
            + "    \"variant\": \"treatment-b\",\n"
            + "    \"value\": \"treatment-b\"\n"
            + "  }\n"
            + "]";

    static Map<String, Object> exposure(String targetingKey) {
        Map<String, Object> exposure = new LinkedHashMap<>();
        exposure.put("type", "exposure");
        exposure.put("targetingKey", targetingKey);
        exposure.put("flagKey", "checkout-v2");
        exposure.put("variant", "treatment-b");
        exposure.put("value", "treatment-b");
        return Collections.unmodifiableMap(exposure);
    }

    @Test
    void aWaitReturnsAsSoonAsALateCaptureArrives(SvcStub stub) {
        CompletableFuture<Void> late = CompletableFuture.runAsync(() -> Http.capture(stub.url(), EXPOSURE),
                CompletableFuture.delayedExecutor(300, TimeUnit.MILLISECONDS));
        long started = System.nanoTime();
        List<SvcEvent> events = stub.waitForSvcEvents(1, Http.HANG_GUARD);
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        late.join();
        // it waited for the capture; had it run out, it would have thrown with what arrived
        assertTrue(took.toMillis() >= 250, () -> "the wait took " + took + "; the capture came after 300ms");
        assertEquals(List.of(EXPOSURE), events.stream().map(SvcEvent::fields).toList());
        SvcEvent exposure = events.get(0);
        assertTrue(exposure.isExposure());
        assertEquals(Optional.of("checkout-v2"), exposure.flagKey());
        assertEquals(Optional.of("user-1"), exposure.targetingKey());
        assertEquals(Optional.of("treatment-b"), exposure.variant());
        assertEquals("treatment-b", exposure.value());
    }

    @Test
    void aWaitThatRunsOutSaysWhatDidArrive(SvcStub stub) {
        Http.capture(stub.url(), EXPOSURE);
        long started = System.nanoTime();
        WaitTimeoutError timeout = assertThrows(WaitTimeoutError.class, () -> stub.waitForSvcEvents(2, Duration.ofMillis(200)));
        assertTrue(Duration.ofNanos(System.nanoTime() - started).toMillis() >= 190);
        assertEquals("waited 200ms for 2 svcEvents, got 1:\n" + EXPOSURE_SHOWN, timeout.getMessage());
        assertEquals(List.of(SvcEvent.from(EXPOSURE)), timeout.arrived());
    }

    @Test
    void waitForEventsAndTargetsWaitOnTheirOwnLists(SvcStub stub) {
        Http.send(stub.url(), "/batch", "Bearer phc_java", Json.write(Map.of("api_key", "phc_java",
                "batch", List.of(Map.of("event", "$pageview", "distinct_id", "user-1")))), Map.of(), Http.HANG_GUARD);
        Http.send(stub.url(), "/v1/targets/register", Http.SERVER_KEY, Json.write(Map.of("targetingKey", "user-1", "kind", "user",
                "properties", Map.of("plan", "pro"))), Map.of(), Http.HANG_GUARD);
        Http.capture(stub.url(), Map.of("type", "signal", "targetingKey", "user-1", "name", "checkout-completed"));
        VendorEvent pageview = stub.waitForEvents(1).get(0);
        assertEquals(Optional.of("$pageview"), pageview.event());
        assertEquals(Optional.of("user-1"), pageview.distinctId());
        RegisteredTarget target = stub.waitForTargets(1).get(0);
        assertEquals(Optional.of("user-1"), target.targetingKey());
        assertEquals(Optional.of("user"), target.kind());
        assertEquals(Map.of("plan", "pro"), target.properties());
        Recorded recorded = stub.recorded();
        assertEquals(List.of(), recorded.exposures());
        assertEquals(Optional.of("checkout-completed"), recorded.signals().get(0).name());
        assertEquals(new Recorded.Dropped(0, 0, 0), recorded.dropped());
        WaitTimeoutError none = assertThrows(WaitTimeoutError.class, () -> stub.waitForTargets(2, Duration.ofMillis(100)));
        assertTrue(none.getMessage().startsWith("waited 100ms for 2 targets, got 1:\n["), none.getMessage());
    }

    @Test
    void waitForRequestsCountsOneRoute(SvcStub stub) {
        Http.capture(stub.url(), EXPOSURE);
        Http.evaluate(stub.url(), "checkout-v2");
        List<RecordedRequest> evaluations = stub.waitForRequests(1, Route.EVALUATE);
        assertEquals(1, evaluations.size());
        assertEquals("/v1/flags/evaluate", evaluations.get(0).path());
        assertEquals(200, evaluations.get(0).status().getAsInt());
        assertEquals(2, stub.waitForRequests(2, null, Http.HANG_GUARD).size());

        WaitTimeoutError timeout = assertThrows(WaitTimeoutError.class,
                () -> stub.waitForRequests(2, Route.EVALUATE, Duration.ofMillis(200)));
        assertTrue(timeout.getMessage().matches("waited 200ms for 2 requests to evaluate, got 1:\n  #\\d+ POST /v1/flags/evaluate -> 200"),
                timeout.getMessage());
    }

    @Test
    void aWaitLongerThanTheStubsLongestPollAsksAgain(SvcStub stub) {
        // the stub holds one poll up to 60 s; a longer wait is several polls, and returns at once when satisfied
        Http.capture(stub.url(), EXPOSURE);
        assertEquals(1, stub.waitForSvcEvents(1, Duration.ofMinutes(3)).size());
    }

    @Test
    void durationsReadAsGoWritesThem() {
        assertEquals("200ms", Durations.show(Duration.ofMillis(200)));
        assertEquals("5s", Durations.show(Duration.ofSeconds(5)));
        assertEquals("1.5s", Durations.show(Duration.ofMillis(1500)));
        assertEquals("0ms", Durations.show(Duration.ZERO));
    }
}
