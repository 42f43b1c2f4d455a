/**
 * Lockstep for ShedLock: {@link io.lockstep.shedlock.LockstepShedLockProvider} runs {@code @SchedulerLock}
 * tasks on any Lockstep backend, with fencing tokens ({@link io.lockstep.shedlock.LockstepShedLock}) and an
 * optional keep-alive lease ({@link io.lockstep.shedlock.LockstepShedLockOptions}).
 */
@NullMarked
package io.lockstep.shedlock;

import org.jspecify.annotations.NullMarked;
