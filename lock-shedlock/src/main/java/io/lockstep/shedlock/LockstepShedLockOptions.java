package io.lockstep.shedlock;

import io.lockstep.LeaseOptions;
import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * How {@link LockstepShedLockProvider} turns ShedLock's {@code lockAtMostFor} into a lease.
 *
 * <ul>
 *   <li>{@link #lockAtMostFor()} (the default): one lease of {@code lockAtMostFor}, never renewed, as
 *       ShedLock's own providers do. A task that runs longer than {@code lockAtMostFor} loses the lock.
 *   <li>{@link #keepAlive(Duration)}: a short lease, renewed automatically while the task runs and released
 *       at {@code lockAtMostFor} at the latest. A crashed node frees the lock after the short lease, so
 *       {@code lockAtMostFor} can be generous without blocking the job for that long after a crash.
 * </ul>
 *
 * <p>Immutable; every message names the setting and the value.
 */
public final class LockstepShedLockOptions {

    private static final LockstepShedLockOptions LOCK_AT_MOST_FOR = new LockstepShedLockOptions(null);

    private final @Nullable Duration keepAliveLease;

    private LockstepShedLockOptions(@Nullable Duration keepAliveLease) {
        this.keepAliveLease = keepAliveLease;
    }

    /** The lease is {@code lockAtMostFor}, not renewed: ShedLock's own behaviour. */
    public static LockstepShedLockOptions lockAtMostFor() {
        return LOCK_AT_MOST_FOR;
    }

    /**
     * Keep-alive mode: leases of {@code leaseTime} (or {@code lockAtMostFor}, if shorter), renewed at a
     * third of it while the task runs, released at {@code lockAtMostFor} at the latest.
     *
     * @throws IllegalArgumentException naming "leaseTime" if it is not a valid lease time
     */
    public static LockstepShedLockOptions keepAlive(Duration leaseTime) {
        return new LockstepShedLockOptions(LeaseOptions.requireValidLeaseTime(leaseTime));
    }

    /** The keep-alive lease time, if keep-alive mode is on. */
    public Optional<Duration> keepAliveLease() {
        return Optional.ofNullable(keepAliveLease);
    }

    @Override
    public String toString() {
        return keepAliveLease == null
                ? "LockstepShedLockOptions[lease=lockAtMostFor]"
                : "LockstepShedLockOptions[keepAlive=" + keepAliveLease + "]";
    }
}
