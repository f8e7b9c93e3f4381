package dev.svcstub.junit;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * What the assertions check of the journal, each as the failure message it gives (empty when the
 * check passes): what was expected, then what was recorded instead, as the Go and JavaScript
 * helpers word it.
 */
final class Checks {
    /** What a timer may fire early by (the JVM and the OS round their sleeps) before a wait counts as short. */
    static final double RETRY_AFTER_SLACK_MS = 5.0;

    private Checks() {
    }

    static Optional<Map<String, Object>> exposure(List<Map<String, Object>> exposures, String flagKey,
            String targetingKey, String variant) {
        return exposures.stream()
                .filter(e -> flagKey.equals(e.get("flagKey")) && targetingKey.equals(e.get("targetingKey"))
                        && (variant == null || variant.equals(e.get("variant"))))
                .findFirst();
    }

    static String exposureMissing(List<Map<String, Object>> exposures, String flagKey, String targetingKey,
            String variant) {
        String wanted = "exposure of " + flagKey + " for " + targetingKey + (variant == null ? "" : " (variant " + variant + ")");
        return "no " + wanted + "; exposures recorded:\n" + shown(exposures);
    }

    static Optional<String> unexpectedRequests(List<RecordedRequest> requests, Route route) {
        if (requests.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of("expected no request to " + route.wireName() + ", got " + requests.size() + ":\n" + listed(requests));
    }

    static Optional<String> warnedRequests(List<RecordedRequest> requests) {
        List<String> lines = requests.stream().filter(r -> r.warning().isPresent())
                .map(r -> "  #" + r.seq() + " " + r.method() + " " + r.path() + ": " + r.warning().get())
                .collect(Collectors.toList());
        if (lines.isEmpty()) {
            return Optional.empty();
        }
        String count = lines.size() + (lines.size() == 1 ? " request" : " requests");
        return Optional.of(count + " used a key where the service refuses it:\n" + String.join("\n", lines));
    }

    static Optional<String> earlyRetries(List<RecordedRequest> requests, Route route) {
        List<String> lines = new ArrayList<>();
        for (int i = 1; i < requests.size(); i++) {
            RecordedRequest before = requests.get(i - 1);
            RecordedRequest after = requests.get(i);
            if (before.retryAfter().isEmpty()) {
                continue;
            }
            int retryAfter = before.retryAfter().getAsInt();
            double waited = after.arrivedMs() - (before.arrivedMs() + before.durationMs());
            if (waited + RETRY_AFTER_SLACK_MS < retryAfter * 1000.0) {
                lines.add(String.format("  #%d came %.0f ms after #%d was answered %s with Retry-After: %d",
                        after.seq(), waited, before.seq(),
                        before.status().isPresent() ? Integer.toString(before.status().getAsInt()) : "no answer",
                        retryAfter));
            }
        }
        if (lines.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of("retried " + route.wireName() + " before Retry-After allowed:\n" + String.join("\n", lines));
    }

    /** The time in ms between each request's arrival and the next one's. */
    static List<Double> gapsMs(List<RecordedRequest> requests) {
        List<Double> gaps = new ArrayList<>();
        for (int i = 1; i < requests.size(); i++) {
            gaps.add(Math.round((requests.get(i).arrivedMs() - requests.get(i - 1).arrivedMs()) * 1000) / 1000.0);
        }
        return List.copyOf(gaps);
    }

    /** Requests one a line, indented: {@code   #3 POST /v1/capture -> 200}. */
    static String listed(List<RecordedRequest> requests) {
        if (requests.isEmpty()) {
            return "  (none)";
        }
        return requests.stream().map(r -> "  " + r).collect(Collectors.joining("\n"));
    }

    /** Events as indented JSON. */
    static String shown(List<Map<String, Object>> events) {
        return events.isEmpty() ? "(none)" : Json.pretty(events);
    }

    static boolean isPreflight(RecordedRequest request) {
        return Objects.equals(request.route().orElse(null), Route.PREFLIGHT.wireName());
    }
}
