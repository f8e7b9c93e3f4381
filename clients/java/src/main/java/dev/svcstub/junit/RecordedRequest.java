package dev.svcstub.junit;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/** One request as the journal lists it ({@code GET /_test/requests}), oldest first. */
public final class RecordedRequest {
    private final int seq;
    private final String method;
    private final String path;
    private final Map<String, Object> query;
    private final Optional<String> route;
    private final OptionalInt status;
    private final boolean clientGone;
    private final Optional<FaultRecord> fault;
    private final double arrivedMs;
    private final double durationMs;
    private final Optional<String> warning;
    private final OptionalInt retryAfter;
    private final Map<String, String> headers;

    private RecordedRequest(Members members) {
        seq = members.integer("seq");
        method = members.string("method");
        path = members.string("path");
        query = members.optionalObject("query").map(Members::asMap).orElse(Map.of());
        route = members.optionalString("route");
        status = members.optionalInteger("status");
        clientGone = members.bool("clientGone");
        fault = members.optionalObject("fault").map(FaultRecord::from);
        arrivedMs = members.number("arrivedMs");
        durationMs = members.number("durationMs");
        warning = members.optionalString("warning");
        retryAfter = members.optionalInteger("retryAfter");
        headers = members.stringMap("headers");
    }

    static RecordedRequest from(Members members) {
        return new RecordedRequest(members);
    }

    /** Its number in the namespace's journal, for {@link SvcStub#request(int)}. */
    public int seq() {
        return seq;
    }

    public String method() {
        return method;
    }

    /** The path as the client sent it, without the namespace's prefix ({@code /v1/flags/evaluate}). */
    public String path() {
        return path;
    }

    /** The query parameters: a string each, or a list of strings for a repeated one. */
    public Map<String, Object> query() {
        return query;
    }

    /** The route's name ({@link Route#wireName()}); empty for a path the stub does not serve. */
    public Optional<String> route() {
        return route;
    }

    /** The answer's status; empty when no HTTP answer was given ({@code reset}, {@code hang}, a client that left). */
    public OptionalInt status() {
        return status;
    }

    /** Whether the client went away before its answer was complete. */
    public boolean clientGone() {
        return clientGone;
    }

    /** The fault that fired on it, if one did. */
    public Optional<FaultRecord> fault() {
        return fault;
    }

    /** When it arrived, in ms on the stub's clock (one clock for every request). */
    public double arrivedMs() {
        return arrivedMs;
    }

    /** How long its answer took, in ms. */
    public double durationMs() {
        return durationMs;
    }

    /** Why the service would refuse the key it used, when the stub served it anyway. */
    public Optional<String> warning() {
        return warning;
    }

    /** The {@code Retry-After} it was answered with, in seconds. */
    public OptionalInt retryAfter() {
        return retryAfter;
    }

    /** The headers the client sent, by lower-case name, secrets redacted. */
    public Map<String, String> headers() {
        return headers;
    }

    /** One line, as failure messages list it: {@code #3 POST /v1/capture -> 200}. */
    @Override
    public String toString() {
        return "#" + seq + " " + method + " " + path + " -> "
                + (status.isPresent() ? Integer.toString(status.getAsInt()) : "no answer");
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof RecordedRequest)) {
            return false;
        }
        RecordedRequest that = (RecordedRequest) other;
        return seq == that.seq && method.equals(that.method) && path.equals(that.path) && query.equals(that.query)
                && route.equals(that.route) && status.equals(that.status) && clientGone == that.clientGone
                && fault.equals(that.fault) && arrivedMs == that.arrivedMs && durationMs == that.durationMs
                && warning.equals(that.warning) && retryAfter.equals(that.retryAfter) && headers.equals(that.headers);
    }

    @Override
    public int hashCode() {
        return Objects.hash(seq, method, path, arrivedMs);
    }
}
