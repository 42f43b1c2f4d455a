package io.lockstep.spi;

import io.lockstep.BackendUnavailableException;
import io.lockstep.ProviderInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * <h2>Session-bound backends</h2>
 *
 * <p>Some backends grant a lock to a session rather than to a key with an owner token: a database
 * connection holding an advisory lock ({@code pg_try_advisory_lock}, {@code GET_LOCK}) or a row lock in
 * an open transaction, a ZooKeeper session owning an ephemeral node. The SPI fits them as follows.
 *
 * <ul>
 *   <li><b>Idempotent retries.</b> The retry rule above holds for them too: a retried {@code tryLock}
 *       of the same {@link AttemptContext} must not take a second session that holds the same lock
 *       while the first one still does. Keep the attempt's session in {@link AttemptContext#attach}
 *       and reuse or close it on the retry; a grant then belongs to exactly one session.
 *   <li><b>Failed attempts.</b> {@link #abandon(AttemptContext)} gets the attempt's context, so it can
 *       close the session the attempt attached (which frees whatever a lost reply granted) rather than
 *       search for it by name.
 *   <li><b>The end of a lease.</b> {@link #dispose(Object)} is called exactly once per granted handle,
 *       after the last call that uses it, however the lease ended: released, lost, expired, or its
 *       provider closed. Return the connection to its pool or close the session there.
 *   <li><b>Waiting on the server.</b> A backend that can block on the server until the lock is free
 *       ({@code pg_advisory_lock} with a statement timeout, {@code GET_LOCK(name, timeout)}, a
 *       ZooKeeper watch) says so with {@link #waitsOnServer()}; {@link BackendLockProvider} then calls
 *       {@link #tryLock(AttemptContext)} with a {@link AttemptContext#maxWait() maximum wait} instead
 *       of polling and watching.
 *   <li><b>A lock freed when its session drops.</b> A lease must never outlive what the backend keeps,
 *       and must never end before its validity without {@code lost()} completing. So a backend whose
 *       lock vanishes with its session either returns {@link Grant#UNBOUNDED} validity together with a
 *       {@link Grant#backendLoss()} signal that completes the moment the session is known to be gone
 *       (a connection error, a session-expired event), or keeps a <em>lease row</em>: a row (or node)
 *       keyed by the lock name, holding the owner token and an expiry time that the server's clock
 *       enforces, written in the same transaction as the grant, extended by {@link #extend} and deleted
 *       by {@link #release}. The row, not the session, is then the lock: another holder may take the
 *       lock only when the row is absent or expired, so a dropped session never frees the lock before
 *       the validity the client was given, and the validity returned is the row's, counted from when
 *       the request was sent.
 * </ul>
 *
 * @param <H> the handle the backend needs to extend and release a grant
 */
public interface LockBackend<H> extends AutoCloseable {

    /** What the backend is and claims. */
    ProviderInfo info();

    /**
     * Takes the lock for {@code ownerToken} if it is free (or already held by {@code ownerToken}).
     * {@code name} is already validated; it must only ever be passed as a key or parameter.
     *
     * <p>A backend implements this method or {@link #tryLock(AttemptContext)}; {@link
     * BackendLockProvider} calls only the latter, which calls this one by default. This default throws
     * {@link UnsupportedOperationException}.
     */
    default Attempt<H> tryLock(String name, String ownerToken, Duration leaseTime) {
        throw new UnsupportedOperationException(getClass().getName()
                + " implements neither tryLock(String, String, Duration) nor tryLock(AttemptContext)");
    }

    /**
     * Takes the lock for {@code attempt.ownerToken()} if it is free (or already held by that owner
     * token), waiting on the server up to {@link AttemptContext#maxWait()} for it to become free (zero:
     * answer at once). Idempotent for the same context, like every operation. Validity is counted from
     * when the request was sent, so time spent waiting on the server shortens it.
     *
     * <p>By default: {@link #tryLock(String, String, Duration)}, which never waits on the server.
     */
    default Attempt<H> tryLock(AttemptContext attempt) {
        return tryLock(attempt.name(), attempt.ownerToken(), attempt.leaseTime());
    }

    /**
     * Whether {@link #tryLock(AttemptContext)} honours {@link AttemptContext#maxWait()} by waiting on the
     * server; then waiters do not poll or {@link #watch}. The wait must end, with a busy answer, by
     * {@code maxWait} plus the backend's own call timeout, and should end early when the calling thread
     * is interrupted. False by default.
     */
    default boolean waitsOnServer() {
        return false;
    }

    /**
     * Sets the grant's lease time to {@code leaseTime} if {@code handle}'s owner still holds it.
     *
     * @return the new validity counted from when the request was sent, or empty if no longer held
     */
    Optional<Duration> extend(H handle, Duration leaseTime);

    /**
     * The most renewals {@link #extendAll} takes in one call. 1 (the default) means the backend cannot
     * batch: renewals then go one by one through {@link #extend}, each as its own task. A backend that
     * overrides {@link #extendAll} with one round trip for many grants returns its limit here (for
     * example a few hundred keys per Redis script).
     */
    default int maxRenewalBatch() {
        return 1;
    }

    /**
     * Extends several grants, in one round trip where the backend can (one script for many keys, one
     * keep-alive per session, one statement for many lease rows). Called by the runtime's renewal with
     * at most {@link #maxRenewalBatch()} extensions, each for a grant still held by this client.
     *
     * <p>Result {@code i} is exactly what {@link #extend} would have returned for extension {@code i}:
     * the new validity counted from when the request was sent, or empty when that grant is no longer
     * held, so loss is reported per lease. Throws {@link BackendUnavailableException} when the outcome
     * is unknown; the runtime then counts every renewal of the batch as failed and retries them while
     * their leases are valid (extensions are idempotent), so a batch must never report a grant it did
     * not check. By default: {@link #extend} for each, in order.
     *
     * @return one result per extension, in the same order
     */
    default List<Optional<Duration>> extendAll(List<Extension<H>> extensions) {
        List<Optional<Duration>> results = new ArrayList<>(extensions.size());
        for (Extension<H> extension : extensions) {
            results.add(extend(extension.handle(), extension.leaseTime()));
        }
        return results;
    }

    /**
     * Frees the lock if {@code handle}'s owner still holds it; never touches another holder's lock.
     *
     * @return true if it was held by this owner and is now free
     */
    boolean release(H handle);

    /**
     * Best-effort cleanup after a {@code tryLock} that failed with an unknown outcome: frees the lock
     * if {@code ownerToken} holds it. Must not throw. Kept for backends written before {@link
     * #abandon(AttemptContext)}; the default does nothing.
     */
    default void abandon(String name, String ownerToken) {}

    /**
     * Best-effort cleanup after an acquire whose attempts failed with an unknown outcome: frees the lock
     * if the attempt's owner token or the session it {@linkplain AttemptContext#attach attached} holds
     * it. Must not throw. Runs in the background on the runtime's renewal executor, so the failed
     * acquire does not wait for it. By default: {@link #abandon(String, String)}.
     */
    default void abandon(AttemptContext attempt) {
        abandon(attempt.name(), attempt.ownerToken());
    }

    /**
     * Called exactly once per granted {@code handle} when its lease has ended, however it ended
     * (released, lost, expired, its provider closed), after the last {@link #extend} or {@link #release}
     * on it has returned; the handle is never used again. Frees what the grant kept open: returns its
     * connection to the pool, closes its session. Must not throw. Does nothing by default.
     *
     * <p>When: at once after a release, or after a loss the backend reported (the grant's {@code
     * backendLoss}, an extend that found the lock gone). After a loss judged on the local clock
     * (validity ran out: {@code EXPIRED}, {@code RENEWAL_FAILED}, {@code MAX_HOLD_REACHED}), one lease
     * time later, or sooner when the holder releases the lost lease or the provider closes: until then
     * such a release still reaches {@link #release} with the handle, as a compare-and-delete that must
     * leave any new holder's lock alone. It runs on the runtime's renewal executor or the releasing
     * thread, and may run after {@link #close()} for a lease whose end did not finish within the
     * provider's close timeout.
     */
    default void dispose(H handle) {}

    /** A watch for release signals on {@code name}; by default, none (waiters poll). */
    default ReleaseWatch watch(String name) {
        return ReleaseWatch.polling();
    }

    /**
     * The watch of one waiter, {@code ownerToken}, on {@code name}; by default {@link #watch(String)}.
     * A backend that queues waiters ({@link io.lockstep.Capability#FAIR}, such as etcd or ZooKeeper)
     * overrides it: while this watch is open, {@link #tryLock} for {@code ownerToken} keeps the waiter's
     * place in the queue between attempts and {@link ReleaseWatch#await} waits for its predecessor only;
     * closing the watch without the lock having been granted withdraws the waiter from the queue at
     * once. A {@code tryLock} without an open watch (a caller that does not wait) leaves nothing queued.
     */
    default ReleaseWatch watch(String name, String ownerToken) {
        return watch(name);
    }

    /**
     * What the backend can tell about lock {@code name} now (see {@link LockProvider#inspect}); the name
     * is already validated. The default cannot tell. A backend that keeps the {@linkplain
     * AttemptContext#holder() holder} with the grant reports it in {@link io.lockstep.LockState#holder()}.
     * Thread-safe; reads only.
     *
     * @throws io.lockstep.BackendUnavailableException if the backend could not be reached
     */
    default Optional<io.lockstep.LockState> inspect(String name) {
        return Optional.empty();
    }

    /** A short description of where the backend is (host and port, never a password), for messages. */
    String describe();

    /** Closes connections; idempotent. */
    @Override
    void close();
}
