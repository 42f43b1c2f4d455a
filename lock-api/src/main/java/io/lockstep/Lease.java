package io.lockstep;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;

/**
 * A held lock: a single-use handle, not bound to a thread.
 *
 * <p>Validity is measured on the monotonic clock and counted from the moment the acquire (or
 * extend) request was sent, never from when the reply came, so a slow reply shortens it rather
 * than stretching it past what the backend granted.
 *
 * <p>No lease can protect a resource from a holder that pauses longer than its lease: a resource
 * that must never accept a stale write checks the {@link #fencingToken() fencing token}.
 *
 * <p>Thread-safe. {@link #release()} and {@link #extend(Duration)} may be called from any thread.
 */
public interface Lease extends AutoCloseable {

    /** The lock's name, as given to the provider. */
    String name();

    /** This holder's owner token: 128 random bits, hex encoded; unguessable by other clients. */
    String ownerToken();

    /**
     * A number that is strictly greater than every fencing token handed out earlier for the same
     * lock, when the provider claims {@link Capability#FENCING}; empty otherwise. Fencing tokens are
     * predictable and authorize nothing: a protected resource compares them, it never trusts them.
     */
    OptionalLong fencingToken();

    /** Time left before the lease ends unless renewed; zero once lost, expired or released. */
    Duration remaining();

    /** True while the lease is held and its validity has not run out. */
    boolean isValid();

    /**
     * Extends the lease to {@code leaseTime} from now, if this holder still holds it (an atomic
     * compare on the owner token).
     *
     * @return true if extended; false once the lease was lost or has expired
     * @throws IllegalStateException if the lease was released
     * @throws IllegalArgumentException if {@code leaseTime} is not a valid lease time (the message names
     *     "leaseTime" and the value)
     * @throws BackendUnavailableException if the backend could not be reached; the lease keeps its
     *     old validity
     */
    boolean extend(Duration leaseTime);

    /**
     * Releases the lock if this holder still holds it (an atomic compare-and-delete): a lease that
     * expired and was taken by someone else never touches the new holder's lock. A transient backend
     * failure is retried for the runtime's {@link LockRuntime#retryWindow() retry window} (at least its
     * {@link LockRuntime#retryAttempts() attempts}), longer than an acquire retries: a release that fails
     * keeps the lock from everyone until its lease time ends. So a release that fails returns after its
     * attempts or after the retry window and one more backend call, whichever is later.
     *
     * @return true if the lock was held by this lease and is now free; false if it had been lost
     * @throws IllegalStateException if the lease was already released (the message names the lock)
     * @throws BackendUnavailableException if the backend could not be reached; the lease is
     *     considered released locally and the lock ends on the backend by its lease time
     */
    boolean release();

    /** Releases the lease unless it already was released; idempotent, for try-with-resources. */
    @Override
    void close();

    /**
     * Completes once the lease ends, with why: renewal failed, the backend took it away, the session
     * expired, the validity ran out, or it was released. Completes at most once and never
     * exceptionally; the lock is never silently re-acquired after it completes.
     *
     * <p>Every provider, however it is built, completes this stage off its own timing threads: stages
     * attached before the lease ends never run on a thread that renews leases, checks expiry or reads
     * the backend, so a callback that blocks cannot stop another lease from being renewed (the kit's
     * {@code Renewal} group fails a provider that breaks this). Providers built on {@link
     * io.lockstep.spi.BackendLockProvider} get this for free: the stage completes on the runtime's
     * {@link LockRuntime#callbackExecutor() callback executor}, never on the thread that ended the lease
     * (after {@link #release()} it completes shortly after, not necessarily before {@code release()}
     * returns). A hand-written provider must hand the completion to an executor of its own. Callbacks
     * should not block: one that does delays other leases' callbacks, though never a renewal or an
     * expiry check.
     */
    CompletionStage<LossReason> lost();
}
