package dev.svcstub.junit;

import java.util.Map;
import java.util.Optional;

/**
 * One item of a vendor {@code /batch} body, as a client sent it.
 *
 * @param event its {@code event} ({@code $pageview}), if sent
 * @param distinctId its {@code distinct_id}, if sent as a string
 * @param properties its {@code properties} (empty when none were sent)
 * @param fields every member as sent, in the order sent
 */
public record VendorEvent(Optional<String> event, Optional<String> distinctId, Map<String, Object> properties,
        Map<String, Object> fields) {

    @SuppressWarnings("unchecked") // a JSON object as Json reads it
    static VendorEvent from(Map<String, Object> sent) {
        Map<String, Object> properties = sent.get("properties") instanceof Map<?, ?> object ? (Map<String, Object>) object : Map.of();
        return new VendorEvent(SvcEvent.text(sent, "event"), SvcEvent.text(sent, "distinct_id"), properties, sent);
    }

    /** As the client sent it, in JSON. */
    @Override
    public String toString() {
        return Json.write(fields);
    }
}
