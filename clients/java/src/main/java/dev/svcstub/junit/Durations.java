package dev.svcstub.junit;

import java.math.BigDecimal;
import java.time.Duration;

/** A duration as a failure message says it: {@code 200ms}, {@code 5s}, {@code 1.5s}. */
final class Durations {
    private Durations() {
    }

    static String show(Duration duration) {
        long ms = duration.toMillis();
        if (ms < 1000) {
            return ms + "ms";
        }
        return BigDecimal.valueOf(ms, 3).stripTrailingZeros().toPlainString() + "s";
    }
}
