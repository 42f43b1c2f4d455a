package io.lockstep.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * One renewal in a batch passed to {@link LockBackend#extendAll}: the grant's handle and the lease
 * time asked for. Immutable.
 *
 * @param handle the handle the grant returned
 * @param leaseTime the new lease time, as for {@link LockBackend#extend}
 * @param <H> the backend's handle type
 */
public record Extension<H>(H handle, Duration leaseTime) {

    /** Validates that both fields are present. */
    public Extension {
        Objects.requireNonNull(handle, "handle");
        Objects.requireNonNull(leaseTime, "leaseTime");
    }
}
