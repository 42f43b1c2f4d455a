/**
 * Lockstep for Spring Integration: {@link io.lockstep.spring.integration.LockstepLockRegistry} gives
 * {@code LockRegistry} users (aggregators, {@code LockRegistryLeaderInitiator}, plain {@code obtain(key)}
 * code) any Lockstep backend, with fencing tokens and loss signals.
 */
@NullMarked
package io.lockstep.spring.integration;

import org.jspecify.annotations.NullMarked;
