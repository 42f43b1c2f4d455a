package io.lockstep.cli;

import java.time.Duration;
import java.util.Locale;

/** Durations and nanosecond figures as people read them. */
final class Durations {
    private Durations() {}

    static String text(Duration d) {
        long ms = d.toMillis();
        if (ms % 3_600_000 == 0 && ms > 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0 && ms > 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1000 == 0 && ms > 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }

    /** Milliseconds with a precision that suits them: 0.052, 1.40, 23.1, 1200. */
    static String ms(double millis) {
        if (Double.isNaN(millis)) {
            return "-";
        }
        if (millis < 1) {
            return String.format(Locale.ROOT, "%.3f", millis);
        }
        if (millis < 10) {
            return String.format(Locale.ROOT, "%.2f", millis);
        }
        if (millis < 100) {
            return String.format(Locale.ROOT, "%.1f", millis);
        }
        return String.format(Locale.ROOT, "%.0f", millis);
    }
}
