package io.lockstep.etcd.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Coarse timers for the end of held grants' validity. A task of its own on the runtime's scheduler
 * per grant cost about 120 bytes of heap per held lock, and rescheduling it on every renewal sifted the
 * scheduler's queue of every held lock's timer twice a renewal. Here the items due in the same
 * {@link #TICK_NANOS tick} share one scheduler task (an item costs one set entry), and a renewal that
 * moves an item's end later touches nothing: the tick that finds validity left times the item again.
 * A tick fires at its end, so an item is handed to the callback at most one tick after its time, never
 * before.
 *
 * <p>Thread-safe: {@link #add} and {@link #remove} may race with a tick firing; an item added to a tick
 * that is firing is either handed over by it or goes to a new task of its own tick.
 */
final class ExpiryTicks<T> {

    /** The width of a tick. */
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final ScheduledExecutorService scheduler;
    private final LongSupplier clock;
    private final Due<T> due;
    private final ConcurrentHashMap<Long, Set<T>> ticks = new ConcurrentHashMap<>();

    /**
     * @param clock monotonic nanoseconds, the clock the times given to {@link #add} are read on
     * @param due called with each item once its time has come, on the scheduler's thread
     */
    ExpiryTicks(ScheduledExecutorService scheduler, LongSupplier clock, Due<T> due) {
        this.scheduler = scheduler;
        this.clock = clock;
        this.due = due;
    }

    /**
     * Hands {@code item} to the callback at {@code at} (on {@code clock}) or up to one tick later, and
     * returns the tick's number, for {@link #remove}. Throws {@link RejectedExecutionException} when
     * the scheduler is shut down.
     */
    long add(T item, long at) {
        long tick = Math.floorDiv(at, TICK_NANOS) + 1;
        ticks.compute(tick, (t, items) -> {
            Set<T> set = items;
            if (set == null) {
                set = ConcurrentHashMap.newKeySet();
                long delay = t * TICK_NANOS - clock.getAsLong();
                scheduler.schedule(() -> fire(t), Math.max(0, delay), TimeUnit.NANOSECONDS);
            }
            set.add(item);
            return set;
        });
        return tick;
    }

    /** Forgets {@code item} in {@code tick} (as {@link #add} returned it); nothing if it is not there. */
    void remove(T item, long tick) {
        ticks.computeIfPresent(tick, (t, items) -> {
            items.remove(item);
            return items.isEmpty() ? null : items;
        });
    }

    /** How many items wait, over every tick (for tests). */
    int size() {
        return ticks.values().stream().mapToInt(Set::size).sum();
    }

    private void fire(long tick) {
        Set<T> items = ticks.remove(tick);
        if (items == null) {
            return;
        }
        for (T item : items) {
            try {
                due.expired(item, tick);
            } catch (RuntimeException e) {
                // One item's failure must not keep the tick's other items from their time.
            }
        }
    }

    /** What a tick does with each of its items. */
    @FunctionalInterface
    interface Due<T> {
        /** {@code item}'s time has come; {@code tick} is the tick that held it (as {@link #add} returned). */
        void expired(T item, long tick);
    }
}
