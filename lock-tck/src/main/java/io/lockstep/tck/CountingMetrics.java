package io.lockstep.tck;

import io.lockstep.LossReason;
import io.lockstep.metrics.LockMetrics;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link LockMetrics} that counts renewals, failed renewals and losses, for tests that check what the
 * runtime's renewal did (pass it through {@code LockRuntime}'s metrics). Thread-safe and non-blocking,
 * as metrics must be.
 */
public final class CountingMetrics implements LockMetrics {

    private final AtomicLong renewed = new AtomicLong();
    private final AtomicLong renewalFailed = new AtomicLong();
    private final AtomicLong lost = new AtomicLong();

    @Override
    public void renewed(String provider) {
        renewed.incrementAndGet();
    }

    @Override
    public void renewalFailed(String provider) {
        renewalFailed.incrementAndGet();
    }

    @Override
    public void lost(String provider, LossReason reason) {
        lost.incrementAndGet();
    }

    /** Renewals that succeeded so far. */
    public long renewals() {
        return renewed.get();
    }

    /** Renewals that failed so far. */
    public long renewalFailures() {
        return renewalFailed.get();
    }

    /** Leases lost so far, for any reason. */
    public long losses() {
        return lost.get();
    }
}
