package dev.svcstub.junit;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;

/**
 * A fault as the stub armed it. Closing it disarms it, so try-with-resources arms a fault for a
 * block alone:
 *
 * <pre>{@code
 * try (ArmedFault outage = stub.arm(Fault.of(FaultMode.HTTP_500).applyTo(Selector.EVALUATE))) {
 *     assertEquals("control", checkout.variant("user-1"));
 * } // disarmed here, whatever the block did
 * }</pre>
 *
 * <p>A fault that is not closed stays armed for the rest of the test (its namespace goes with
 * it). A fault that ran out by itself ({@link Fault#times}, a sequence) closes quietly.
 *
 * <p>Of its parameters (delay, status, body, Retry-After) the stub lists only those its mode
 * uses: any other reads empty, as all four do for a sequence.
 */
public final class ArmedFault implements AutoCloseable {
    private final ControlClient client;
    private final int id;
    private final Optional<FaultMode> mode;
    private final List<String> applyTo;
    private final OptionalInt remaining;
    private final int fired;
    private final Optional<Duration> delay;
    private final OptionalInt status;
    private final Optional<Object> body;
    private final OptionalInt retryAfterSeconds;
    private final OptionalDouble probability;

    private ArmedFault(ControlClient client, Members members) {
        this.client = client;
        id = members.integer("id");
        mode = members.optionalString("mode").map(FaultMode::fromWireName);
        applyTo = members.strings("applyTo");
        remaining = members.optionalInteger("ttlRequests");
        fired = members.optionalInteger("fired").orElse(0);
        delay = millis(members, "delayMs");
        status = members.optionalInteger("status");
        body = Optional.ofNullable(members.raw("body"));
        retryAfterSeconds = members.optionalInteger("retryAfter");
        probability = members.has("probability") ? OptionalDouble.of(members.number("probability")) : OptionalDouble.empty();
    }

    static ArmedFault from(ControlClient client, Members members) {
        return new ArmedFault(client, members);
    }

    /** A duration in milliseconds, read as a long: an arming may give a delay beyond an int's. */
    private static Optional<Duration> millis(Members members, String name) {
        Object value = members.raw(name);
        if (value == null) {
            return Optional.empty();
        }
        if (!(value instanceof Long)) {
            throw new IllegalArgumentException("'" + name + "' is " + Json.write(value) + "; expected an integer");
        }
        return Optional.of(Duration.ofMillis((Long) value));
    }

    /** Its id in the namespace. */
    public int id() {
        return id;
    }

    /** Its mode; empty for a sequence. */
    public Optional<FaultMode> mode() {
        return mode;
    }

    /** What it applies to, as the stub lists it: sorted, groups expanded. */
    public List<String> applyTo() {
        return applyTo;
    }

    /** How many more requests it faults when it was read; empty: until disarmed. */
    public OptionalInt remaining() {
        return remaining;
    }

    /** How many requests it had faulted when it was read. */
    public int fired() {
        return fired;
    }

    /** How long it holds an answer, for {@link FaultMode#DELAY} and {@link FaultMode#SLOW_BODY}. */
    public Optional<Duration> delay() {
        return delay;
    }

    /**
     * The status it answers with, for the modes that make their own answer ({@link FaultMode#STATUS}
     * among them); empty too where it answers with its mode's own.
     */
    public OptionalInt status() {
        return status;
    }

    /**
     * The body it answers with instead of its mode's, as the stub lists it (a {@code String},
     * {@code Long}, {@code Double}, {@code Boolean}, {@code List} or {@code Map}); empty where it
     * answers with its mode's own, and for the modes that make no answer of their own.
     */
    public Optional<Object> body() {
        return body;
    }

    /**
     * Seconds in its {@code Retry-After}, for {@link FaultMode#HTTP_429}, and {@link FaultMode#STATUS}
     * with 429 or 503.
     */
    public OptionalInt retryAfterSeconds() {
        return retryAfterSeconds;
    }

    /** The share of matching requests it fires on, if not every one. */
    public OptionalDouble probability() {
        return probability;
    }

    /** Disarms it; a fault that already ran out (or was cleared) is left as it is. */
    @Override
    public void close() {
        try {
            client.disarm(id);
        } catch (StubRefusedException refused) {
            if (refused.status() != 404) {
                throw refused;
            }
        }
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof ArmedFault && id == ((ArmedFault) other).id
                && client.url().equals(((ArmedFault) other).client.url());
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, client.url());
    }

    @Override
    public String toString() {
        return "ArmedFault{#" + id + " " + mode.map(FaultMode::wireName).orElse("sequence") + " on " + applyTo
                + ", fired " + fired + (remaining.isPresent() ? ", " + remaining.getAsInt() + " to go" : "") + "}";
    }
}
