package io.lockstep;

import org.jspecify.annotations.Nullable;

/** The root of Lockstep's unchecked exceptions; never thrown for bad arguments (those are {@link IllegalArgumentException}) or misuse ({@link IllegalStateException}). */
public class LockException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** An exception with a message saying what happened, naming the lock or setting. */
    public LockException(String message) {
        super(message);
    }

    /** An exception with a message and the underlying cause. */
    public LockException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
