package dev.svcstub.junit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.opentest4j.AssertionFailedError;

/**
 * svc-stub for one test: a namespace of the test's own on the run's stub. Give the client under
 * test {@link #url()}; what the test arms, serves and records stays in the namespace, which is
 * deleted when the test ends. {@link SvcStubExtension} injects it:
 *
 * <pre>{@code
 * @ExtendWith(SvcStubExtension.class)
 * class CheckoutTest {
 *     @Test
 *     void fallsBackWhileEvaluateFails(SvcStub stub) {
 *         Checkout checkout = new Checkout(stub.url());
 *         try (ArmedFault outage = stub.arm(Fault.of(FaultMode.HTTP_500).applyTo(Selector.EVALUATE))) {
 *             assertEquals("control", checkout.variant("user-1"));
 *         }
 *         stub.assertNoRequest(Route.CAPTURE);
 *     }
 * }
 * }</pre>
 *
 * <p>A control call that goes wrong throws a {@link SvcStubException} (one line); an assertion
 * or a wait that fails throws an {@link AssertionFailedError} whose message lists what was
 * recorded instead. Safe to use from several threads of one test.
 */
public final class SvcStub {
    /** svc-stub's version: the stub's and this library's. A stub older than it is refused. */
    public static final String VERSION = "0.1.0";
    /** How long a wait waits when it is not told. */
    public static final Duration DEFAULT_WAIT = Duration.ofSeconds(5);

    private final ControlClient client;

    SvcStub(ControlClient client) {
        this.client = client;
    }

    /** The base URL to give the client under test: the stub's, then {@code /ns/<namespace>}. */
    public String url() {
        return client.url();
    }

    /** The stub itself, for a client that cannot take a base path (with {@link Headers#NAMESPACE} or bound keys). */
    public String baseUrl() {
        return client.baseUrl();
    }

    /** The test's namespace: named by the stub after the test ({@code CheckoutTest-fallsBack-1a2b3c4d}). */
    public String namespace() {
        return client.namespace();
    }

    /**
     * An address where nothing listens ({@code http://127.0.0.1:PORT}): every connection to it is
     * refused at once, for a test of a client's offline behaviour. The stub holds the port for
     * as long as it runs, so nothing else takes it.
     */
    public String offlineUrl() {
        return client.offlineUrl();
    }

    // -- faults ----------------------------------------------------------------------------------

    /**
     * Arms {@code fault} for the rest of the test (or its {@link Fault#times}); close what it
     * returns (try-with-resources) to disarm it sooner.
     */
    public ArmedFault arm(Fault fault) {
        return ArmedFault.from(client, client.arm(fault.document()));
    }

    /** The faults armed in the namespace now. */
    public List<ArmedFault> armed() {
        return client.armed().stream().map(each -> ArmedFault.from(client, each)).collect(Collectors.toUnmodifiableList());
    }

    /** Disarms every fault of the namespace. */
    public void clearFaults() {
        client.clearFaults();
    }

    /**
     * The headers that fault one request this way, whatever is armed: add them to the client's
     * request. The fault's mode, delay, status and Retry-After are used; a sequence or a body
     * cannot be sent in headers ({@link IllegalArgumentException}), and where it applies is the
     * request itself.
     */
    public Map<String, String> faultHeaders(Fault fault) {
        return fault.headers();
    }

    // -- what the namespace serves ----------------------------------------------------------------

    /** Serves this fixture document ({@code {"flags": {...}}}) instead of the served set; the flag keys served. */
    public List<String> setFixtures(Map<String, ?> document) {
        return client.fixtures(document, false);
    }

    /** Serves this fixture file (YAML or JSON) instead of the served set; the flag keys served. */
    public List<String> setFixtures(Path file) {
        return client.fixtures(read(file, "fixtures"), false);
    }

    /** Serves this document over the served fixtures, key by key; the flag keys served. */
    public List<String> mergeFixtures(Map<String, ?> document) {
        return client.fixtures(document, true);
    }

    /** Serves this file over the served fixtures, key by key; the flag keys served. */
    public List<String> mergeFixtures(Path file) {
        return client.fixtures(read(file, "fixtures"), true);
    }

    /**
     * Seeds the management plane (organisations, keys, sessions, projects) with a fixture file's
     * {@code management:} section; the plane as it is now (no key or token in it).
     */
    public Map<String, Object> seedManagement(Map<String, ?> section) {
        return client.seedManagement(section, false);
    }

    /** Seeds the management plane from a file holding a {@code management:} section (YAML or JSON). */
    public Map<String, Object> seedManagement(Path file) {
        return client.seedManagement(read(file, "management"), false);
    }

    /** The management plane as it is now: every organisation, no key or token. */
    public Map<String, Object> management() {
        return client.management();
    }

    /** Serves this {@code /flags} body verbatim on the vendor routes. */
    public void setVendorFlags(Map<String, ?> body) {
        client.vendorFlags(body);
    }

    /** Limits every key to {@code perSecond} requests a second (0: no limit); over it, 429 with Retry-After. */
    public void setRateLimit(double perSecond) {
        setRateLimit(perSecond, Map.of());
    }

    /** Limits every key to {@code perSecond} requests a second (0: no limit), and some keys to their own. */
    public void setRateLimit(double perSecond, Map<String, Double> perKey) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("perSecond", perSecond > 0 ? perSecond : null);
        body.put("perKey", Map.copyOf(perKey));
        client.rateLimit(body);
    }

    // -- what was sent ----------------------------------------------------------------------------

    /** Everything clients sent to be kept. */
    public Recorded recorded() {
        return Recorded.from(client.events(Map.of(), Duration.ZERO));
    }

    /**
     * The journal: every request to the namespace, in full, in the order they arrived (a request
     * still being answered, held by a {@code DELAY} or {@code HANG}, is listed once it ends).
     */
    public List<RecordedRequest> requests() {
        return requests(Map.of(), Duration.ZERO);
    }

    /** The journal's requests to {@code route} (a resource: to every route of it), in the order they arrived. */
    public List<RecordedRequest> requests(Route route) {
        return requests(Map.of("route", route.wireName()), Duration.ZERO);
    }

    private List<RecordedRequest> requests(Map<String, String> query, Duration wait) {
        return client.requests(query, wait).stream().map(RecordedRequest::from).toList();
    }

    /** One request of the journal, by its {@link RecordedRequest#seq()}. */
    public RecordedRequest request(int seq) {
        return RecordedRequest.from(client.request(seq));
    }

    /** The namespace's inspector page, as one HTML file. */
    public String snapshot() {
        return client.snapshot();
    }

    // -- waits: the stub's long-poll, never a sleep ------------------------------------------------

    /** Waits (up to {@link #DEFAULT_WAIT}) until {@code n} vendor {@code /batch} events are recorded; all of them. */
    public List<VendorEvent> waitForEvents(int n) {
        return waitForEvents(n, DEFAULT_WAIT);
    }

    /** Waits until {@code n} vendor {@code /batch} events are recorded, or fails with what did arrive. */
    public List<VendorEvent> waitForEvents(int n, Duration within) {
        return waitForRecorded("events", "minEvents", n, within, Recorded::events, VendorEvent::fields);
    }

    /** Waits (up to {@link #DEFAULT_WAIT}) until {@code n} {@code /v1/capture} events are recorded; all of them. */
    public List<SvcEvent> waitForSvcEvents(int n) {
        return waitForSvcEvents(n, DEFAULT_WAIT);
    }

    /** Waits until {@code n} {@code /v1/capture} events are recorded, or fails with what did arrive. */
    public List<SvcEvent> waitForSvcEvents(int n, Duration within) {
        return waitForRecorded("svcEvents", "minSvcEvents", n, within, Recorded::svcEvents, SvcEvent::fields);
    }

    /** Waits (up to {@link #DEFAULT_WAIT}) until {@code n} {@code /v1/targets/register} bodies are recorded. */
    public List<RegisteredTarget> waitForTargets(int n) {
        return waitForTargets(n, DEFAULT_WAIT);
    }

    /** Waits until {@code n} {@code /v1/targets/register} bodies are recorded, or fails with what did arrive. */
    public List<RegisteredTarget> waitForTargets(int n, Duration within) {
        return waitForRecorded("targets", "minTargets", n, within, Recorded::targets, RegisteredTarget::fields);
    }

    /** Waits (up to {@link #DEFAULT_WAIT}) until {@code n} requests to {@code route} are in the journal; all of them. */
    public List<RecordedRequest> waitForRequests(int n, Route route) {
        return waitForRequests(n, route, DEFAULT_WAIT);
    }

    /**
     * Waits until {@code n} requests to {@code route} (null: to any route, a browser's preflights
     * not counted) are in the journal, or fails with what did arrive.
     */
    public List<RecordedRequest> waitForRequests(int n, Route route, Duration within) {
        List<RecordedRequest> got = longPoll(within, wait -> {
            Map<String, String> query = new LinkedHashMap<>();
            query.put("min", Integer.toString(n));
            query.put("waitMs", Long.toString(wait.toMillis()));
            if (route != null) {
                query.put("route", route.wireName());
            }
            return requests(query, wait);
        }, requests -> counted(requests, route) >= n);
        if (counted(got, route) < n) {
            String to = route == null ? "any route" : route.wireName();
            throw new WaitTimeoutError("waited " + Durations.show(within) + " for " + n + " requests to " + to
                    + ", got " + counted(got, route) + ":\n" + listed(got), got);
        }
        return got;
    }

    private static long counted(List<RecordedRequest> requests, Route route) {
        return route != null ? requests.size()
                : requests.stream().filter(r -> !r.route().equals(Optional.of(Route.PREFLIGHT.wireName()))).count();
    }

    /** Requests one a line, indented: {@code   #3 POST /v1/capture -> 200}. */
    private static String listed(List<RecordedRequest> requests) {
        return requests.isEmpty() ? "  (none)" : requests.stream().map(r -> "  " + r).collect(Collectors.joining("\n"));
    }

    private <T> List<T> waitForRecorded(String list, String minimum, int n, Duration within, Function<Recorded, List<T>> listOf,
            Function<T, Map<String, Object>> sent) {
        List<T> got = longPoll(within, wait -> {
            Map<String, String> query = new LinkedHashMap<>();
            query.put(minimum, Integer.toString(n));
            query.put("waitMs", Long.toString(wait.toMillis()));
            return listOf.apply(Recorded.from(client.events(query, wait)));
        }, events -> events.size() >= n);
        if (got.size() < n) {
            throw new WaitTimeoutError("waited " + Durations.show(within) + " for " + n + " " + list + ", got "
                    + got.size() + ":\n" + (got.isEmpty() ? "(none)" : Json.pretty(got.stream().map(sent).toList())), got);
        }
        return got;
    }

    /**
     * Polls until {@code done}, each poll asking the stub to hold its answer until it is (the
     * stub's {@code waitMs}, at most its longest wait a call), until {@code within} has passed;
     * the last answer.
     */
    private static <T> T longPoll(Duration within, Function<Duration, T> poll, Predicate<T> done) {
        Instant deadline = Instant.now().plus(Objects.requireNonNull(within, "within"));
        while (true) {
            Duration left = Duration.between(Instant.now(), deadline);
            Duration wait = left.isNegative() ? Duration.ZERO
                    : left.compareTo(ControlClient.MAX_WAIT) > 0 ? ControlClient.MAX_WAIT : left;
            T got = poll.apply(wait);
            if (done.test(got) || !Instant.now().isBefore(deadline)) {
                return got;
            }
        }
    }

    // -- assertions: verdicts the stub computes from the journal, in its words ----------------------

    /** Asserts an exposure of {@code flagKey} for {@code targetingKey} (any variant) was captured; the failure lists the ones that were. */
    public void assertExposure(String flagKey, String targetingKey) {
        assertExposure(flagKey, targetingKey, null, Duration.ZERO);
    }

    /** Asserts an exposure of {@code flagKey} for {@code targetingKey} with {@code variant} (null: any) was captured. */
    public void assertExposure(String flagKey, String targetingKey, String variant) {
        assertExposure(flagKey, targetingKey, variant, Duration.ZERO);
    }

    /**
     * Asserts an exposure of {@code flagKey} for {@code targetingKey} with {@code variant} (null:
     * any) is captured {@code within} this long (the stub's long-poll: it returns once it is).
     */
    public void assertExposure(String flagKey, String targetingKey, String variant, Duration within) {
        Map<String, String> query = new LinkedHashMap<>(Map.of("flagKey", flagKey, "targetingKey", targetingKey));
        if (variant != null) {
            query.put("variant", variant);
        }
        verdict(longPoll(within, wait -> {
            query.put("waitMs", Long.toString(wait.toMillis()));
            return client.check("exposure", query, wait);
        }, answer -> answer.bool("passed")));
    }

    /** Asserts no request went to {@code route}; the failure lists the ones that did. */
    public void assertNoRequest(Route route) {
        verdict(client.check("no-request", Map.of("route", route.wireName()), Duration.ZERO));
    }

    /** Asserts no request used a key where the service would refuse it; the failure lists them and why. */
    public void assertNoWarnings() {
        verdict(client.check("no-warnings", Map.of(), Duration.ZERO));
    }

    /** Asserts no request to {@code route} came back sooner after an answer than its Retry-After asked. */
    public void assertNoRetryBeforeRetryAfter(Route route) {
        verdict(client.check("retry-after", Map.of("route", route.wireName()), Duration.ZERO));
    }

    /** Asserts no request to any route came back sooner after an answer than its Retry-After asked (each route on its own). */
    public void assertNoRetryBeforeRetryAfter() {
        verdict(client.check("retry-after", Map.of(), Duration.ZERO));
    }

    /**
     * What the whole run's tests exercised so far ({@code GET /_test/coverage?scope=run}): every
     * namespace's counts together, held against each profile. A gate for CI:
     * {@code stub.coverage().assertCovers("runtime", 80)}.
     *
     * @return the run's coverage report
     */
    public Coverage coverage() {
        return Coverage.of(client.coverage("run"));
    }

    /**
     * What this test's namespace met so far ({@code GET /_test/coverage}; a {@code reset} keeps it).
     *
     * @return the namespace's coverage report
     */
    public Coverage namespaceCoverage() {
        return Coverage.of(client.coverage("namespace"));
    }

    private static void verdict(Members answer) {
        if (!answer.bool("passed")) {
            throw new AssertionFailedError(answer.string("message"));
        }
    }

    /** The time in ms between each request to {@code route}'s arrival and the next one's (for backoff checks). */
    public List<Double> gapsMs(Route route) {
        List<RecordedRequest> requests = requests(route);
        return IntStream.range(1, requests.size())
                .mapToObj(i -> Math.round((requests.get(i).arrivedMs() - requests.get(i - 1).arrivedMs()) * 1000) / 1000.0).toList();
    }

    // -- files ---------------------------------------------------------------------------------------

    private static ControlClient.FileText read(Path file, String what) {
        try {
            return new ControlClient.FileText(Files.readString(file, StandardCharsets.UTF_8));
        } catch (NoSuchFileException missing) {
            throw new SvcStubException("svc-stub: " + what + ": " + file.toAbsolutePath() + ": no such file");
        } catch (IOException failed) {
            throw new SvcStubException("svc-stub: " + what + ": " + file.toAbsolutePath() + ": " + failed.getMessage(), failed);
        }
    }

    @Override
    public String toString() {
        return "SvcStub{" + url() + "}";
    }
}
