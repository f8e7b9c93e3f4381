package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Every fault mode, armed and sent in headers, reaches a real java.net.http client; and the journal names it. */
@ExtendWith(SvcStubExtension.class)
class FaultsTest {
    /**
     * How long the client waits for a hung answer, once its request is written: it never comes,
     * so the length is no budget ({@link Http#evaluateGivingUp}).
     */
    private static final Duration HANG_PATIENCE = Duration.ofSeconds(1);
    /**
     * How long it waits for any other answer: a guard against a hang, not a speed budget (a delayed
     * answer on a busy 2-core machine can take well over a second).
     */
    private static final Duration ANSWER_TIMEOUT = Http.HANG_GUARD;

    /** One evaluate with these headers, as a client sees it: one that gives up on a hung answer. */
    private static Http.Seen evaluate(SvcStub stub, FaultMode mode, Map<String, String> headers) {
        return mode == FaultMode.HANG ? Http.evaluateGivingUp(stub.url(), headers, HANG_PATIENCE)
                : Http.evaluate(stub.url(), headers, ANSWER_TIMEOUT);
    }

    /** A mode's parameters, and what a client sees of it. */
    private static final class Case {
        final Fault fault;
        final Predicate<Http.Seen> seen;

        Case(Fault fault, Predicate<Http.Seen> seen) {
            this.fault = fault;
            this.seen = seen;
        }
    }

    private static final Map<FaultMode, Case> CASES = new EnumMap<>(FaultMode.class);

    static {
        Duration shortDelay = Duration.ofMillis(300);
        CASES.put(FaultMode.DELAY, new Case(Fault.of(FaultMode.DELAY).delay(shortDelay),
                s -> s.status == 200 && s.took.toMillis() >= 280));
        CASES.put(FaultMode.HTTP_401, new Case(Fault.of(FaultMode.HTTP_401), s -> s.status == 401));
        CASES.put(FaultMode.HTTP_429, new Case(Fault.of(FaultMode.HTTP_429).retryAfterSeconds(3),
                s -> s.status == 429 && s.header("Retry-After").equals(java.util.Optional.of("3"))));
        CASES.put(FaultMode.HTTP_500, new Case(Fault.of(FaultMode.HTTP_500), s -> s.status == 500));
        CASES.put(FaultMode.INVALID_JSON, new Case(Fault.of(FaultMode.INVALID_JSON),
                s -> s.status == 200 && s.decoded().isEmpty()));
        CASES.put(FaultMode.TRUNCATED, new Case(Fault.of(FaultMode.TRUNCATED),
                s -> s.error != null || s.decoded().isEmpty()));
        CASES.put(FaultMode.QUOTA_LIMITED, new Case(Fault.of(FaultMode.QUOTA_LIMITED),
                s -> s.status == 200 && s.decoded().map(d -> Boolean.TRUE.equals(d.get("quotaLimited"))).orElse(false)));
        CASES.put(FaultMode.STATUS, new Case(Fault.of(FaultMode.STATUS).status(503).retryAfterSeconds(2),
                s -> s.status == 503 && s.header("Retry-After").equals(java.util.Optional.of("2"))));
        CASES.put(FaultMode.RESET, new Case(Fault.of(FaultMode.RESET), s -> s.error != null));
        CASES.put(FaultMode.EMPTY_RESPONSE, new Case(Fault.of(FaultMode.EMPTY_RESPONSE), s -> s.error != null));
        CASES.put(FaultMode.SLOW_BODY, new Case(Fault.of(FaultMode.SLOW_BODY).delay(shortDelay),
                s -> s.status == 200 && s.decoded().isPresent() && s.took.toMillis() >= 280));
        CASES.put(FaultMode.HANG, new Case(Fault.of(FaultMode.HANG), s -> s.error instanceof SocketTimeoutException));
    }

    @Test
    void everyModeHasACase() {
        assertEquals(List.of(FaultMode.values()), new ArrayList<>(CASES.keySet()));
    }

    @ParameterizedTest
    @EnumSource(FaultMode.class)
    void anArmedFaultReachesTheClientOnceAndTheJournalNamesIt(FaultMode mode, SvcStub stub) {
        ArmedFault armed = stub.arm(CASES.get(mode).fault.applyTo(Selector.EVALUATE).times(1));
        assertEquals(mode, armed.mode().orElseThrow());
        assertEquals(List.of("evaluate"), armed.applyTo());

        Http.Seen first = evaluate(stub, mode, Map.of());
        assertTrue(CASES.get(mode).seen.test(first), () -> mode + ": the client saw " + first);
        Http.Seen second = Http.evaluate(stub.url(), Map.of(), ANSWER_TIMEOUT);
        assertEquals(200, second.status, () -> "times(1) faults one request only; the next: " + second);

        // listed as each ends: a hung request once its client has given up on it
        List<FaultRecord> faults = stub.waitForRequests(2, Route.EVALUATE, ANSWER_TIMEOUT).stream()
                .flatMap(request -> request.fault().stream()).collect(Collectors.toList());
        assertEquals(1, faults.size(), () -> "the journal's faults: " + faults);
        assertTrue(faults.get(0).is(mode), faults::toString);
        assertEquals("armed", faults.get(0).source());
        assertEquals(armed.id(), faults.get(0).armedId().orElseThrow());
        assertEquals(List.of(), stub.armed(), "ran out after its one request");
        armed.close(); // quiet: it ran out by itself
    }

    @ParameterizedTest
    @EnumSource(FaultMode.class)
    void faultHeadersFaultOneRequest(FaultMode mode, SvcStub stub) {
        Map<String, String> headers = stub.faultHeaders(CASES.get(mode).fault);
        assertEquals(mode.wireName(), headers.get(Headers.FAULT));

        Http.Seen seen = evaluate(stub, mode, headers);
        assertTrue(CASES.get(mode).seen.test(seen), () -> mode + ": the client saw " + seen);

        FaultRecord fault = stub.waitForRequests(1, Route.EVALUATE, ANSWER_TIMEOUT).get(0).fault().orElseThrow();
        assertTrue(fault.is(mode), fault::toString);
        assertEquals("header", fault.source());
    }

    @Test
    void tryWithResourcesDisarmsItsFaultAloneAfterTheBlock(SvcStub stub) {
        ArmedFault kept = stub.arm(Fault.of(FaultMode.HTTP_429).applyTo(Selector.CAPTURE));
        try (ArmedFault outage = stub.arm(Fault.of(FaultMode.HTTP_500).applyTo(Selector.EVALUATE))) {
            assertEquals(500, Http.evaluate(stub.url(), "checkout-v2").status);
            assertEquals(List.of(kept, outage), stub.armed());
        }
        assertEquals(200, Http.evaluate(stub.url(), "checkout-v2").status);
        assertEquals(List.of(kept), stub.armed());
        stub.clearFaults();
        assertEquals(List.of(), stub.armed());
    }

    @Test
    void aSequenceIsConsumedOneRequestAtATime(SvcStub stub) {
        stub.arm(Fault.sequence(Step.of(FaultMode.HTTP_500), Step.of(FaultMode.STATUS).status(503), Step.none(),
                Step.of(FaultMode.HTTP_429)).applyTo(Selector.EVALUATE));
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            statuses.add(Http.evaluate(stub.url(), "checkout-v2").status);
        }
        assertEquals(List.of(500, 503, 200, 429, 200), statuses);
        assertEquals(List.of(0, 1), stub.requests(Route.EVALUATE).stream()
                .flatMap(r -> r.fault().stream()).filter(f -> !f.mode().equals("none")).limit(2)
                .map(f -> f.step().orElseThrow()).collect(Collectors.toList()));
    }

    @Test
    void aFaultWithABodyAndAProbability(SvcStub stub) {
        stub.arm(Fault.of(FaultMode.STATUS).status(418 + 100).body(Map.of("error", "teapot")).probability(1.0, 7).applyTo(Selector.EVALUATE));
        Http.Seen seen = Http.evaluate(stub.url(), "checkout-v2");
        assertEquals(518, seen.status);
        assertEquals(Map.of("error", "teapot"), seen.decoded().orElseThrow());
    }

    @Test
    void aMistakeIsOneLineBeforeAnythingIsSent(SvcStub stub) {
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> FaultMode.fromWireName("500s"));
        assertEquals("unknown fault mode '500s'; the modes are delay, 401, 429, 500, invalid_json, truncated,"
                + " quota_limited, status, reset, empty_response, slow_body, hang", unknown.getMessage());
        assertEquals("times: 0 requests; give 1 or more",
                assertThrows(IllegalArgumentException.class, () -> Fault.of(FaultMode.HTTP_500).times(0)).getMessage());
        assertEquals("times: a sequence runs out by itself, after its steps",
                assertThrows(IllegalArgumentException.class, () -> Fault.sequence(Step.none()).times(1)).getMessage());
        assertEquals("status: 700 is not a status the stub answers with (200 to 599)",
                assertThrows(IllegalArgumentException.class, () -> Fault.of(FaultMode.STATUS).status(700)).getMessage());
        assertEquals("faultHeaders: a sequence spans requests; headers fault one (arm it instead)",
                assertThrows(IllegalArgumentException.class,
                        () -> stub.faultHeaders(Fault.sequence(Step.of(FaultMode.HTTP_500)))).getMessage());
        assertEquals(List.of(), stub.requests(), "nothing was sent");

        StubRefusedException refused = assertThrows(StubRefusedException.class, () -> stub.arm(Fault.of(FaultMode.STATUS)));
        assertEquals(400, refused.status());
        assertEquals("INVALID_BODY", refused.code());
        assertTrue(refused.getMessage().startsWith("svc-stub: POST /_test/fault: 400 INVALID_BODY: "), refused.getMessage());
        assertEquals(1, refused.getMessage().lines().count());
    }
}
