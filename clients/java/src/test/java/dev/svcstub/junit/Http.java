package dev.svcstub.junit;

import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Requests as a client library sends them, over java.net.http, and what the client saw. */
final class Http {
    static final String SERVER_KEY = "Bearer project-api-key_java";
    static final String EVALUATE_BODY = "{\"targetingKey\":\"user-1\",\"flagKeys\":[\"checkout-v2\"]}";

    /**
     * How long a request may take: a guard against a hang, never a budget (on a busy machine an
     * answer can take seconds, and a test waits for it).
     */
    static final Duration HANG_GUARD = Duration.ofSeconds(60);

    /** A client of its own per test: a fault that breaks a connection must not reach another test's requests. */
    private static HttpClient client() {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(HANG_GUARD).build();
    }

    private Http() {
    }

    /** What a client saw of one request: an answer, or the exception that took its place, and how long it took. */
    static final class Seen {
        final int status;
        final Map<String, List<String>> headers;
        final String body;
        final IOException error;
        final Duration took;

        Seen(int status, Map<String, List<String>> headers, String body, IOException error, Duration took) {
            this.status = status;
            this.headers = headers;
            this.body = body;
            this.error = error;
            this.took = took;
        }

        Optional<String> header(String name) {
            return headers.entrySet().stream().filter(h -> h.getKey().equalsIgnoreCase(name))
                    .flatMap(h -> h.getValue().stream()).findFirst();
        }

        /** The body as JSON, or empty when it is not JSON. */
        Optional<Map<String, Object>> decoded() {
            if (body == null) {
                return Optional.empty();
            }
            try {
                return Optional.of(Json.parseObject(body));
            } catch (IllegalArgumentException notJson) {
                return Optional.empty();
            }
        }

        @Override
        public String toString() {
            return error != null ? "error " + error + " after " + took.toMillis() + "ms"
                    : status + " " + body + " after " + took.toMillis() + "ms";
        }
    }

    /** POST {base}/v1/flags/evaluate for user-1 and checkout-v2, waiting at most {@code timeout}. */
    static Seen evaluate(String base, Map<String, String> headers, Duration timeout) {
        return send(base, "/v1/flags/evaluate", SERVER_KEY, EVALUATE_BODY, headers, timeout);
    }

    /**
     * POST {base}/v1/flags/evaluate for user-1 and checkout-v2 over a plain socket, for an answer
     * that never comes ({@code HANG}): the whole request is written before the client starts to
     * wait, so however slow the machine the stub gets it, and the client gives up after
     * {@code patience} with a {@link SocketTimeoutException}. (java.net.http's own timeout may
     * fire before it has written anything, on a busy machine: then nothing reached the stub.)
     */
    static Seen evaluateGivingUp(String base, Map<String, String> headers, Duration patience) {
        URI uri = URI.create(base + "/v1/flags/evaluate");
        StringBuilder request = new StringBuilder("POST " + uri.getRawPath() + " HTTP/1.1\r\nHost: " + uri.getHost() + ":"
                + uri.getPort() + "\r\nAuthorization: " + SERVER_KEY + "\r\nContent-Type: application/json\r\nContent-Length: "
                + EVALUATE_BODY.getBytes(StandardCharsets.UTF_8).length + "\r\n");
        headers.forEach((name, value) -> request.append(name).append(": ").append(value).append("\r\n"));
        request.append("\r\n").append(EVALUATE_BODY);
        long started = System.nanoTime();
        try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
            socket.getOutputStream().write(request.toString().getBytes(StandardCharsets.UTF_8));
            socket.getOutputStream().flush();
            socket.setSoTimeout((int) patience.toMillis());
            int first = socket.getInputStream().read();
            return new Seen(0, Map.of(), first < 0 ? "" : "an answer began: " + (char) first, null, since(started));
        } catch (IOException failed) {
            return new Seen(0, Map.of(), null, failed, since(started));
        }
    }

    /** POST {base}/v1/flags/evaluate for user-1 and {@code flagKey}. */
    static Seen evaluate(String base, String flagKey) {
        return send(base, "/v1/flags/evaluate", SERVER_KEY,
                "{\"targetingKey\":\"user-1\",\"flagKeys\":[\"" + flagKey + "\"]}", Map.of(), HANG_GUARD);
    }

    /** The value {@code base} serves for {@code flagKey}. */
    static Object valueOf(String base, String flagKey) {
        Seen seen = evaluate(base, flagKey);
        Map<String, Object> decoded = seen.decoded().orElseThrow(() -> new AssertionError("evaluate: " + seen));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> decisions = (List<Map<String, Object>>) decoded.get("decisions");
        return decisions.get(0).get("value");
    }

    /** POST {base}/v1/capture with these events; it must be accepted. */
    static void capture(String base, Object... events) {
        Seen seen = send(base, "/v1/capture", SERVER_KEY, Json.write(Map.of("events", List.of(events))), Map.of(),
                HANG_GUARD);
        if (seen.status != 200) {
            throw new AssertionError("capture: " + seen);
        }
    }

    /** GET {base}{path} with this Authorization. */
    static Seen get(String base, String path, String authorization) {
        return send(base, path, authorization, null, Map.of(), HANG_GUARD);
    }

    static Seen send(String base, String path, String authorization, String body, Map<String, String> headers,
            Duration timeout) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).timeout(timeout)
                .header("Authorization", authorization);
        if (body == null) {
            request.GET();
        } else {
            request.header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        }
        headers.forEach(request::header);
        long started = System.nanoTime();
        try {
            HttpResponse<String> answer = client().send(request.build(), HttpResponse.BodyHandlers.ofString());
            return new Seen(answer.statusCode(), answer.headers().map(), answer.body(), null, since(started));
        } catch (IOException failed) {
            return new Seen(0, Map.of(), null, failed, since(started));
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new AssertionError(interrupted);
        }
    }

    private static Duration since(long started) {
        return Duration.ofNanos(System.nanoTime() - started);
    }
}
