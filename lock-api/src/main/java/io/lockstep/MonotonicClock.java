package io.lockstep;

/**
 * The monotonic clock that lease validity is measured on. The system one is {@link System#nanoTime()};
 * tests inject their own through {@link LockRuntime}. Never wall-clock time.
 */
@FunctionalInterface
public interface MonotonicClock {

    /** The system's monotonic clock. */
    MonotonicClock SYSTEM = System::nanoTime;

    /** Nanoseconds from an arbitrary origin; only differences between two readings mean anything. */
    long nanoTime();
}
