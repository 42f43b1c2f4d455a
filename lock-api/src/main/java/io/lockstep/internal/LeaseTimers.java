package io.lockstep.internal;

import io.lockstep.LockRuntime;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The two timers of one lease (its expiry check and its renewal): a far-off one joins a tick of the
 * provider's {@link ExpiryWheel}, a near one is a task of its own on the runtime's shared scheduler;
 * and the hand-off of blocking work to the provider's lane on the renewal executor. The scheduler only
 * times: nothing that blocks, and no user code, runs on it.
 */
final class LeaseTimers {

    private static final Logger log = LoggerFactory.getLogger(LeaseTimers.class);

    private final LockRuntime runtime;
    private final Executor background;
    private final ExpiryWheel wheel;
    private final String name;
    private final BooleanSupplier active;
    private final Runnable cannotRun;
    /** The current expiry check: a {@link ScheduledFuture} or an {@link ExpiryWheel.Entry}. */
    private volatile @Nullable Object expiryTask;

    /** The current renewal timer: a {@link ScheduledFuture} or an {@link ExpiryWheel.Entry}. */
    private volatile @Nullable Object renewalTask;

    /**
     * How many expiry checks and renewal timers were asked for; guarded by {@code this}. A timer may fire
     * and ask for its successor before the call that made it has stored it (the thread was descheduled
     * in between): the number says which of the two is the later one, so storing the earlier one never
     * cancels the later.
     */
    private long expiryRequests;

    private long renewalRequests;

    /**
     * @param background the provider's lane on the renewal executor
     * @param wheel the provider's coarse timers for far-off expiry checks
     * @param name the lock's name, for log lines
     * @param active whether the lease still wants its timers
     * @param cannotRun what to do when the scheduler or renewal executor is shut down (lose the lease)
     */
    LeaseTimers(
            LockRuntime runtime,
            Executor background,
            ExpiryWheel wheel,
            String name,
            BooleanSupplier active,
            Runnable cannotRun) {
        this.runtime = runtime;
        this.background = background;
        this.wheel = wheel;
        this.name = name;
        this.active = active;
        this.cannotRun = cannotRun;
    }

    /**
     * Runs {@code check} on the scheduler after {@code delayNanos}, replacing the previous expiry check.
     * A far-off check may run up to two {@link ExpiryWheel} ticks early; it then finds validity left
     * and times the rest with this method again.
     */
    void expiryIn(long delayNanos, Runnable check) {
        onWheelOrScheduler(delayNanos, check, true);
    }

    /**
     * Times {@code task} on the wheel when far off (it may run up to two ticks early), else precisely
     * on the scheduler; replaces the previous expiry check or renewal timer.
     */
    private void onWheelOrScheduler(long delayNanos, Runnable task, boolean expiry) {
        if (!active.getAsBoolean()) {
            return;
        }
        long request = nextRequest(expiry);
        if (delayNanos < ExpiryWheel.MIN_DELAY_NANOS) {
            schedule(task, delayNanos, expiry, request);
            return;
        }
        try {
            ExpiryWheel.Entry entry = wheel.add(delayNanos, guarded(task));
            if (entry == null) {
                schedule(task, delayNanos, expiry, request); // its tick had run already
                return;
            }
            replace(entry, expiry, request);
        } catch (RejectedExecutionException e) {
            log.error("Lease scheduler for lock '{}' is shut down; the lease cannot be renewed or expired", name, e);
            cannotRun.run();
        }
    }

    private synchronized long nextRequest(boolean expiry) {
        return expiry ? ++expiryRequests : ++renewalRequests;
    }

    /**
     * Makes {@code timer} the current one and cancels the one before, unless a later request stored its
     * timer first: then {@code timer} is the stale one (it may have fired already; its task checks the
     * lease's state itself) and is cancelled instead.
     */
    private void replace(Object timer, boolean expiry, long request) {
        Object stale;
        synchronized (this) {
            if (request != (expiry ? expiryRequests : renewalRequests)) {
                stale = timer;
            } else if (expiry) {
                stale = expiryTask;
                expiryTask = timer;
            } else {
                stale = renewalTask;
                renewalTask = timer;
            }
        }
        cancelTimer(stale);
    }

    private static void cancelTimer(@Nullable Object task) {
        if (task instanceof ScheduledFuture<?> future) {
            future.cancel(false);
        } else if (task instanceof ExpiryWheel.Entry entry) {
            ExpiryWheel.remove(entry);
        }
    }

    /**
     * Runs {@code due} on the scheduler after {@code delayNanos}, or up to two {@link ExpiryWheel}
     * ticks sooner when far off (a renewal may go out early, never late); it must not block (it hands
     * the renewal to the provider's {@link RenewalBatcher}). Replaces the previous renewal timer.
     */
    void renewalIn(long delayNanos, Runnable due) {
        onWheelOrScheduler(delayNanos, due, false);
    }

    /** Runs blocking work no caller waits for on the renewal executor (here, if it is shut down). */
    void inBackground(Runnable task) {
        try {
            background.execute(guarded(task));
        } catch (RejectedExecutionException e) {
            guarded(task).run();
        }
    }

    /** Runs blocking work on the renewal executor after {@code delayNanos}, whatever the lease's state. */
    void inBackgroundAfter(long delayNanos, Runnable task) {
        try {
            runtime.scheduler().schedule(() -> inBackground(task), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            inBackground(task);
        }
    }

    /** Cancels both timers; a task already running checks the lease's state itself. */
    void cancel() {
        cancelTimer(renewalTask);
        cancelTimer(expiryTask);
    }

    private void schedule(Runnable task, long delayNanos, boolean expiry, long request) {
        try {
            ScheduledFuture<?> future =
                    runtime.scheduler().schedule(guarded(task), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
            replace(future, expiry, request);
        } catch (RejectedExecutionException e) {
            log.error("Lease scheduler for lock '{}' is shut down; the lease cannot be renewed or expired", name, e);
            cannotRun.run();
        }
    }

    private Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException | Error e) {
                log.error("Lease task for lock '{}' failed", name, e);
            }
        };
    }
}
