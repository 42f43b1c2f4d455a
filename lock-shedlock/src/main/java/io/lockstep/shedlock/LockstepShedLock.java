package io.lockstep.shedlock;

import io.lockstep.Lease;
import io.lockstep.LossReason;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What a task that ShedLock runs under a {@link LockstepShedLockProvider} lock can see of its lock: the
 * Lockstep lease and its fencing token.
 *
 * <pre>{@code
 * @Scheduled(cron = "0 * * * * *")
 * @SchedulerLock(name = "invoices", lockAtMostFor = "10m")
 * void sendInvoices() {
 *     long fence = LockstepShedLock.currentFencingToken().orElseThrow();
 *     invoices.markSent(batch, fence); // the store refuses writes with an older fence
 * }
 * }</pre>
 *
 * <p>The lease is bound to the thread that took the lock (ShedLock runs the task there) from the moment
 * {@code lock} returns it until it is unlocked; nested locks stack, the innermost one wins. A lease that was
 * lost stays visible (so the task can see {@link Lease#isValid()} turn false); one released, by unlocking or
 * by closing the Lockstep provider, does not. Other threads see nothing: hand the lease to them explicitly.
 */
public final class LockstepShedLock {

    private static final ThreadLocal<Deque<LockstepSimpleLock>> HELD = ThreadLocal.withInitial(ArrayDeque::new);

    private LockstepShedLock() {}

    /**
     * The lease of the innermost lock this thread holds through a {@link LockstepShedLockProvider}.
     *
     * @return the lease (check {@link Lease#isValid()} or {@link Lease#lost()} to learn of a loss), or empty
     *     if this thread holds none
     */
    public static Optional<Lease> currentLease() {
        Deque<LockstepSimpleLock> held = HELD.get();
        for (Iterator<LockstepSimpleLock> it = held.iterator(); it.hasNext(); ) {
            LockstepSimpleLock lock = it.next();
            if (lock.isActive() && !released(lock.lease())) {
                return Optional.of(lock.lease());
            }
            it.remove(); // unlocked or extended on another thread, or its provider was closed
        }
        return Optional.empty();
    }

    /** The fencing token of {@link #currentLease()}; empty if there is none or the backend has no fencing. */
    public static OptionalLong currentFencingToken() {
        return currentLease().map(Lease::fencingToken).orElse(OptionalLong.empty());
    }

    private static boolean released(Lease lease) {
        return lease.lost().toCompletableFuture().getNow(null) == LossReason.RELEASED;
    }

    static void bind(LockstepSimpleLock lock) {
        HELD.get().push(lock);
    }

    static void replace(LockstepSimpleLock old, LockstepSimpleLock extended) {
        Deque<LockstepSimpleLock> held = HELD.get();
        if (held.remove(old)) {
            held.push(extended);
        }
    }

    static void unbind(LockstepSimpleLock lock) {
        Deque<LockstepSimpleLock> held = HELD.get();
        held.remove(lock);
        if (held.isEmpty()) {
            HELD.remove();
        }
    }
}
