package io.lockstep;

import java.util.Optional;

/**
 * One live connection to a lock backend.
 *
 * <p>Thread-safe: one provider serves every thread of a process. Closing it releases the leases it
 * still holds (best effort, so another process can take over at once; one that cannot be released
 * ends on the backend by its lease time), stops their renewal and closes the backend connection.
 *
 * <p>Under faults: a backend that cannot be reached never yields a lease; both methods throw
 * {@link BackendUnavailableException} instead (fail closed).
 */
public interface LockProvider extends AutoCloseable {

    /**
     * Tries to take the lock named {@code name}, waiting at most {@code options.waitTime()}: a zero wait
     * tries once and returns at once. May be called from any thread, platform or virtual; the lease is
     * not bound to it. A waiting thread that is interrupted stops at once (see {@link LockException}).
     *
     * @return the lease, or empty when another holder kept the lock for the whole wait
     * @throws IllegalArgumentException if the name is not a valid lock name (with {@link
     *     LockNames#requireValid}'s message) or {@code options} is null (the message names "options")
     * @throws BackendUnavailableException if the backend could not be reached
     * @throws IllegalStateException if this provider was closed
     */
    Optional<Lease> tryAcquire(String name, LeaseOptions options);

    /**
     * Takes the lock named {@code name}, waiting at most {@code options.waitTime()} (a zero wait tries
     * once). A waiting thread that is interrupted stops at once (see {@link LockException}).
     *
     * @return the lease
     * @throws LockTimeoutException if another holder kept the lock for the whole wait
     * @throws IllegalArgumentException if the name is not a valid lock name (with {@link
     *     LockNames#requireValid}'s message) or {@code options} is null (the message names "options")
     * @throws BackendUnavailableException if the backend could not be reached
     * @throws IllegalStateException if this provider was closed
     */
    Lease acquire(String name, LeaseOptions options);

    /** What this provider is and what it claims; the compatibility kit checks every claim. */
    ProviderInfo info();

    /**
     * What the backend can tell about the lock named {@code name} right now, for operators: held or not,
     * the holder's fence, the time left before the backend frees it, and who holds it (host, pid and
     * {@linkplain LeaseOptions#withLabel label}) where the backend keeps that. A snapshot for display only.
     *
     * @return the state, or empty when this backend cannot tell (the default)
     * @throws IllegalArgumentException if the name is not a valid lock name
     * @throws BackendUnavailableException if the backend could not be reached
     */
    default Optional<LockState> inspect(String name) {
        LockNames.requireValid(name);
        return Optional.empty();
    }

    /** Releases the leases still held, then closes the connection to the backend. Idempotent. */
    @Override
    void close();
}
