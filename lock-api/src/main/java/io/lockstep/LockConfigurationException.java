package io.lockstep;

import org.jspecify.annotations.Nullable;

/**
 * A provider could not be built from its configuration: a bad or missing setting in the URI or {@link
 * LockConfig} (the message names it and its value, never a password), no factory for the URI's scheme
 * (the message names the artifact to add), or two factories for one scheme. Never retried.
 */
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
