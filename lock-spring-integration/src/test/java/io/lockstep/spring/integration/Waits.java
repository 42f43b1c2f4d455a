package io.lockstep.spring.integration;

import io.lockstep.tck.Timing;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for an event with a generous bound, scaled by {@code -Dlockstep.tck.timing}. */
final class Waits {

    static final Timing TIMING = Timing.fromSystemProperty();

    private Waits() {}

    /** Polls {@code condition} until it holds; fails naming {@code what} after {@code bound}. */
    static void until(String what, Duration bound, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TIMING.scaled(bound).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError(what + " did not happen within " + TIMING.scaled(bound));
            }
            sleep(Duration.ofMillis(10));
        }
    }

    static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
