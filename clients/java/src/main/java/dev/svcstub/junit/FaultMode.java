package dev.svcstub.junit;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * Every fault mode the stub has, in the stub's order ({@code FaultMode} in its OpenAPI document;
 * a test checks this enum against it, so it cannot drift). The modes named by a status are
 * {@code HTTP_401}, {@code HTTP_429} and {@code HTTP_500}; {@link #STATUS} answers with any
 * status ({@link Fault#status(int)}).
 */
public enum FaultMode implements WireName {
    /** Waits {@link Fault#delay} (default 10 s), then answers as usual. */
    DELAY("delay"),
    /** 401, as for a key the service refuses. */
    HTTP_401("401"),
    /** 429 with {@code Retry-After} ({@link Fault#retryAfterSeconds}, default 1). */
    HTTP_429("429"),
    /** 500. */
    HTTP_500("500"),
    /** 200 with a body that is not JSON. */
    INVALID_JSON("invalid_json"),
    /** 200 whose body stops part-way. */
    TRUNCATED("truncated"),
    /** 200 saying the project is over its quota ({@code quotaLimited: true}). */
    QUOTA_LIMITED("quota_limited"),
    /** Any status ({@link Fault#status(int)}, required), with {@code Retry-After} for 429 and 503. */
    STATUS("status"),
    /** The connection is reset: no HTTP answer. */
    RESET("reset"),
    /** The connection is closed with nothing sent. */
    EMPTY_RESPONSE("empty_response"),
    /** The answer's body is sent slowly, over {@link Fault#delay} (default 10 s). */
    SLOW_BODY("slow_body"),
    /** No answer until the client gives up. */
    HANG("hang");

    private final String wireName;

    FaultMode(String wireName) {
        this.wireName = wireName;
    }

    @Override
    public String wireName() {
        return wireName;
    }

    /** The mode the stub calls {@code wireName}; an {@link IllegalArgumentException} listing the modes if none is. */
    public static FaultMode fromWireName(String wireName) {
        for (FaultMode mode : values()) {
            if (mode.wireName.equals(wireName)) {
                return mode;
            }
        }
        throw new IllegalArgumentException("unknown fault mode '" + wireName + "'; the modes are "
                + Arrays.stream(values()).map(FaultMode::wireName).collect(Collectors.joining(", ")));
    }
}
