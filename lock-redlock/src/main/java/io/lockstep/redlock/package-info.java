/**
 * Redlock over N independent Redis nodes: {@link io.lockstep.redlock.RedlockLockProvider} (explicit
 * wiring) and {@link io.lockstep.redlock.RedlockLockProviderFactory} ({@code redlock://h1:p1,h2:p2,...}).
 * Fenced quorums, restart detection by {@code run_id}, spec-compatible keys with an empty prefix.
 */
@NullMarked
package io.lockstep.redlock;

import org.jspecify.annotations.NullMarked;
