package dev.svcstub.junit;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Everything clients sent to be kept ({@code GET /_test/events}): each item as the JSON object they sent. */
public final class Recorded {
    private final List<Map<String, Object>> events;
    private final List<Map<String, Object>> svcEvents;
    private final List<Map<String, Object>> targets;
    private final Map<String, Object> dropped;

    private Recorded(Members members) {
        events = objects(members, "events");
        svcEvents = objects(members, "svcEvents");
        targets = objects(members, "targets");
        dropped = members.optionalObject("dropped").map(Members::asMap).orElse(Map.of());
    }

    static Recorded from(Members members) {
        return new Recorded(members);
    }

    private static List<Map<String, Object>> objects(Members members, String name) {
        return members.objects(name).stream().map(Members::asMap).collect(Collectors.toUnmodifiableList());
    }

    /** Items of vendor {@code /batch} bodies. */
    public List<Map<String, Object>> events() {
        return events;
    }

    /** Events of {@code /v1/capture} bodies: exposures, signals, events. */
    public List<Map<String, Object>> svcEvents() {
        return svcEvents;
    }

    /** The exposures among {@link #svcEvents()} ({@code "type": "exposure"}). */
    public List<Map<String, Object>> exposures() {
        return exposuresAmong(svcEvents);
    }

    /** {@code /v1/targets/register} bodies. */
    public List<Map<String, Object>> targets() {
        return targets;
    }

    /** How many of each list the stub dropped past its bound ({@code events}, {@code svcEvents}, {@code targets}). */
    public Map<String, Object> dropped() {
        return dropped;
    }

    static List<Map<String, Object>> exposuresAmong(List<Map<String, Object>> svcEvents) {
        return svcEvents.stream().filter(event -> "exposure".equals(event.get("type")))
                .collect(Collectors.toUnmodifiableList());
    }

    @Override
    public String toString() {
        return "Recorded{events=" + events.size() + ", svcEvents=" + svcEvents.size() + ", targets=" + targets.size() + "}";
    }
}
