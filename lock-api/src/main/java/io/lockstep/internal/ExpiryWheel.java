package io.lockstep.internal;

import io.lockstep.LockRuntime;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Coarse timers for far-off expiry checks of one provider's leases. Most leases are released long
 * before they expire, so a timer per lease on the shared {@code ScheduledThreadPoolExecutor} costs its
 * queue's lock twice per acquire + release, and, when the new timer is the earliest, a wake-up of the
 * scheduler thread. Here checks due in the same {@link #TICK_NANOS tick} share one scheduler task; a
 * lease joins and leaves its tick's set without touching the scheduler. A tick fires up to two ticks
 * <em>early</em>, never late: its checks see validity left and time their last stretch precisely, so a
 * lease is judged expired exactly when it was before.
 *
 * <p>Far-off renewals are timed here too: with thousands of auto-renewed leases, a scheduler task per
 * lease per round cost a sift through the scheduler's heap of every lease's timer twice a round; a
 * renewal that goes out up to two ticks early is still never later than its time.
 *
 * <p>Thread-safe. The tick's task runs the checks on the scheduler thread, as a per-lease timer did.
 */
final class ExpiryWheel {

    /** The width of a tick. */
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    /** Checks due sooner than this are timed one by one, precisely. */
    static final long MIN_DELAY_NANOS = 4 * TICK_NANOS;

    private final LockRuntime runtime;
    private final ConcurrentHashMap<Long, Tick> ticks = new ConcurrentHashMap<>();

    ExpiryWheel(LockRuntime runtime) {
        this.runtime = runtime;
    }

    /**
     * Runs {@code check} (which must not block) on the scheduler at most two ticks before {@code
     * delayNanos} from now (which must be at least {@link #MIN_DELAY_NANOS}); returns the tick it
     * joined, to {@link #remove} it from, or null if its tick had already run, in which case the caller
     * times the check itself. A check that is in the tick's set already stays in it once: adding it
     * twice to one tick runs it once, and one {@link #remove} takes it out.
     *
     * @throws RejectedExecutionException if the scheduler is shut down
     */
    @Nullable
    Tick add(long delayNanos, Runnable check) {
        long now = runtime.clock().nanoTime();
        long index = Math.floorDiv(now + delayNanos, TICK_NANOS) - 1;
        Tick tick = ticks.get(index);
        Tick created = null;
        if (tick == null) {
            created = new Tick(index);
            Tick raced = ticks.putIfAbsent(index, created);
            tick = raced == null ? created : raced;
        }
        tick.checks.add(check);
        if (tick == created) {
            try {
                // Scheduled outside the map's update, and after the first check joined.
                runtime.scheduler()
                        .schedule(created::fire, Math.max(0, index * TICK_NANOS - now), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                ticks.remove(index, created);
                throw e;
            }
        }
        if (tick.fired && tick.checks.remove(check)) {
            return null; // the tick ran before the check joined it
        }
        return tick;
    }

    /** Forgets {@code check} in {@code tick} if the tick has not run it yet. */
    static void remove(Tick tick, Runnable check) {
        tick.checks.remove(check);
    }

    /** The checks due in one tick and the one scheduler task that runs them. */
    final class Tick {
        final long index;
        final Set<Runnable> checks = ConcurrentHashMap.newKeySet();
        volatile boolean fired;

        Tick(long index) {
            this.index = index;
        }

        private void fire() {
            fired = true;
            ticks.remove(index, this);
            for (Runnable check : checks) {
                if (checks.remove(check)) {
                    check.run(); // guarded by the caller: one failure does not stop the rest
                }
            }
        }
    }
}
