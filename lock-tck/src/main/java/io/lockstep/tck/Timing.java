package io.lockstep.tck;

import java.time.Duration;

/**
 * Scales the kit's waits for slow machines: {@code -Dlockstep.tck.timing=2} doubles every lease time,
 * margin and deadline. The factor never changes what is asserted, only how long the kit waits.
 */
public final class Timing {

    /** The system property that sets the factor. */
    public static final String PROPERTY = "lockstep.tck.timing";

    private final double factor;

    private Timing(double factor) {
        if (!(factor >= 0.1 && factor <= 100)) {
            throw new IllegalArgumentException(PROPERTY + " must be between 0.1 and 100, was " + factor);
        }
        this.factor = factor;
    }

    /** The factor from {@value #PROPERTY}, 1 when unset. */
    public static Timing fromSystemProperty() {
        String raw = System.getProperty(PROPERTY, "1").strip();
        try {
            return new Timing(raw.isEmpty() ? 1 : Double.parseDouble(raw));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(PROPERTY + " must be a number, was '" + raw + "'", e);
        }
    }

    /** A fixed factor. */
    public static Timing of(double factor) {
        return new Timing(factor);
    }

    /** The factor. */
    public double factor() {
        return factor;
    }

    /** {@code millis} milliseconds, scaled. */
    public Duration millis(long millis) {
        return Duration.ofMillis(Math.max(1, Math.round(millis * factor)));
    }

    /** {@code duration}, scaled. */
    public Duration scaled(Duration duration) {
        return Duration.ofNanos(Math.max(1, Math.round(duration.toNanos() * factor)));
    }
}
