package io.lockstep;

import org.jspecify.annotations.Nullable;

/**
 * Thrown when work needed a lease that has been lost, for example by {@link Leadership} helpers; the
 * message names the lock and the {@link LossReason}. Never retried: the lock must be acquired anew.
 */
public final class LockLostException extends LockException {
    private static final long serialVersionUID = 1L;

    /** An exception with a message saying what happened, naming the lock or setting. */
    public LockLostException(String message) {
        super(message);
    }

    /** An exception with a message and the underlying cause. */
    public LockLostException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
