package dev.svcstub.junit;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.StringJoiner;
import java.util.stream.Collectors;

/**
 * A fault to arm: one {@link FaultMode} with its parameters, or a {@linkplain #sequence sequence}
 * of steps, and where and how often it fires.
 *
 * <pre>{@code
 * Fault.of(FaultMode.HTTP_500).applyTo(Selector.EVALUATE).times(1)
 * Fault.of(FaultMode.STATUS).status(503).retryAfterSeconds(2).applyTo(Selector.CAPTURE)
 * Fault.sequence(Step.of(FaultMode.HTTP_500), Step.none(), Step.of(FaultMode.HTTP_429)).applyTo(Selector.EVALUATE)
 * }</pre>
 *
 * <p>Immutable: each method returns a new fault, so one can be kept in a constant and varied.
 * A mistake (a status out of range, {@code times} on a sequence) is an
 * {@link IllegalArgumentException} at the line that made it, before anything is sent.
 */
public final class Fault {
    private final FaultMode mode; // null for a sequence
    private final List<Step> sequence; // null for a mode
    private final List<Selector> applyTo;
    private final int times; // 0: until disarmed
    private final double probability; // 0: every matching request
    private final long seed;
    private final Parameters parameters;

    private Fault(FaultMode mode, List<Step> sequence, List<Selector> applyTo, int times, double probability,
            long seed, Parameters parameters) {
        this.mode = mode;
        this.sequence = sequence;
        this.applyTo = applyTo;
        this.times = times;
        this.probability = probability;
        this.seed = seed;
        this.parameters = parameters;
    }

    /** The fault {@code mode}, on every route until disarmed (narrow it with {@link #applyTo} and {@link #times}). */
    public static Fault of(FaultMode mode) {
        return new Fault(Objects.requireNonNull(mode, "mode"), null, List.of(), 0, 0, 0, Parameters.NONE);
    }

    /** One step per matching request, in order, then disarmed by itself. */
    public static Fault sequence(Step... steps) {
        return sequence(Arrays.asList(steps));
    }

    /** One step per matching request, in order, then disarmed by itself. */
    public static Fault sequence(List<Step> steps) {
        if (steps.isEmpty()) {
            throw new IllegalArgumentException("sequence: give at least one step");
        }
        List<Step> copy = List.copyOf(steps); // no null step
        return new Fault(null, copy, List.of(), 0, 0, 0, Parameters.NONE);
    }

    /** Fires only on these routes, resources or groups (default {@link Selector#ALL}): the arming's {@code applyTo}. */
    public Fault applyTo(Selector... selectors) {
        if (selectors.length == 0) {
            throw new IllegalArgumentException("applyTo: name at least one selector");
        }
        return new Fault(mode, sequence, List.of(selectors), times, probability, seed, parameters);
    }

    /** Fires on the next {@code requests} matching requests only, then disarms itself. */
    public Fault times(int requests) {
        if (sequence != null) {
            throw new IllegalArgumentException("times: a sequence runs out by itself, after its steps");
        }
        if (requests < 1) {
            throw new IllegalArgumentException("times: " + requests + " requests; give 1 or more");
        }
        return new Fault(mode, sequence, applyTo, requests, probability, seed, parameters);
    }

    /** Fires on this share (0 to 1] of matching requests, drawn from its own generator seeded with {@code seed}. */
    public Fault probability(double share, long seed) {
        if (!(share > 0 && share <= 1)) {
            throw new IllegalArgumentException("probability: " + share + " is not in (0, 1]");
        }
        return new Fault(mode, sequence, applyTo, times, share, seed, parameters);
    }

    /** For {@code DELAY} and {@code SLOW_BODY}: how long (default 10 s). */
    public Fault delay(Duration delay) {
        return with(parameters.delay(delay));
    }

    /** The answer's status: required for {@link FaultMode#STATUS}. */
    public Fault status(int status) {
        return with(parameters.status(status));
    }

    /** The answer's body instead of the mode's: a string as it is, anything else as JSON. */
    public Fault body(Object body) {
        return with(parameters.body(body));
    }

    /** The seconds in {@code Retry-After}, for {@code HTTP_429} and {@code STATUS} 429 or 503 (default 1). */
    public Fault retryAfterSeconds(int seconds) {
        return with(parameters.retryAfterSeconds(seconds));
    }

    private Fault with(Parameters changed) {
        return new Fault(mode, sequence, applyTo, times, probability, seed, changed);
    }

    /** The {@code POST /_test/fault} document. */
    Map<String, Object> document() {
        Map<String, Object> document = new LinkedHashMap<>();
        if (mode != null) {
            document.put("mode", mode.wireName());
        } else {
            document.put("sequence", sequence.stream().map(Step::document).collect(Collectors.toList()));
        }
        if (!applyTo.isEmpty()) {
            document.put("applyTo", applyTo.stream().map(Selector::wireName).collect(Collectors.toList()));
        }
        if (times > 0) {
            document.put("ttlRequests", times);
        }
        if (probability > 0) {
            document.put("probability", probability);
            document.put("seed", seed);
        }
        parameters.putInto(document);
        return Collections.unmodifiableMap(document);
    }

    /** The headers that fault one request this way (see {@link SvcStub#faultHeaders}). */
    Map<String, String> headers() {
        if (mode == null) {
            throw new IllegalArgumentException("faultHeaders: a sequence spans requests; headers fault one (arm it instead)");
        }
        if (parameters.hasBody()) {
            throw new IllegalArgumentException("faultHeaders: a body cannot be sent in a header (arm the fault instead)");
        }
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put(Headers.FAULT, mode.wireName());
        parameters.putHeaders(headers);
        return Collections.unmodifiableMap(headers);
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof Fault)) {
            return false;
        }
        Fault that = (Fault) other;
        return mode == that.mode && Objects.equals(sequence, that.sequence) && applyTo.equals(that.applyTo)
                && times == that.times && probability == that.probability && seed == that.seed
                && parameters.equals(that.parameters);
    }

    @Override
    public int hashCode() {
        return Objects.hash(mode, sequence, applyTo, times, probability, seed, parameters);
    }

    @Override
    public String toString() {
        StringJoiner out = new StringJoiner(", ", "Fault{", "}");
        out.add(mode != null ? mode.wireName() : "sequence=" + sequence);
        if (!applyTo.isEmpty()) {
            out.add("applyTo=" + applyTo.stream().map(Selector::wireName).collect(Collectors.joining(",", "[", "]")));
        }
        if (times > 0) {
            out.add("times=" + times);
        }
        if (probability > 0) {
            out.add("probability=" + probability + ", seed=" + seed);
        }
        parameters.describe(out);
        return out.toString();
    }
}
