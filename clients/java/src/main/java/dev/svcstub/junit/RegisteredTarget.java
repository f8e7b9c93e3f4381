package dev.svcstub.junit;

import java.util.Map;
import java.util.Optional;

/**
 * One {@code /v1/targets/register} body, as a client sent it (the stub keeps unknown members
 * too: {@link #fields()}).
 *
 * @param targetingKey whom it registers
 * @param kind its {@code kind} ({@code user}), if sent
 * @param environment its {@code environment}, if sent
 * @param properties its {@code properties} (empty when none were sent)
 * @param fields every member as sent, in the order sent
 */
public record RegisteredTarget(Optional<String> targetingKey, Optional<String> kind, Optional<String> environment,
        Map<String, Object> properties, Map<String, Object> fields) {

    @SuppressWarnings("unchecked") // a JSON object as Json reads it
    static RegisteredTarget from(Map<String, Object> sent) {
        Map<String, Object> properties = sent.get("properties") instanceof Map<?, ?> object ? (Map<String, Object>) object : Map.of();
        return new RegisteredTarget(SvcEvent.text(sent, "targetingKey"), SvcEvent.text(sent, "kind"),
                SvcEvent.text(sent, "environment"), properties, sent);
    }

    /** As the client sent it, in JSON. */
    @Override
    public String toString() {
        return Json.write(fields);
    }
}
