package dev.svcstub.junit;

import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Everything clients sent to be kept ({@code GET /_test/events}), each list in arrival order,
 * each item typed and also whole as sent.
 */
public final class Recorded {
    private final List<VendorEvent> events;
    private final List<SvcEvent> svcEvents;
    private final List<RegisteredTarget> targets;
    private final Dropped dropped;

    private Recorded(Members members) {
        events = items(members, "events", VendorEvent::from);
        svcEvents = items(members, "svcEvents", SvcEvent::from);
        targets = items(members, "targets", RegisteredTarget::from);
        dropped = members.optionalObject("dropped")
                .map(d -> new Dropped(d.optionalInteger("events").orElse(0), d.optionalInteger("svcEvents").orElse(0),
                        d.optionalInteger("targets").orElse(0)))
                .orElse(new Dropped(0, 0, 0));
    }

    static Recorded from(Members members) {
        return new Recorded(members);
    }

    private static <T> List<T> items(Members members, String name, Function<Map<String, Object>, T> typed) {
        return members.objects(name).stream().map(Members::asMap).map(typed).collect(Collectors.toUnmodifiableList());
    }

    /**
     * Items of vendor {@code /batch} bodies.
     *
     * @return them, in arrival order
     */
    public List<VendorEvent> events() {
        return events;
    }

    /**
     * Events of {@code /v1/capture} bodies: exposures, signals, events.
     *
     * @return them, in arrival order
     */
    public List<SvcEvent> svcEvents() {
        return svcEvents;
    }

    /**
     * The exposures among {@link #svcEvents()} ({@code "type": "exposure"}).
     *
     * @return them, in arrival order
     */
    public List<SvcEvent> exposures() {
        return svcEvents.stream().filter(SvcEvent::isExposure).collect(Collectors.toUnmodifiableList());
    }

    /**
     * The signals among {@link #svcEvents()} ({@code "type": "signal"}).
     *
     * @return them, in arrival order
     */
    public List<SvcEvent> signals() {
        return svcEvents.stream().filter(SvcEvent::isSignal).collect(Collectors.toUnmodifiableList());
    }

    /**
     * {@code /v1/targets/register} bodies.
     *
     * @return them, in arrival order
     */
    public List<RegisteredTarget> targets() {
        return targets;
    }

    /**
     * How many of each list the stub dropped past its bound.
     *
     * @return the counts
     */
    public Dropped dropped() {
        return dropped;
    }

    /**
     * How many items of each list the stub dropped past its bound ({@code --max-recorded}).
     *
     * @param events vendor {@code /batch} items
     * @param svcEvents {@code /v1/capture} events
     * @param targets {@code /v1/targets/register} bodies
     */
    public record Dropped(int events, int svcEvents, int targets) {
    }

    @Override
    public String toString() {
        return "Recorded{events=" + events.size() + ", svcEvents=" + svcEvents.size() + ", targets=" + targets.size() + "}";
    }
}
