package io.lockstep.spring.integration;

import io.lockstep.LeaseOptions;
import java.time.Duration;

/**
 * How {@link LockstepLockRegistry} holds its leases: the lease time (Spring's {@code expireAfter}) and whether
 * Lockstep renews it while the lock is held.
 *
 * <p>Immutable; every message names the setting and the value.
 */
public final class LockstepLockRegistryOptions {

    /** The default lease time: 60 s, as Spring's Redis and JDBC registries expire their locks. */
    public static final Duration DEFAULT_LEASE_TIME = Duration.ofSeconds(60);

    private static final LockstepLockRegistryOptions DEFAULTS =
            new LockstepLockRegistryOptions(DEFAULT_LEASE_TIME, true);

    private final Duration leaseTime;
    private final boolean autoRenew;

    private LockstepLockRegistryOptions(Duration leaseTime, boolean autoRenew) {
        this.leaseTime = LeaseOptions.requireValidLeaseTime(leaseTime);
        this.autoRenew = autoRenew;
    }

    /** Leases of {@link #DEFAULT_LEASE_TIME}, renewed at a third of it while held. */
    public static LockstepLockRegistryOptions defaults() {
        return DEFAULTS;
    }

    /**
     * The same options with another lease time.
     *
     * @throws IllegalArgumentException naming "leaseTime" and the value if it is not a valid lease time
     */
    public LockstepLockRegistryOptions withLeaseTime(Duration leaseTime) {
        return new LockstepLockRegistryOptions(leaseTime, autoRenew);
    }

    /**
     * The same options, with automatic renewal on or off. Off, a lock held longer than its lease time is
     * lost (and its {@code unlock()} throws), as in Spring's registries without a renewal scheduler.
     */
    public LockstepLockRegistryOptions withAutoRenew(boolean autoRenew) {
        return new LockstepLockRegistryOptions(leaseTime, autoRenew);
    }

    /** The lease time of a hold taken without its own time to live. */
    public Duration leaseTime() {
        return leaseTime;
    }

    /** Whether Lockstep renews a held lease at a third of its lease time. */
    public boolean autoRenew() {
        return autoRenew;
    }

    LeaseOptions leaseOptions(Duration ttl) {
        LeaseOptions options = LeaseOptions.of(ttl);
        return autoRenew ? options.withAutoRenew() : options;
    }

    @Override
    public String toString() {
        return "LockstepLockRegistryOptions[leaseTime=" + leaseTime + ", autoRenew=" + autoRenew + "]";
    }
}
