package io.lockstep.spring.boot;

import io.lockstep.LossReason;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * What a {@link ManagedLockProvider} has seen of its leases, for health checks: how many are held now,
 * how many ended by a loss (any reason but {@link LossReason#RELEASED}) within the window, and the last
 * such loss.
 *
 * @param liveLeases leases granted and not yet ended
 * @param lostRecently losses within {@code window}
 * @param window how far back {@code lostRecently} counts
 * @param lastLoss the most recent loss, if any happened since the provider was opened
 */
public record LeaseStatistics(int liveLeases, int lostRecently, Duration window, Optional<Loss> lastLoss) {

    /**
     * One loss.
     *
     * @param lockName the lock that was lost
     * @param reason why
     * @param at when (wall clock, for display)
     */
    public record Loss(String lockName, LossReason reason, Instant at) {}
}
