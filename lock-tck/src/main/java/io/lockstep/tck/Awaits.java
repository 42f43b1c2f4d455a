package io.lockstep.tck;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Measured waiting: poll a condition until it holds and report how long that took. */
final class Awaits {

    private static final long POLL_MILLIS = 2;

    private Awaits() {}

    /**
     * Polls {@code condition} until it is true and returns how long it took, or fails with {@code what}
     * when {@code limit} passes first.
     */
    static Duration until(String what, Duration limit, BooleanSupplier condition) {
        long start = System.nanoTime();
        long deadline = start + limit.toNanos();
        while (true) {
            if (condition.getAsBoolean()) {
                return Duration.ofNanos(System.nanoTime() - start);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError(what + " did not happen within " + limit);
            }
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + what, e);
            }
        }
    }
}
