package io.lockstep;

/**
 * A promise a provider makes in {@link ProviderInfo#capabilities()}, beyond what every provider promises
 * (exclusion, owner-checked release, fail-closed acquiring, {@link Lease#lost()}). The compatibility
 * kit runs the tests of every claimed capability and fails the provider if a claim is false; tests of
 * capabilities that are not claimed are skipped, never passed. Claim only what holds under the faults
 * of your {@link StrengthTier}.
 */
public enum Capability {
    /** Leases carry fencing tokens, strictly increasing across holders of the same lock. */
    FENCING,
    /** A lease that is not renewed ends on the backend after its lease time. */
    LEASE_EXPIRY,
    /** {@link Lease#extend(java.time.Duration)} sets a new lease time. */
    EXTEND,
    /** Waiters are woken by the backend when the lock is released, not only by polling. */
    NOTIFIED_WAIT,
    /**
     * Waiters are granted the lock in the order they started waiting, across clients and processes
     * (a queue kept by the backend, such as etcd's create revisions or ZooKeeper's sequential nodes),
     * not only within one process.
     */
    FAIR
}
