/**
 * The reference provider: an in-memory lock store ({@link io.lockstep.tck.reference.InMemoryLockStore})
 * behind the SPI ({@link io.lockstep.tck.reference.InMemoryLockBackend}), served as a full provider
 * ({@link io.lockstep.tck.reference.InMemoryLockProvider}) and by URI ({@code mem://name}). It passes
 * the compatibility kit, so it tests the kit, and it shows a provider author the SPI at its smallest.
 */
@NullMarked
package io.lockstep.tck.reference;

import org.jspecify.annotations.NullMarked;
