package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.opentest4j.AssertionFailedError;

/** The journal read as a test reads it: a body in one call, requests in the order they arrived, and an address where nothing listens. */
@ExtendWith(SvcStubExtension.class)
class RequestsTest {
    /** A guard against a hang, not a budget: what the tests below wait for comes at once on any machine. */
    private static final Duration HANG_GUARD = Http.HANG_GUARD;

    @Test
    void aRecordedBodyReadsAsJsonInOneCall(SvcStub stub) {
        Http.capture(stub.url(), WaitsTest.EXPOSURE);

        RecordedRequest capture = stub.requests(Route.CAPTURE).get(0);
        assertEquals(Map.of("events", List.of(WaitsTest.EXPOSURE)), capture.json());
        assertEquals("checkout-v2", ((Map<?, ?>) ((List<?>) capture.json().get("events")).get(0)).get("flagKey"));
        assertEquals(Json.write(Map.of("events", List.of(WaitsTest.EXPOSURE))), capture.text());
    }

    @Test
    void aBodyThatIsNoneOrNotJsonSaysSo(SvcStub stub) {
        Http.get(stub.url(), "/v1/projects", "Bearer svc_org_none");
        Http.send(stub.url(), "/v1/capture", Http.SERVER_KEY, "{\"events\": [", Map.of(), HANG_GUARD);

        List<RecordedRequest> requests = stub.requests();
        RecordedRequest get = requests.get(0);
        assertEquals("", get.text());
        assertEquals(get + ": it sent no body to read as JSON", assertThrows(AssertionFailedError.class, get::json).getMessage());
        RecordedRequest cut = requests.get(1);
        assertEquals("{\"events\": [", cut.text());
        String notJson = assertThrows(AssertionFailedError.class, cut::json).getMessage();
        assertTrue(notJson.startsWith(cut + ": its body is not a JSON object (JSON: "), notJson);
        assertTrue(notJson.endsWith("): {\"events\": ["), notJson);
    }

    @Test
    void requestsAreListedInTheOrderTheyArrivedEvenWhenTheFirstEndsLast(SvcStub stub) throws Exception {
        stub.arm(Fault.of(FaultMode.DELAY).delay(HANG_GUARD).applyTo(Selector.EVALUATE).times(1));
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        CompletableFuture<HttpResponse<Void>> delayed = client.sendAsync(HttpRequest.newBuilder(URI.create(stub.url() + "/v1/flags/evaluate"))
                .header("Authorization", Http.SERVER_KEY).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(Http.EVALUATE_BODY)).timeout(HANG_GUARD).build(),
                HttpResponse.BodyHandlers.discarding());
        awaitNothingArmed(stub); // the delay fired: the delayed request is at the stub, held

        assertEquals(200, Http.evaluate(stub.url(), "checkout-v2").status);
        List<RecordedRequest> meanwhile = stub.waitForRequests(1, Route.EVALUATE);
        assertEquals(1, meanwhile.size(), () -> "a request still held is not listed yet: " + meanwhile);
        delayed.cancel(true); // its client gives up: the stub ends it

        List<RecordedRequest> both = stub.waitForRequests(2, Route.EVALUATE, HANG_GUARD);
        RecordedRequest first = both.get(0);
        RecordedRequest second = both.get(1);
        assertTrue(first.seq() < second.seq(), both::toString);
        assertTrue(first.fault().orElseThrow().is(FaultMode.DELAY), first::toString);
        assertTrue(first.status().isEmpty(), () -> first + ": no answer, its client gave up while it was held");
        assertEquals(meanwhile.get(0), second);
        assertTrue(first.arrivedMs() + first.durationMs() > second.arrivedMs() + second.durationMs(),
                () -> "the delayed request ended last: " + both.stream().map(r -> r + " at " + r.arrivedMs() + " + " + r.durationMs()).toList());
    }

    /** Waits until every armed fault has run out (polls the stub: no wait on the journal says when a request arrives). */
    private static void awaitNothingArmed(SvcStub stub) throws InterruptedException {
        Instant guard = Instant.now().plus(HANG_GUARD);
        while (!stub.armed().isEmpty()) {
            assertTrue(Instant.now().isBefore(guard), "the delayed request never reached the stub");
            Thread.sleep(10);
        }
    }

    @Test
    void theOfflineAddressRefusesARealClient(SvcStub stub) {
        String offline = stub.offlineUrl();
        assertTrue(offline.matches("http://127\\.0\\.0\\.1:\\d+"), offline);

        HttpRequest evaluate = HttpRequest.newBuilder(URI.create(offline + "/v1/flags/evaluate")).timeout(HANG_GUARD)
                .POST(HttpRequest.BodyPublishers.ofString(Http.EVALUATE_BODY)).build();
        for (int attempt = 0; attempt < 2; attempt++) { // refused every time: held, never listened on
            assertThrows(ConnectException.class, () -> HttpClient.newHttpClient().send(evaluate, HttpResponse.BodyHandlers.discarding()));
        }
        assertEquals(offline, stub.offlineUrl(), "one address for the stub's life");
    }
}
