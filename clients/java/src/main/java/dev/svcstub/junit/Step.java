package dev.svcstub.junit;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.StringJoiner;

/**
 * One step of a {@linkplain Fault#sequence sequence}: the fault for one matching request (a mode
 * with its own parameters), or {@link #none()}, which lets one request through. Immutable: each
 * method returns a new step.
 */
public final class Step {
    private final FaultMode mode; // null: none
    private final Parameters parameters;

    private Step(FaultMode mode, Parameters parameters) {
        this.mode = mode;
        this.parameters = parameters;
    }

    /** The fault {@code mode}, for one request. */
    public static Step of(FaultMode mode) {
        return new Step(Objects.requireNonNull(mode, "mode"), Parameters.NONE);
    }

    /** One request let through, unfaulted. */
    public static Step none() {
        return new Step(null, Parameters.NONE);
    }

    /** For {@code DELAY} and {@code SLOW_BODY}: how long (default 10 s). */
    public Step delay(Duration delay) {
        return new Step(mode, parameters.delay(delay));
    }

    /** The answer's status: required for {@code STATUS}. */
    public Step status(int status) {
        return new Step(mode, parameters.status(status));
    }

    /** The answer's body instead of the mode's: a string as it is, anything else as JSON. */
    public Step body(Object body) {
        return new Step(mode, parameters.body(body));
    }

    /** The seconds in {@code Retry-After}, for {@code HTTP_429} and {@code STATUS} 429 or 503 (default 1). */
    public Step retryAfterSeconds(int seconds) {
        return new Step(mode, parameters.retryAfterSeconds(seconds));
    }

    Map<String, Object> document() {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("mode", mode == null ? "none" : mode.wireName());
        parameters.putInto(document);
        return document;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Step && mode == ((Step) other).mode && parameters.equals(((Step) other).parameters);
    }

    @Override
    public int hashCode() {
        return Objects.hash(mode, parameters);
    }

    @Override
    public String toString() {
        StringJoiner out = new StringJoiner(", ", "Step{", "}");
        out.add(mode == null ? "none" : mode.wireName());
        parameters.describe(out);
        return out.toString();
    }
}
