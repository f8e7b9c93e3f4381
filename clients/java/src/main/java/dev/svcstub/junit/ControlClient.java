package dev.svcstub.junit;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * svc-stub's test-control plane ({@code /_test/*}) over {@code java.net.http}, in one namespace
 * when it has one. Each call returns what the stub answered, read, or throws a
 * {@link SvcStubException} whose message is one line: the stub refused ({@link StubRefusedException}),
 * or nothing (or something else) answers ({@link StubUnreachableException}).
 */
final class ControlClient {
    /**
     * A guard against a call that never ends, besides the time a long-poll was asked to wait; not
     * a budget: a busy machine's stub may take seconds to answer, and a call waits for it.
     */
    static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);
    /** The longest wait the stub takes in one long-poll. */
    static final Duration MAX_WAIT = Duration.ofSeconds(60);

    /**
     * One client for every call of the run: HTTP/1.1 (the stub speaks nothing else, and an h2c
     * upgrade offer is one more thing to go wrong), no redirects, connections kept.
     */
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(CALL_TIMEOUT) // a guard too: a refused connection fails at once
            .build();

    private final String baseUrl;
    private final String namespace; // null: the default one
    private final String controlToken; // null: none

    ControlClient(String stubUrl, String controlToken) {
        this(stubUrl.replaceAll("/+$", ""), null, controlToken);
    }

    private ControlClient(String baseUrl, String namespace, String controlToken) {
        this.baseUrl = baseUrl;
        this.namespace = namespace;
        this.controlToken = controlToken == null || controlToken.isEmpty() ? null : controlToken;
    }

    /** The stub itself. */
    String baseUrl() {
        return baseUrl;
    }

    /** The namespace every call is in; null for the default one. */
    String namespace() {
        return namespace;
    }

    /** The base URL to give a client library: the stub's, then {@code /ns/<namespace>}. */
    String url() {
        return namespace == null ? baseUrl : baseUrl + "/ns/" + namespace;
    }

    // -- the stub itself -------------------------------------------------------------------------

    /** Whether its {@code /health} says ok. */
    boolean healthy() {
        return Members.of(call(Call.get("/health").unscoped())).bool("ok");
    }

    /** The stub's version: its OpenAPI document's. */
    String version() {
        return Members.of(call(Call.get("/_test/openapi.json").unscoped())).object("info").string("version");
    }

    /**
     * Creates a namespace for the test {@code test} identifies ({@code CheckoutTest#retries}), with
     * {@code keys} bound to it; a client in it. The stub makes its name (readable, distinct).
     */
    ControlClient createNamespace(String test, List<String> keys) {
        Members created = Members.of(call(Call.post("/_test/namespaces", Map.of("test", test, "keys", keys)).unscoped()));
        return new ControlClient(baseUrl, created.string("name"), controlToken);
    }

    /** An address where nothing listens: every connection to it is refused at once. */
    String offlineUrl() {
        return Members.of(call(Call.get("/_test/offline").unscoped())).string("url");
    }

    /** Deletes this client's namespace and everything in it. */
    void deleteNamespace() {
        Objects.requireNonNull(namespace, "deleteNamespace: this client is in the default namespace");
        call(Call.delete("/_test/namespaces/" + namespace).unscoped());
    }

    /** The names of every namespace the stub holds. */
    List<String> namespaces() {
        return Members.of(call(Call.get("/_test/namespaces").unscoped())).objects("namespaces").stream()
                .map(each -> each.string("name")).toList();
    }

    // -- the namespace ---------------------------------------------------------------------------

    Members arm(Map<String, Object> document) {
        return Members.of(call(Call.post("/_test/fault", document))).object("fault");
    }

    List<Members> armed() {
        return Members.of(call(Call.get("/_test/fault"))).objects("armed");
    }

    void disarm(int id) {
        call(Call.delete("/_test/fault/" + id));
    }

    void clearFaults() {
        call(Call.delete("/_test/fault"));
    }

    /** {@code GET /_test/events}, waiting (long-poll) as {@code query} asks. */
    Members events(Map<String, String> query, Duration wait) {
        return Members.of(call(Call.get("/_test/events").query(query).waiting(wait)));
    }

    /** {@code GET /_test/requests}, each in full (its body, its answer), waiting (long-poll) as {@code query} asks. */
    List<Members> requests(Map<String, String> query, Duration wait) {
        Map<String, String> inFull = new LinkedHashMap<>(query);
        inFull.put("bodies", "true");
        return Members.of(call(Call.get("/_test/requests").query(inFull).waiting(wait))).objects("requests");
    }

    Members request(int seq) {
        return Members.of(call(Call.get("/_test/requests/" + seq)));
    }

    /** A check the stub computes from the namespace's journal: {@code {"check", "passed", "message"}}. */
    Members check(String check, Map<String, String> query, Duration wait) {
        return Members.of(call(Call.get("/_test/checks/" + check).query(query).waiting(wait)));
    }

    /** {@code GET /_test/coverage}: the namespace's ({@code scope} namespace) or the whole run's ({@code run}). */
    Members coverage(String scope) {
        return Members.of(call(Call.get("/_test/coverage").query(Map.of("scope", scope))));
    }

    /** The namespace's inspector page, as one HTML file. */
    String snapshot() {
        return (String) call(Call.get("/_test/ui/snapshot").text());
    }

    /** Serves a fixture document (a map) or a file's text (YAML or JSON); merge: over the served ones. */
    List<String> fixtures(Object documentOrText, boolean merge) {
        return Members.of(call(document("/_test/fixtures", documentOrText, merge))).strings("flags");
    }

    Map<String, Object> seedManagement(Object documentOrText, boolean merge) {
        return Members.of(call(document("/_test/management", documentOrText, merge))).asMap();
    }

    Map<String, Object> management() {
        return Members.of(call(Call.get("/_test/management"))).asMap();
    }

    void vendorFlags(Map<String, ?> body) {
        call(Call.post("/_test/flags", body));
    }

    void rateLimit(Map<String, Object> body) {
        call(Call.post("/_test/rate-limit", body));
    }

    private static Call document(String path, Object documentOrText, boolean merge) {
        Call call = documentOrText instanceof FileText
                ? Call.postText(path, ((FileText) documentOrText).text, "application/yaml") // JSON is YAML too
                : Call.post(path, documentOrText);
        return merge ? call.query(Map.of("merge", "true")) : call;
    }

    /** A fixture or seed file's text, sent as it is: the stub reads YAML and JSON, and opens no path it is sent. */
    static final class FileText {
        final String text;

        FileText(String text) {
            this.text = text;
        }
    }

    // -- over HTTP -------------------------------------------------------------------------------

    /** One control call: what to send, and how to read the answer. */
    private record Call(String method, String path, String body, String contentType, Map<String, String> query,
            boolean toTheStub, boolean page, Duration waitFor) {
        static Call get(String path) {
            return new Call("GET", path, null, null, Map.of(), false, false, Duration.ZERO);
        }

        static Call delete(String path) {
            return new Call("DELETE", path, null, null, Map.of(), false, false, Duration.ZERO);
        }

        static Call post(String path, Object document) {
            return postText(path, Json.write(document), "application/json");
        }

        static Call postText(String path, String body, String contentType) {
            return new Call("POST", path, body, contentType, Map.of(), false, false, Duration.ZERO);
        }

        Call query(Map<String, String> parameters) {
            return new Call(method, path, body, contentType, parameters, toTheStub, page, waitFor);
        }

        /** To the stub itself (the namespace registry), not into the namespace. */
        Call unscoped() {
            return new Call(method, path, body, contentType, query, true, page, waitFor);
        }

        /** The answer is a page, not JSON. */
        Call text() {
            return new Call(method, path, body, contentType, query, toTheStub, true, waitFor);
        }

        Call waiting(Duration wait) {
            return new Call(method, path, body, contentType, query, toTheStub, page, wait);
        }

        String named() {
            return method + " " + path;
        }
    }

    private Object call(Call call) {
        String target = (call.toTheStub() ? baseUrl : url()) + call.path() + queryString(call.query());
        HttpRequest.Builder request;
        try {
            request = HttpRequest.newBuilder(URI.create(target)).timeout(CALL_TIMEOUT.plus(call.waitFor()));
        } catch (IllegalArgumentException notAUrl) {
            throw new StubUnreachableException("svc-stub: '" + baseUrl + "' is not a URL (" + notAUrl.getMessage()
                    + "); give the stub's, like http://127.0.0.1:3901", "not a URL");
        }
        if (call.body() != null) {
            request.method(call.method(), HttpRequest.BodyPublishers.ofString(call.body(), StandardCharsets.UTF_8))
                    .header("Content-Type", call.contentType());
        } else {
            request.method(call.method(), HttpRequest.BodyPublishers.noBody());
        }
        if (controlToken != null) {
            request.header("Authorization", "Bearer " + controlToken);
        }
        HttpResponse<String> answer;
        try {
            answer = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException failed) {
            throw unreachable(reasonOf(failed));
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new SvcStubException("svc-stub: " + call.named() + ": interrupted", interrupted);
        }
        if (answer.statusCode() >= 300) {
            throw refused(call, answer);
        }
        if (call.page()) {
            return answer.body();
        }
        try {
            return Json.parse(answer.body());
        } catch (Json.JsonException notJson) {
            throw unreachable(call.path() + " answers something other than svc-stub's JSON");
        }
    }

    private StubUnreachableException unreachable(String reason) {
        return new StubUnreachableException("svc-stub at " + baseUrl + " does not answer (" + reason
                + "); start one there (svc-stub --port PORT) or correct the URL", reason);
    }

    private static StubRefusedException refused(Call call, HttpResponse<String> answer) {
        String code = "ERROR";
        String detail = answer.body().strip();
        try {
            Members error = Members.of(Json.parse(answer.body()));
            if (error.raw("error") instanceof String) {
                code = error.string("error");
                detail = error.optionalString("message").orElse("");
            }
        } catch (IllegalArgumentException notTheStubsError) {
            // not the stub's error document: its text says what it is
        }
        if (detail.length() > 200) {
            detail = detail.substring(0, 200) + "...";
        }
        return new StubRefusedException(call.named(), answer.statusCode(), code, detail.replace('\n', ' '));
    }

    static String reasonOf(IOException failed) {
        if (failed instanceof HttpTimeoutException) {
            return "no answer in time";
        }
        for (Throwable cause = failed; cause != null; cause = cause.getCause()) {
            if (cause instanceof ConnectException) {
                return "connection refused";
            }
        }
        String message = failed.getMessage();
        return message == null || message.isEmpty() ? failed.getClass().getSimpleName() : message;
    }

    private static String queryString(Map<String, String> query) {
        if (query.isEmpty()) {
            return "";
        }
        return query.entrySet().stream()
                .map(entry -> encode(entry.getKey()) + "=" + encode(entry.getValue()))
                .collect(Collectors.joining("&", "?", ""));
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }
}
