package io.lockstep;

import org.jspecify.annotations.Nullable;

/**
 * Thrown by {@link LockProvider#acquire} when another holder kept the lock for the whole wait time
 * (with a zero wait: at the one attempt). The message names the lock, the backend and the wait time.
 * Never retried by Lockstep: retrying is the caller's choice.
 */
public final class LockTimeoutException extends LockException {
    private static final long serialVersionUID = 1L;

    /** An exception with a message saying what happened, naming the lock or setting. */
    public LockTimeoutException(String message) {
        super(message);
    }

    /** An exception with a message and the underlying cause. */
    public LockTimeoutException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
