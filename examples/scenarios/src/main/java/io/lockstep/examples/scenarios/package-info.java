/**
 * The seed scenarios as runnable mains: {@link io.lockstep.examples.scenarios.CrashedHolder}, {@link
 * io.lockstep.examples.scenarios.StolenLockRelease}, {@link io.lockstep.examples.scenarios.GcPauseFencedAtTheDatabase}
 * and {@link io.lockstep.examples.scenarios.JobQueueLeaderHandover}. Each prints what happened and exits
 * 1 if its invariant broke.
 */
package io.lockstep.examples.scenarios;
