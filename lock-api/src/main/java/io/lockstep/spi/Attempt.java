package io.lockstep.spi;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The outcome of one {@link LockBackend#tryLock}: granted, or held by someone else with a hint of
 * when to look again.
 *
 * @param <H> the backend's handle type
 */
public final class Attempt<H> {

    private final @Nullable Grant<H> grant;
    private final Duration retryAfter;

    private Attempt(@Nullable Grant<H> grant, Duration retryAfter) {
        this.grant = grant;
        this.retryAfter = retryAfter;
    }

    /** The lock was granted. */
    public static <H> Attempt<H> granted(Grant<H> grant) {
        return new Attempt<>(Objects.requireNonNull(grant, "grant"), Duration.ZERO);
    }

    /**
     * Someone else holds the lock; try again after {@code retryAfter} at the latest (for example the
     * holder's remaining TTL) even if no release is signalled.
     */
    public static <H> Attempt<H> busy(Duration retryAfter) {
        Objects.requireNonNull(retryAfter, "retryAfter");
        return new Attempt<>(null, retryAfter.isNegative() ? Duration.ZERO : retryAfter);
    }

    /** Whether the lock was granted. */
    public boolean isGranted() {
        return grant != null;
    }

    /**
     * The grant.
     *
     * @throws IllegalStateException if the lock was not granted
     */
    public Grant<H> grant() {
        if (grant == null) {
            throw new IllegalStateException("not granted");
        }
        return grant;
    }

    /** When to try again at the latest if nothing signals a release; zero when granted. */
    public Duration retryAfter() {
        return retryAfter;
    }
}
