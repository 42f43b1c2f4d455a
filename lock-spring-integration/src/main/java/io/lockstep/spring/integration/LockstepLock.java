package io.lockstep.spring.integration;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockException;
import io.lockstep.LockProvider;
import io.lockstep.LossReason;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * A lock of a {@link LockstepLockRegistry}: a {@link java.util.concurrent.locks.Lock} owned by a thread, as
 * Spring's registries' locks are, backed by one Lockstep lease per hold.
 *
 * <ul>
 *   <li><b>Reentrant</b> for the owning thread: only the first hold takes a lease; the last {@code unlock()}
 *       releases it. Other threads of this process wait locally, then for the backend.
 *   <li>{@code tryLock(time, unit)} waits at most {@code time} in all (locally and for the backend); {@code
 *       lock()} waits without bound and ignores interrupts; {@code lockInterruptibly()} stops when interrupted.
 *   <li>{@code unlock()} by a thread that does not hold it throws {@link IllegalMonitorStateException}; the
 *       last {@code unlock()} of a hold whose lease was lost (expired, taken away, the provider closed) throws
 *       {@link ConcurrentModificationException}, as Spring's registries do, naming the {@link LossReason}.
 *   <li>A reentrant {@code tryLock} by the owner after its lease was lost returns false and ends the lost
 *       hold (so {@code LockRegistryLeaderInitiator} revokes leadership and competes again); the owner's next
 *       {@code unlock()} throws {@link ConcurrentModificationException}.
 *   <li>{@link #newCondition()} is not supported.
 * </ul>
 *
 * <p>The holder reads its lease (fencing token, remaining time, {@link Lease#lost()}) with {@link #lease()}.
 * A failure to reach the backend is a {@link CannotAcquireLockException} when locking, a {@link
 * DataAccessResourceFailureException} when unlocking (the lease then ends by its lease time). Thread-safe.
 */
public final class LockstepLock implements DistributedLock {

    /** The longest single backend wait of {@code lock()}, which waits without bound by repeating it. */
    private static final Duration WAIT_CHUNK = Duration.ofSeconds(30);

    private final String name;
    private final LockProvider provider;
    private final LockstepLockRegistryOptions options;
    private final ReentrantLock local = new ReentrantLock();

    private volatile @Nullable Lease lease; // written only by the thread that holds {@code local}
    private volatile @Nullable Thread lostHolder; // a thread whose hold ended with a lost lease
    private volatile long lastUsedMillis = System.currentTimeMillis();

    LockstepLock(String name, LockProvider provider, LockstepLockRegistryOptions options) {
        this.name = name;
        this.provider = provider;
        this.options = options;
    }

    /** The lock's key, which is its Lockstep lock name. */
    public String name() {
        return name;
    }

    /**
     * The lease behind the current thread's hold.
     *
     * @return the lease, or empty if the current thread does not hold this lock
     */
    public Optional<Lease> lease() {
        Lease current = lease;
        return local.isHeldByCurrentThread() && current != null ? Optional.of(current) : Optional.empty();
    }

    /** The fencing token of the current thread's hold; empty if it holds none or the backend has no fencing. */
    public OptionalLong fencingToken() {
        return lease().map(Lease::fencingToken).orElse(OptionalLong.empty());
    }

    /** Takes the lock with the registry's lease time, waiting without bound; interrupts are ignored. */
    @Override
    public void lock() {
        lock(options.leaseTime());
    }

    /** Takes the lock with a lease of {@code ttl}, waiting without bound; interrupts are ignored. */
    @Override
    public void lock(Duration ttl) {
        boolean interrupted = false;
        while (true) {
            try {
                if (acquire(Long.MAX_VALUE, ttl, false)) {
                    break;
                }
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        while (!acquire(Long.MAX_VALUE, options.leaseTime(), true)) {
            // a lost reentrant hold was ended: take a new one
        }
    }

    @Override
    public boolean tryLock() {
        try {
            return tryLock(Duration.ZERO, options.leaseTime());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return tryLock(Duration.of(Math.max(0, time), unit.toChronoUnit()), options.leaseTime());
    }

    /** Like {@link #tryLock(long, TimeUnit)}, with a lease of {@code ttl}. */
    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        if (waitTime.compareTo(LeaseOptions.MAX_DURATION) >= 0) {
            return acquire(Long.MAX_VALUE, ttl, true);
        }
        long wait = waitTime.isNegative() ? 0 : waitTime.toNanos();
        return acquire(System.nanoTime() + wait, ttl, true);
    }

    /**
     * Ends the current thread's hold: the last unlock releases the lease.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     * @throws ConcurrentModificationException if the hold's lease was lost before this unlock
     * @throws DataAccessResourceFailureException if the backend could not be reached; the lease ends by its
     *     lease time
     */
    @Override
    public void unlock() {
        if (!local.isHeldByCurrentThread()) {
            if (lostHolder == Thread.currentThread()) {
                lostHolder = null;
                throw lost(null);
            }
            throw new IllegalMonitorStateException("The current thread does not own lock '" + name + "'");
        }
        if (local.getHoldCount() > 1) {
            local.unlock();
            return;
        }
        Lease held = lease;
        lease = null;
        try {
            // A lease whose validity ran out is lost even if the backend still had its key: the hold was not
            // exclusive for its whole length. It is released all the same, so another holder need not wait.
            boolean heldToTheEnd = held != null && held.isValid();
            if (held == null || !release(held) || !heldToTheEnd) {
                throw lost(held);
            }
        } finally {
            local.unlock();
        }
    }

    /** Not supported, as in Spring's registries. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException(
                "Conditions are not supported by " + getClass().getSimpleName());
    }

    boolean isAcquiredInThisProcess() {
        return local.isLocked();
    }

    long lastUsedMillis() {
        return lastUsedMillis;
    }

    void renew(Duration ttl) {
        Lease held = lease;
        if (!local.isHeldByCurrentThread() || held == null) {
            throw new IllegalMonitorStateException("The current thread does not own lock '" + name + "'");
        }
        if (!held.extend(ttl)) {
            throw new IllegalStateException(
                    "Could not renew mutex at '" + name + "': its lease was lost (" + reasonOf(held) + ")");
        }
    }

    /**
     * One acquisition: a reentrant hold, or the local lock and then a lease, within {@code deadline}.
     *
     * @return false if the deadline passed, or if the owner's lease was found lost (the hold is then ended)
     */
    private boolean acquire(long deadline, Duration ttl, boolean interruptible) throws InterruptedException {
        if (local.isHeldByCurrentThread()) {
            Lease held = lease;
            if (held != null && held.isValid()) {
                local.lock();
                return true;
            }
            endLostHold(held);
            return false;
        }
        if (!lockLocally(deadline, interruptible)) {
            return false;
        }
        try {
            Optional<Lease> acquired = acquireLease(deadline, ttl);
            if (acquired.isEmpty()) {
                local.unlock();
                return false;
            }
            lease = acquired.get();
            lastUsedMillis = System.currentTimeMillis();
            if (lostHolder == Thread.currentThread()) {
                lostHolder = null;
            }
            return true;
        } catch (InterruptedException | RuntimeException e) {
            local.unlock();
            throw e;
        }
    }

    private boolean lockLocally(long deadline, boolean interruptible) throws InterruptedException {
        if (deadline == Long.MAX_VALUE) {
            if (interruptible) {
                local.lockInterruptibly();
            } else {
                local.lock();
            }
            return true;
        }
        return local.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    private Optional<Lease> acquireLease(long deadline, Duration ttl) throws InterruptedException {
        while (true) {
            long left = deadline == Long.MAX_VALUE ? WAIT_CHUNK.toNanos() : Math.max(0, deadline - System.nanoTime());
            Duration wait = Duration.ofNanos(Math.min(left, WAIT_CHUNK.toNanos()));
            Optional<Lease> acquired;
            try {
                acquired = provider.tryAcquire(name, options.leaseOptions(ttl).withWaitTime(wait));
            } catch (BackendUnavailableException e) {
                if (Thread.interrupted()) {
                    // An interrupt during a round trip surfaces this way, with the status set again.
                    InterruptedException interrupted = new InterruptedException("interrupted locking '" + name + "'");
                    interrupted.initCause(e);
                    throw interrupted;
                }
                throw new CannotAcquireLockException("Failed to lock mutex at '" + name + "'", e);
            } catch (LockException e) {
                if (e.getCause() instanceof InterruptedException interrupted) {
                    Thread.interrupted(); // Lockstep set it again; InterruptedException carries it now
                    throw interrupted;
                }
                throw e;
            }
            if (acquired.isPresent() || (deadline != Long.MAX_VALUE && deadline - System.nanoTime() <= 0)) {
                return acquired;
            }
        }
    }

    private void endLostHold(@Nullable Lease held) {
        lease = null;
        lostHolder = Thread.currentThread();
        while (local.isHeldByCurrentThread()) {
            local.unlock();
        }
        if (held != null) {
            try {
                held.close();
            } catch (LockException e) {
                // The lease is lost already; the backend frees what is left by its lease time.
            }
        }
    }

    private boolean release(Lease held) {
        boolean interrupted = Thread.interrupted(); // an interrupted holder must still reach the backend
        try {
            return held.release();
        } catch (IllegalStateException e) {
            return false; // released already: by closing the provider
        } catch (LockException e) {
            throw new DataAccessResourceFailureException("Failed to release mutex at '" + name + "'", e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private ConcurrentModificationException lost(@Nullable Lease held) {
        String reason = held == null ? "found lost by an earlier lock attempt" : reasonOf(held);
        // Spring's registries' message first, so code and alerts that match it keep working.
        return new ConcurrentModificationException("Lock was released in the store due to expiration. The"
                + " integrity of data protected by this lock may have been compromised. Lockstep lock '" + name
                + "' was lost before unlock: " + reason);
    }

    private static String reasonOf(Lease held) {
        LossReason reason = held.lost().toCompletableFuture().getNow(null);
        return reason == null ? "no longer valid" : reason.name();
    }

    @Override
    public String toString() {
        return "LockstepLock[" + name + ", " + (local.isLocked() ? "held in this process" : "not held here") + "]";
    }
}
