package dev.svcstub.junit;

import java.util.Map;
import java.util.Optional;

/**
 * One event of a {@code /v1/capture} body, as a client sent it: an exposure, a signal or an
 * event. The stub keeps what was sent verbatim and checks none of its members, so each typed
 * member is empty when the client did not send it as a string; {@link #fields()} is the whole
 * object.
 *
 * @param type its {@code type}: {@code exposure}, {@code signal} or {@code event} (empty: none sent)
 * @param targetingKey whom it is about
 * @param flagKey an exposure's flag
 * @param variant an exposure's variant
 * @param name a signal's or an event's name
 * @param fields every member as sent, in the order sent (numbers as {@code Long} or {@code Double})
 */
public record SvcEvent(Optional<String> type, Optional<String> targetingKey, Optional<String> flagKey,
        Optional<String> variant, Optional<String> name, Map<String, Object> fields) {

    static SvcEvent from(Map<String, Object> sent) {
        return new SvcEvent(text(sent, "type"), text(sent, "targetingKey"), text(sent, "flagKey"), text(sent, "variant"),
                text(sent, "name"), sent);
    }

    /**
     * Whether it is an exposure ({@code "type": "exposure"}).
     *
     * @return true for an exposure
     */
    public boolean isExposure() {
        return type.equals(Optional.of("exposure"));
    }

    /**
     * Whether it is a signal ({@code "type": "signal"}).
     *
     * @return true for a signal
     */
    public boolean isSignal() {
        return type.equals(Optional.of("signal"));
    }

    /**
     * Its {@code value} as sent (a string, a number, a boolean, a map or a list; null: none).
     *
     * @return the value
     */
    public Object value() {
        return fields.get("value");
    }

    static Optional<String> text(Map<String, Object> sent, String name) {
        return sent.get(name) instanceof String text ? Optional.of(text) : Optional.empty();
    }

    /** As the client sent it, in JSON. */
    @Override
    public String toString() {
        return Json.write(fields);
    }
}
