package io.lockstep.spi;

import io.lockstep.BackendUnavailableException;
import io.lockstep.ProviderInfo;
import java.time.Duration;
import java.util.Optional;

/**
 * The few atomic operations a backend must offer; {@link BackendLockProvider} builds everything else
 * on them. Implementations are thread-safe.
 *
 * <p>Every operation either completes or throws {@link BackendUnavailableException} (transient or
 * not); it never reports success it is not sure of. Operations must be idempotent for the same owner
 * token, because transient failures are retried: a {@code tryLock} whose reply was lost and that is
 * retried must find the lock already held by the same token and grant it again with the same fence.
 *
 * @param <H> the handle the backend needs to extend and release a grant
 */
public interface LockBackend<H> extends AutoCloseable {

    /** What the backend is and claims. */
    ProviderInfo info();

    /**
     * Takes the lock for {@code ownerToken} if it is free (or already held by {@code ownerToken}).
     * {@code name} is already validated; it must only ever be passed as a key or parameter.
     */
    Attempt<H> tryLock(String name, String ownerToken, Duration leaseTime);

    /**
     * Sets the grant's lease time to {@code leaseTime} if {@code handle}'s owner still holds it.
     *
     * @return the new validity counted from when the request was sent, or empty if no longer held
     */
    Optional<Duration> extend(H handle, Duration leaseTime);

    /**
     * Frees the lock if {@code handle}'s owner still holds it; never touches another holder's lock.
     *
     * @return true if it was held by this owner and is now free
     */
    boolean release(H handle);

    /**
     * Best-effort cleanup after a {@code tryLock} that failed with an unknown outcome: frees the lock
     * if {@code ownerToken} holds it. Must not throw.
     */
    default void abandon(String name, String ownerToken) {}

    /** A watch for release signals on {@code name}; by default, none (waiters poll). */
    default ReleaseWatch watch(String name) {
        return ReleaseWatch.polling();
    }

    /**
     * A watch for the waiter {@code ownerToken} on {@code name}, created before its first {@code
     * tryLock} and closed when it stops waiting, granted or not. A backend that keeps a queue (ZooKeeper's
     * sequential nodes, etcd's create revisions) keeps the waiter's place while the watch is open and
     * removes it on close unless it was granted; a {@code tryLock} without an open watch for its token
     * must leave nothing queued. By default {@link #watch(String)}.
     */
    default ReleaseWatch watch(String name, String ownerToken) {
        return watch(name);
    }

    /** A short description of where the backend is (host and port, never a password), for messages. */
    String describe();

    /** Closes connections; idempotent. */
    @Override
    void close();
}
