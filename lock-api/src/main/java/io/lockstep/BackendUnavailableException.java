package io.lockstep;

import org.jspecify.annotations.Nullable;

/**
 * The backend could not be reached or did not answer in time. The message names the backend's
 * address (host and port, never a password). Lockstep fails closed: an acquire that throws this never
 * yields a lease, and whatever the failed attempt may have taken on the backend is given back (or ends
 * by its lease time if the backend cannot be reached to give it back).
 *
 * <p>{@link #isTransient()} tells whether retrying may help (a refused or dropped connection, a
 * timeout) or not (authentication failed, the server refuses the command). Which failures are retried:
 *
 * <ul>
 *   <li>Inside Lockstep, every backend call (try-lock, extend, renewal, release) that throws a
 *       <em>transient</em> {@code BackendUnavailableException} is retried up to {@link
 *       LockRuntime#retryAttempts()} times in all, with exponential backoff and jitter starting at {@link
 *       LockRuntime#retryBackoff()}; the last failure is what the caller sees. A failed automatic renewal
 *       is also tried again later while the lease has validity left.
 *   <li>A non-transient one, {@link LockTimeoutException}, {@link LockLostException}, {@link
 *       LockConfigurationException}, {@link IllegalArgumentException} and {@link IllegalStateException}
 *       are never retried.
 * </ul>
 *
 * <p>Backend calls are idempotent per owner token, so a retry after a lost reply finds its own grant
 * rather than a second one.
 */
public final class BackendUnavailableException extends LockException {
    private static final long serialVersionUID = 1L;

    private final boolean transientFailure;

    /** A transient failure: retrying may help. */
    public BackendUnavailableException(String message, @Nullable Throwable cause) {
        this(message, cause, true);
    }

    /** A failure that is transient or not. */
    public BackendUnavailableException(String message, @Nullable Throwable cause, boolean transientFailure) {
        super(message, cause);
        this.transientFailure = transientFailure;
    }

    /** Whether retrying the operation may succeed. */
    public boolean isTransient() {
        return transientFailure;
    }
}
