package io.lockstep.shedlock;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockException;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import net.javacrumbs.shedlock.core.LockConfiguration;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Lockstep lease behind a ShedLock lock and the locks it was extended into: how it is extended, when it
 * ends. Thread-safe.
 */
final class Hold {

    private static final Logger log = LoggerFactory.getLogger(Hold.class);

    private final Lease lease;
    private final LockstepShedLockProvider.LeasePlan plan;
    private final ReleaseTimer timer;
    private @Nullable ScheduledFuture<?> scheduledRelease; // guarded by this

    Hold(Lease lease, LockstepShedLockProvider.LeasePlan plan, ReleaseTimer timer) {
        this.lease = lease;
        this.plan = plan;
        this.timer = timer;
    }

    Lease lease() {
        return lease;
    }

    /** In keep-alive mode, caps the renewed lease at {@code lockAtMostFor} from {@code startedAt}. */
    void started(long startedAt, Duration lockAtMostFor) {
        if (plan.keepAlive()) {
            releaseAt(startedAt + lockAtMostFor.toNanos());
        }
    }

    /**
     * Extends the lease for {@code configuration}, whose {@code lockAtMostFor} counts from {@code startedAt}.
     *
     * @return false if the lease was lost or has expired
     * @throws IllegalArgumentException if the new configuration does not fit the mode (see {@link
     *     LockstepShedLockProvider.LeasePlan#leaseTime})
     */
    boolean extend(long startedAt, LockConfiguration configuration) {
        Duration leaseTime =
                LockstepShedLockProvider.LeasePlan.leaseTime(lease.name(), configuration, plan.keepAliveLease());
        if (!extendLease(leaseTime)) {
            return false;
        }
        if (plan.keepAlive()) {
            releaseAt(startedAt + configuration.getLockAtMostFor().toNanos());
        }
        return true;
    }

    private boolean extendLease(Duration leaseTime) {
        try {
            return lease.extend(leaseTime);
        } catch (IllegalStateException e) {
            return false; // released at its lockAtMostFor cap (keep-alive mode), or by closing the provider
        }
    }

    /**
     * Ends the hold at {@code lockAtLeastUntil} (a {@link System#nanoTime()} value): at once if it has passed,
     * else by shortening the lease to the time left (plain mode) or by a timer (keep-alive mode, whose lease
     * is renewed until then).
     */
    void unlock(long lockAtLeastUntil) {
        long left = lockAtLeastUntil - System.nanoTime();
        if (left < LeaseOptions.MIN_LEASE_TIME.toNanos()) {
            cancelScheduledRelease();
            release();
        } else if (plan.keepAlive()) {
            releaseAt(lockAtLeastUntil);
        } else {
            keepFor(Duration.ofNanos(left));
        }
    }

    private void keepFor(Duration left) {
        try {
            if (!lease.extend(left)) {
                log.warn("Lock '{}' was lost before its task ended; it may have run concurrently", lease.name());
            }
        } catch (LockException | IllegalStateException e) {
            // The lease keeps its old validity (lockAtMostFor): held longer than lockAtLeastFor, never shorter.
            log.warn(
                    "Could not shorten lock '{}' to its lockAtLeastFor; it ends by its lockAtMostFor: {}",
                    lease.name(),
                    e.toString());
        }
    }

    private synchronized void releaseAt(long deadline) {
        cancelScheduledRelease();
        scheduledRelease = timer.schedule(this::release, deadline);
    }

    private synchronized void cancelScheduledRelease() {
        if (scheduledRelease != null) {
            scheduledRelease.cancel(false);
            scheduledRelease = null;
        }
    }

    private void release() {
        try {
            if (!lease.release()) {
                log.warn("Lock '{}' was lost before it was released; its task may have run concurrently", lease.name());
            }
        } catch (IllegalStateException e) {
            // Already released: by a timer racing an unlock, or by closing the provider.
        } catch (LockException e) {
            log.warn("Releasing lock '{}' failed; it ends by its lease time: {}", lease.name(), e.toString());
        }
    }
}
