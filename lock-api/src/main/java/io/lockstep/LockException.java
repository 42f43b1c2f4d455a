package io.lockstep;

import org.jspecify.annotations.Nullable;

/**
 * The root of Lockstep's unchecked exceptions; never thrown for bad arguments (those are {@link
 * IllegalArgumentException}) or misuse ({@link IllegalStateException}, also thrown by a closed provider).
 *
 * <p>Thrown as itself (not a subclass) when a thread waiting in {@link LockProvider#acquire} or {@link
 * LockProvider#tryAcquire} is interrupted: the wait stops at once, nothing is acquired, the cause is the
 * {@link InterruptedException} and the thread's interrupt status is set again. An interrupt that arrives
 * during a round trip to the backend may instead surface as {@link BackendUnavailableException}, also
 * with the interrupt status set.
 */
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
