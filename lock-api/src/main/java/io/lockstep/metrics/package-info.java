/** Counting lock events: {@link io.lockstep.metrics.LockMetrics} and its Micrometer binding. */
@NullMarked
package io.lockstep.metrics;

import org.jspecify.annotations.NullMarked;
