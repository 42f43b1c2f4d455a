package io.lockstep.spi;

import io.lockstep.LossReason;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * A lock granted by a {@link LockBackend}.
 *
 * @param handle what the backend needs to extend and release it (a key and token, a lease id, a
 *     connection)
 * @param fencingToken the fencing token, if the backend issues them
 * @param validity how long the grant lasts, counted from when the request was sent; {@link
 *     #UNBOUNDED} if it lasts until released or until {@code backendLoss} completes
 * @param backendLoss completed by the backend when it learns the lock is gone (session expired,
 *     connection lost); null if the backend has no such signal
 * @param <H> the backend's handle type
 */
public record Grant<H>(
        H handle, OptionalLong fencingToken, Duration validity, @Nullable CompletionStage<LossReason> backendLoss) {

    /** The validity of a grant that ends only when released or lost. */
    public static final Duration UNBOUNDED = ChronoUnit.FOREVER.getDuration();

    /** Checks the fields. */
    public Grant {
        Objects.requireNonNull(handle, "handle");
        Objects.requireNonNull(fencingToken, "fencingToken");
        Objects.requireNonNull(validity, "validity");
    }

    /** A grant valid for {@code validity}, with a fencing token and no loss signal. */
    public static <H> Grant<H> of(H handle, OptionalLong fencingToken, Duration validity) {
        return new Grant<>(handle, fencingToken, validity, null);
    }
}
