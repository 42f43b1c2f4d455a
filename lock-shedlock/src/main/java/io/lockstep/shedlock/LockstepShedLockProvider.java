package io.lockstep.shedlock;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockNames;
import io.lockstep.LockProvider;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.jspecify.annotations.Nullable;

/**
 * A ShedLock {@link ExtensibleLockProvider} over any Lockstep {@link LockProvider}: {@code @SchedulerLock}
 * tasks run on etcd, ZooKeeper, Redlock, Redis or SQL with a fenced lease.
 *
 * <pre>{@code
 * @Bean
 * LockProvider shedLockProvider(io.lockstep.LockProvider locks) {
 *     return new LockstepShedLockProvider(locks);
 * }
 * }</pre>
 *
 * <ul>
 *   <li>{@code lock} never waits: a lock held elsewhere is empty, and ShedLock skips the run.
 *   <li>{@code lockAtMostFor} is the lease time (or, in {@link LockstepShedLockOptions#keepAlive keep-alive
 *       mode}, the cap on a renewed short lease).
 *   <li>{@code lockAtLeastFor} is honoured on unlock: the lease is kept until then (shortened to the time
 *       left, or released by a timer in keep-alive mode), never released early.
 *   <li>The task reads its lease and fencing token from {@link LockstepShedLock#currentLease()}.
 * </ul>
 *
 * <p>Names go to the backend unchanged: a name Lockstep cannot take is refused with {@link
 * LockNames#requireValid}'s {@link IllegalArgumentException}, never hashed or truncated.
 *
 * <p>Thread-safe; one instance serves every scheduler thread. It does not own {@code provider}: close that
 * yourself (closing it releases the leases still kept for {@code lockAtLeastFor}).
 */
public final class LockstepShedLockProvider implements ExtensibleLockProvider {

    private final LockProvider provider;
    private final LockstepShedLockOptions options;
    private final ReleaseTimer releaseTimer = new ReleaseTimer();

    /** A provider whose leases last {@code lockAtMostFor}, as ShedLock's own providers do. */
    public LockstepShedLockProvider(LockProvider provider) {
        this(provider, LockstepShedLockOptions.lockAtMostFor());
    }

    /** A provider with the given lease mode, e.g. {@link LockstepShedLockOptions#keepAlive(Duration)}. */
    public LockstepShedLockProvider(LockProvider provider, LockstepShedLockOptions options) {
        this.provider = Objects.requireNonNull(provider, "provider");
        this.options = Objects.requireNonNull(options, "options");
    }

    /**
     * Tries once to take the lock, without waiting.
     *
     * @return the lock, bound to the calling thread for {@link LockstepShedLock#currentLease()}; empty if it is
     *     held elsewhere (or by another task of this process)
     * @throws IllegalArgumentException if the name is not a valid Lockstep lock name, {@code lockAtMostFor} is
     *     shorter than 1 ms, or in keep-alive mode {@code lockAtLeastFor} is longer than the keep-alive lease
     *     (the message names both values)
     * @throws io.lockstep.BackendUnavailableException if the backend could not be reached
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration lockConfiguration) {
        Objects.requireNonNull(lockConfiguration, "lockConfiguration");
        String name = LockNames.requireValid(lockConfiguration.getName());
        LeasePlan plan = LeasePlan.of(name, lockConfiguration, options);
        long startedAt = System.nanoTime();
        Optional<Lease> lease = provider.tryAcquire(name, plan.leaseOptions());
        if (lease.isEmpty()) {
            return Optional.empty();
        }
        Hold hold = new Hold(lease.get(), plan, releaseTimer);
        hold.started(startedAt, lockConfiguration.getLockAtMostFor());
        LockstepSimpleLock lock = new LockstepSimpleLock(lockConfiguration, hold, startedAt);
        LockstepShedLock.bind(lock);
        return Optional.of(lock);
    }

    /** The lease mode. */
    public LockstepShedLockOptions options() {
        return options;
    }

    @Override
    public String toString() {
        return "LockstepShedLockProvider[" + provider.info().name() + ", " + options + "]";
    }

    /** The lease options for one lock, checked against the mode; {@code keepAliveLease} null in plain mode. */
    record LeasePlan(LeaseOptions leaseOptions, @Nullable Duration keepAliveLease) {

        static LeasePlan of(String name, LockConfiguration config, LockstepShedLockOptions options) {
            Duration keepAlive = options.keepAliveLease().orElse(null);
            Duration leaseTime = leaseTime(name, config, keepAlive);
            LeaseOptions leaseOptions = LeaseOptions.of(leaseTime);
            return new LeasePlan(keepAlive == null ? leaseOptions : leaseOptions.withAutoRenew(), keepAlive);
        }

        boolean keepAlive() {
            return keepAliveLease != null;
        }

        /**
         * The lease time for {@code config}: {@code lockAtMostFor}, or in keep-alive mode the keep-alive lease
         * if shorter.
         *
         * @throws IllegalArgumentException if {@code lockAtMostFor} is under 1 ms, or in keep-alive mode {@code
         *     lockAtLeastFor} is longer than the keep-alive lease (naming both values and the lock)
         */
        static Duration leaseTime(String name, LockConfiguration config, @Nullable Duration keepAlive) {
            Duration atMost = config.getLockAtMostFor();
            if (atMost.compareTo(LeaseOptions.MIN_LEASE_TIME) < 0) {
                throw new IllegalArgumentException("lockAtMostFor of lock '" + name + "' must be at least "
                        + LeaseOptions.MIN_LEASE_TIME + ", was " + atMost);
            }
            if (keepAlive == null) {
                return atMost;
            }
            Duration atLeast = config.getLockAtLeastFor();
            if (atLeast.compareTo(keepAlive) > 0) {
                throw new IllegalArgumentException("lockAtLeastFor (" + atLeast + ") of lock '" + name
                        + "' is longer than the keep-alive lease (" + keepAlive + "): a node that dies after the"
                        + " task would free the lock before lockAtLeastFor; use a keep-alive lease of at least"
                        + " lockAtLeastFor, or LockstepShedLockOptions.lockAtMostFor()");
            }
            return atMost.compareTo(keepAlive) < 0 ? atMost : keepAlive;
        }
    }
}
