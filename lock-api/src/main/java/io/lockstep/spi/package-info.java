/**
 * For provider authors: a {@link io.lockstep.spi.LockProviderFactory} that {@link java.util.ServiceLoader}
 * finds, and a {@link io.lockstep.spi.LockBackend} of a few atomic operations that
 * {@link io.lockstep.spi.BackendLockProvider} turns into a full provider (waiting, leases, renewal,
 * loss, retry, metrics), so every backend behaves the same way.
 */
@NullMarked
package io.lockstep.spi;

import org.jspecify.annotations.NullMarked;
