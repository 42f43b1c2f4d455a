/**
 * Lockstep in Spring Boot: {@link io.lockstep.spring.boot.Locked @Locked} methods, {@link
 * io.lockstep.spring.boot.LeaderElection leadership as a lifecycle bean}, and the {@link
 * io.lockstep.spring.boot.ManagedLockProvider provider} the auto-configuration builds from {@code
 * lockstep.*} properties.
 */
@NullMarked
package io.lockstep.spring.boot;

import org.jspecify.annotations.NullMarked;
