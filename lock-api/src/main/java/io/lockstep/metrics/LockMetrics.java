package io.lockstep.metrics;

import io.lockstep.LossReason;
import java.time.Duration;

/**
 * Receives lock events from every provider of a {@link io.lockstep.LockRuntime}. Every method has an
 * empty default; implementations must be thread-safe and must not block.
 */
public interface LockMetrics {

    /** Counts nothing. */
    LockMetrics NOOP = new LockMetrics() {};

    /** An acquire or tryAcquire call started. */
    default void acquireAttempted(String provider) {}

    /** A lease was granted after waiting {@code waited}. */
    default void acquired(String provider, Duration waited) {}

    /** The wait time ran out with the lock still held by someone else. */
    default void acquireTimedOut(String provider, Duration waited) {}

    /** A lease was renewed automatically. */
    default void renewed(String provider) {}

    /** An automatic renewal failed (backend unreachable); the lease may still be valid. */
    default void renewalFailed(String provider) {}

    /** A lease was lost for {@code reason} (never {@link LossReason#RELEASED}). */
    default void lost(String provider, LossReason reason) {}

    /** A lease was released after being held for {@code held}. */
    default void released(String provider, Duration held) {}
}
