package io.lockstep;

import org.jspecify.annotations.Nullable;

/** A provider could not be built */
public final class LockConfigurationException extends LockException {
    private static final long serialVersionUID = 1L;

    /** An exception with a message saying what happened, naming the lock or setting. */
    public LockConfigurationException(String message) {
        super(message);
    }

    /** An exception with a message and the underlying cause. */
    public LockConfigurationException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
