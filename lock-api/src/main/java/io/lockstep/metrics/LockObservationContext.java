package io.lockstep.metrics;

import io.lockstep.LossReason;
import io.micrometer.observation.Observation;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What an {@link ObservedLockProvider} observation carries, for {@link
 * io.micrometer.observation.ObservationHandler}s that want more than its key values: the lock, the
 * provider, the backend kind and, once known, the outcome of the acquire or the reason the lease ended.
 *
 * <p>One context per observation; written by the thread that acquires and, for a lease, by the thread
 * that completes {@link io.lockstep.Lease#lost()}; read by handlers after those writes.
 */
public final class LockObservationContext extends Observation.Context {

    private final String lockName;
    private final String provider;
    private final String backend;
    private volatile @Nullable String outcome;
    private volatile @Nullable LossReason endReason;

    LockObservationContext(String lockName, String provider, String backend) {
        this.lockName = Objects.requireNonNull(lockName, "lockName");
        this.provider = Objects.requireNonNull(provider, "provider");
        this.backend = Objects.requireNonNull(backend, "backend");
    }

    /** The lock's name (unbounded: a high-cardinality value, never a tag). */
    public String lockName() {
        return lockName;
    }

    /** The provider's name in the application (for example the Spring bean's name). */
    public String provider() {
        return provider;
    }

    /** The backend kind, {@link io.lockstep.ProviderInfo#name()} (for example {@code redis}). */
    public String backend() {
        return backend;
    }

    /** For an acquire: {@code acquired}, {@code not-acquired} or {@code error}, once it returned. */
    public Optional<String> outcome() {
        return Optional.ofNullable(outcome);
    }

    /** For a lease: why it ended, once it did. */
    public Optional<LossReason> endReason() {
        return Optional.ofNullable(endReason);
    }

    void outcome(String outcome) {
        this.outcome = outcome;
    }

    void endReason(LossReason reason) {
        this.endReason = reason;
    }
}
