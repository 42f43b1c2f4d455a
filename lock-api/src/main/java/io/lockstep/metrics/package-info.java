/**
 * Counting and observing lock events: {@link io.lockstep.metrics.LockMetrics} and its Micrometer binding,
 * and {@link io.lockstep.metrics.ObservedLockProvider} for Micrometer observations (traces).
 */
@NullMarked
package io.lockstep.metrics;

import org.jspecify.annotations.NullMarked;
