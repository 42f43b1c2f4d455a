package io.lockstep;

import org.jspecify.annotations.Nullable;

/**
 * The backend could not be reached or did not answer in time. The message names the backend's
 * address. Lockstep fails closed: an operation that throws this never acquired anything.
 *
 * <p>{@link #isTransient()} tells whether retrying may help (a refused or dropped connection, a
 * timeout) or not (authentication failed, the server refuses the command).
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
