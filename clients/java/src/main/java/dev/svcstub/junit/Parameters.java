package dev.svcstub.junit;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.StringJoiner;

/**
 * What a fault answers with, for the modes that take it: shared by a {@link Fault} and a {@link Step}.
 * {@code delay} null: the stub's 10 s; {@code status} 0 and {@code body} null: the mode's own;
 * {@code retryAfterSeconds} -1: the stub's 1.
 */
record Parameters(Duration delay, int status, Object body, int retryAfterSeconds) {
    static final Parameters NONE = new Parameters(null, 0, null, -1);

    Parameters delay(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay: " + delay + " is negative");
        }
        return new Parameters(delay, status, body, retryAfterSeconds);
    }

    Parameters status(int status) {
        if (status < 200 || status > 599) {
            throw new IllegalArgumentException("status: " + status + " is not a status the stub answers with (200 to 599)");
        }
        return new Parameters(delay, status, body, retryAfterSeconds);
    }

    Parameters body(Object body) {
        Json.write(Objects.requireNonNull(body, "body")); // a body that cannot be sent fails here, at the test's line
        return new Parameters(delay, status, body, retryAfterSeconds);
    }

    Parameters retryAfterSeconds(int seconds) {
        if (seconds < 0) {
            throw new IllegalArgumentException("retryAfterSeconds: " + seconds + " is negative");
        }
        return new Parameters(delay, status, body, seconds);
    }

    boolean hasBody() {
        return body != null;
    }

    /** Adds the members the stub reads ({@code delayMs}, {@code status}, {@code body}, {@code retryAfter}). */
    void putInto(Map<String, Object> document) {
        if (delay != null) {
            document.put("delayMs", delay.toMillis());
        }
        if (status != 0) {
            document.put("status", status);
        }
        if (body != null) {
            document.put("body", body);
        }
        if (retryAfterSeconds >= 0) {
            document.put("retryAfter", retryAfterSeconds);
        }
    }

    /** Adds the headers that carry these parameters on one request (a body cannot be). */
    void putHeaders(Map<String, String> headers) {
        if (delay != null) {
            headers.put(Headers.DELAY_MS, Long.toString(delay.toMillis()));
        }
        if (status != 0) {
            headers.put(Headers.STATUS, Integer.toString(status));
        }
        if (retryAfterSeconds >= 0) {
            headers.put(Headers.RETRY_AFTER, Integer.toString(retryAfterSeconds));
        }
    }

    void describe(StringJoiner out) {
        if (delay != null) {
            out.add("delay=" + delay.toMillis() + "ms");
        }
        if (status != 0) {
            out.add("status=" + status);
        }
        if (body != null) {
            out.add("body=" + Json.write(body));
        }
        if (retryAfterSeconds >= 0) {
            out.add("retryAfterSeconds=" + retryAfterSeconds);
        }
    }
}
