package io.lockstep.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of a lease's two timers (its expiry check or its renewal) and the task it runs: one object per
 * timer per lease, timed again and again, so timing a lease allocates nothing on the provider's {@link
 * ExpiryWheel} (where this object itself joins a tick's set) and one scheduler task for a near one. A
 * far-off timer joins a tick of the wheel; a near one is a task of its own on the runtime's shared
 * scheduler. The scheduler only times: nothing that blocks, and no user code, runs on it.
 *
 * <p>Each request to time it replaces the timer before, in the order of the requests: a request is
 * made and stored under this object's monitor (private to the lease; it is held over the wheel's and
 * the scheduler's non-blocking calls, never over the task). A request that lands in the tick the timer
 * is already in leaves it there once: the task runs once for both.
 *
 * <p>Subclasses say what the timer runs ({@link #fire}) and for which lease; every method but the
 * hooks is thread-safe.
 */
abstract class LeaseTimer implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(LeaseTimer.class);

    /** The current timer: a {@link ScheduledFuture} or the {@link ExpiryWheel.Tick} it joined; guarded by this. */
    private @Nullable Object current;

    /**
     * How many times it was timed; guarded by {@code this}. A scheduler that runs a task inside {@code
     * schedule} (as a test's may) lets the task ask for its successor inside the request that timed it,
     * on the same thread, under the same monitor: the number says which of the two is the later one, so
     * storing the earlier one never cancels the later.
     */
    private int requests;

    /**
     * The timer's hash in a tick's set ({@link ExpiryWheel}), drawn once. It joins that set inside {@link
     * #time}, holding its own monitor, and taking the identity hash of an object whose monitor is held
     * inflates the monitor on every acquire (seen in redlock-1's profile, issue 27). Equality stays identity.
     */
    private final int hash = ThreadLocalRandom.current().nextInt();

    /** What the timer runs when due; on the scheduler, so it must not block. */
    abstract void fire();

    /** Whether the lease still wants its timers. */
    abstract boolean active();

    /** The scheduler or renewal executor is shut down: the lease cannot be kept. */
    abstract void cannotRun();

    /** The lock's name, for log lines. */
    abstract String lockName();

    /** The provider's coarse timers. */
    abstract ExpiryWheel wheel();

    /** The runtime's shared scheduler. */
    abstract ScheduledExecutorService scheduler();

    /** Runs {@link #fire}; a failure is logged, so that one lease's does not stop a tick's other checks. */
    @Override
    public final void run() {
        try {
            fire();
        } catch (RuntimeException | Error e) {
            log.error("Lease task for lock '{}' failed", lockName(), e);
        }
    }

    /**
     * Runs {@link #fire} after {@code delayNanos}, replacing the timer before: when far off it joins a
     * tick of the wheel and may run up to two ticks early (a check finds validity left and times the rest
     * again; a renewal goes out early, never late), else it is timed precisely on the scheduler. Does
     * nothing once the lease no longer wants its timers.
     */
    final void in(long delayNanos) {
        RejectedExecutionException shutDown = time(delayNanos);
        if (shutDown != null) {
            // Outside the monitor: losing the lease cancels both of its timers.
            log.error(
                    "Lease scheduler for lock '{}' is shut down; the lease cannot be renewed or expired",
                    lockName(),
                    shutDown);
            cannotRun();
        }
    }

    /** Times and stores one request; what the scheduler threw if it is shut down. */
    private synchronized @Nullable RejectedExecutionException time(long delayNanos) {
        if (!active()) {
            return null;
        }
        int request = ++requests;
        Object timer;
        try {
            timer = delayNanos < ExpiryWheel.MIN_DELAY_NANOS ? null : wheel().add(delayNanos, this);
            if (timer == null) { // near, or its tick had run already
                timer = scheduler().schedule(this, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
            }
        } catch (RejectedExecutionException e) {
            return e;
        }
        Object stale;
        if (request != requests) {
            stale = timer; // a later request, made by the task itself inside the call above, stored its timer
        } else {
            stale = current;
            current = timer;
        }
        if (stale != current) { // in the same tick as the current one: this object is in its set once
            cancel(stale);
        }
        return null;
    }

    @Override
    public final int hashCode() {
        return hash;
    }

    /** Cancels the timer; a task already running checks the lease's state itself. */
    final synchronized void cancel() {
        cancel(current);
    }

    private void cancel(@Nullable Object timer) {
        if (timer instanceof ScheduledFuture<?> future) {
            future.cancel(false);
        } else if (timer instanceof ExpiryWheel.Tick tick) {
            ExpiryWheel.remove(tick, this);
        }
    }

    /** Runs blocking work no caller waits for on {@code background} (here, if it is shut down). */
    static void inBackground(Executor background, String lockName, Runnable task) {
        Runnable guarded = () -> {
            try {
                task.run();
            } catch (RuntimeException | Error e) {
                log.error("Lease task for lock '{}' failed", lockName, e);
            }
        };
        try {
            background.execute(guarded);
        } catch (RejectedExecutionException e) {
            guarded.run();
        }
    }

    /** Runs blocking work on {@code background} after {@code delayNanos}, whatever the lease's state. */
    static void inBackgroundAfter(
            ScheduledExecutorService scheduler, Executor background, long delayNanos, String lockName, Runnable task) {
        try {
            scheduler.schedule(
                    () -> inBackground(background, lockName, task), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            inBackground(background, lockName, task);
        }
    }
}
