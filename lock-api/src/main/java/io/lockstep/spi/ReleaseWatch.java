package io.lockstep.spi;

import java.time.Duration;

/**
 * A waiter's subscription to release signals for one lock. Created before the first attempt so that
 * a release between a failed attempt and {@link #await} is not missed.
 */
public interface ReleaseWatch extends AutoCloseable {

    /**
     * Waits until the lock may have been released since the watch was created or since the last
     * call returned true, or until {@code timeout} passes.
     *
     * @return true if a release was signalled, false on timeout
     */
    boolean await(Duration timeout) throws InterruptedException;

    /** Stops watching. */
    @Override
    void close();

    /** A watch that is never signalled: waiters poll at the backend's retry hint. */
    static ReleaseWatch polling() {
        return new ReleaseWatch() {
            @Override
            public boolean await(Duration timeout) throws InterruptedException {
                long nanos = timeout.toNanos();
                if (nanos > 0) {
                    Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
                }
                return false;
            }

            @Override
            public void close() {}
        };
    }
}
