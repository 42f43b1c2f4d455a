package io.lockstep.internal;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockRuntime;
import io.lockstep.LossReason;
import io.lockstep.spi.Grant;
import io.lockstep.spi.LockBackend;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one {@link Lease} implementation: validity on the monotonic clock, renewal and expiry timed by
 * the runtime's shared scheduler, and {@link #lost()} completed exactly once on the callback executor.
 *
 * <p>State moves HELD → LOST or HELD/LOST → RELEASED and never back. Every change of state, and every
 * change of validity, happens under the state lock (the monitor of the lease's {@link LossSignal}), so
 * an extension that comes back while expiry fires either lands first (and the lease is still valid) or
 * finds the lease lost (and frees what it was just granted); it never leaves the lock extended under a
 * lost lease.
 *
 * <p>When the lease ends, however it ends, {@link #finish()} disposes of the backend's handle once,
 * after the last backend call on it, and only then tells the provider to forget the lease: at once
 * after a release or a loss the backend reported; one lease time after a loss judged on the local
 * clock (or at the holder's release or the provider's close, if sooner).
 *
 * <p>A provider may hold a hundred thousand leases, so a lease keeps only what it needs after the
 * acquire (the handle and the fencing token, not the grant), reaches the provider's parts through its
 * {@link RenewalBatcher}, and times itself with two {@link LeaseTimer}s made once, not a task per timing.
 */
public final class DefaultLease<H> implements Lease {

    private static final Logger log = LoggerFactory.getLogger(DefaultLease.class);
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private enum State {
        HELD,
        LOST,
        RELEASED
    }

    /** The provider's renewals; the backend, its calls and the runtime are reached through them. */
    private final RenewalBatcher<H> renewals;

    private final String name;
    private final String ownerToken;
    private final H handle;
    private final long fence;
    private final boolean fenced;
    private final @Nullable CompletionStage<LossReason> backendLoss;
    private final LeaseOptions options;
    private final long acquiredAt;
    private final Consumer<DefaultLease<H>> onEnd;
    /**
     * The {@link #lost()} signal. Its monitor is the state lock: it guards changes of {@link #state},
     * {@link #deadline} and {@link #unbounded} (and {@link #ended}), and is never held over a call.
     */
    private final LossSignal loss;

    private final LeaseTimer expiry = new ExpiryCheck<>(this);
    private final LeaseTimer renewal = new RenewalDue<>(this);
    /** Serializes backend calls for this lease (renewal, extend, release, dispose); never held by the timers. */
    private final ReentrantLock io = new ReentrantLock();

    private volatile State state = State.HELD;
    private volatile boolean unbounded;
    private volatile long deadline;
    private volatile boolean lastRenewalFailed;
    private volatile boolean renewalCapped;
    private boolean disposed; // guarded by io
    /** Made when first asked for (few leases are), completed once disposed of; guarded by the state lock. */
    private @Nullable CompletableFuture<Void> ended;

    private boolean finished; // guarded by the state lock

    private DefaultLease(
            RenewalBatcher<H> renewals,
            String name,
            String ownerToken,
            Grant<H> grant,
            LeaseOptions options,
            long sentAt,
            Consumer<DefaultLease<H>> onEnd) {
        this.renewals = renewals;
        this.onEnd = onEnd;
        this.name = name;
        this.ownerToken = ownerToken;
        this.handle = grant.handle();
        this.fenced = grant.fencingToken().isPresent();
        this.fence = fenced ? grant.fencingToken().getAsLong() : 0;
        this.backendLoss = grant.backendLoss();
        this.options = options;
        this.acquiredAt = sentAt;
        this.loss = new LossSignal(renewals.runtime().callbackExecutor());
        setValidity(sentAt, grant.validity());
    }

    /**
     * A held lease for a fresh grant, not yet timed: register it wherever it must be found (the
     * provider's live set), then call {@link #start()}, so that a lease that ends at once is forgotten
     * after it was registered, never before.
     *
     * @param renewals the provider's renewals (and its backend, calls, runtime, and lane on the renewal
     *     executor)
     * @param sentAt the monotonic time just before the acquire request was sent
     * @param onEnd called once when the lease has ended and its handle was disposed of
     */
    public static <H> DefaultLease<H> create(
            RenewalBatcher<H> renewals,
            String name,
            String ownerToken,
            Grant<H> grant,
            LeaseOptions options,
            long sentAt,
            Consumer<DefaultLease<H>> onEnd) {
        return new DefaultLease<>(renewals, name, ownerToken, grant, options, sentAt, onEnd);
    }

    /** Starts the expiry check, the renewal if asked for, and listening to the backend's loss signal. */
    public void start() {
        if (backendLoss != null) {
            backendLoss.thenAccept(this::markLost);
        }
        scheduleExpiry();
        if (options.autoRenew() && !unbounded) {
            scheduleRenewal(renewalDelayAfter(acquiredAt));
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String ownerToken() {
        return ownerToken;
    }

    @Override
    public OptionalLong fencingToken() {
        return fenced ? OptionalLong.of(fence) : OptionalLong.empty();
    }

    @Override
    public Duration remaining() {
        if (!isValid()) {
            return Duration.ZERO;
        }
        return unbounded ? Grant.UNBOUNDED : Duration.ofNanos(Math.max(0, deadline - now()));
    }

    @Override
    public boolean isValid() {
        if (state != State.HELD) {
            return false;
        }
        if (unbounded || deadline - now() > 0) {
            return true;
        }
        markExpired();
        return state == State.HELD;
    }

    @Override
    public boolean extend(Duration leaseTime) {
        LeaseOptions.requireValidLeaseTime(leaseTime);
        io.lock();
        try {
            if (state == State.RELEASED) {
                throw new IllegalStateException("lease on lock '" + name + "' was released; it cannot be extended");
            }
            if (!isValid()) {
                return false;
            }
            long sentAt = now();
            return applyExtension(sentAt, renewals.calls().call(() -> backend().extend(handle, leaseTime)));
        } finally {
            io.unlock();
        }
    }

    @Override
    public boolean release() {
        io.lock();
        try {
            synchronized (loss) {
                if (state == State.RELEASED) {
                    throw new IllegalStateException("lease on lock '" + name + "' was already released");
                }
                state = State.RELEASED;
            }
            try {
                // A lost lease whose handle is already disposed of has nothing left to free. A failed
                // release leaves the lock held until its lease time ends: keep asking for the retry window.
                long retryUntil = now() + runtime().retryWindow().toNanos();
                return !disposed
                        && renewals.calls().callPersistently(() -> backend().release(handle), retryUntil);
            } finally {
                // After the release, not before: the next holder's wait ends sooner. A timer that fires
                // meanwhile finds the lease released and does nothing.
                cancelTimers();
                runtime().metrics().released(renewals.providerName(), Duration.ofNanos(now() - acquiredAt));
                loss.fire(LossReason.RELEASED);
                finish();
            }
        } finally {
            io.unlock();
        }
    }

    @Override
    public void close() {
        if (state != State.RELEASED) {
            try {
                release();
            } catch (IllegalStateException alreadyReleasedConcurrently) {
                // close() is idempotent: another thread released it first.
            }
        }
    }

    @Override
    public CompletionStage<LossReason> lost() {
        return loss.stage();
    }

    @Override
    public String toString() {
        return "Lease[" + name + ", " + state + ", fence=" + fencingToken() + "]";
    }

    /**
     * Ends the lease because its provider is closing: {@link #lost()} completes with RELEASED at once,
     * and one release attempt (no retries), then the disposal, run on the renewal executor.
     *
     * @return completes when the lease has ended on this side (released or not, handle disposed of)
     */
    public CompletableFuture<Void> endForClose() {
        synchronized (loss) {
            if (state == State.RELEASED) {
                return ended(); // a caller's release() is finishing it
            }
            state = State.RELEASED;
        }
        cancelTimers();
        loss.fire(LossReason.RELEASED);
        CompletableFuture<Void> end = ended();
        LeaseTimer.inBackground(renewals.lane(), name, () -> {
            io.lock();
            try {
                if (!disposed) {
                    try {
                        backend().release(handle);
                    } catch (RuntimeException e) {
                        log.warn(
                                "Could not release lock '{}' while closing; it ends by its lease time: {}",
                                name,
                                e.toString());
                    }
                    runtime().metrics().released(renewals.providerName(), Duration.ofNanos(now() - acquiredAt));
                }
                finish();
            } finally {
                io.unlock();
            }
        });
        return end;
    }

    /** Completes when the lease has ended and its handle was disposed of. */
    public CompletableFuture<Void> ended() {
        synchronized (loss) {
            if (ended == null) {
                ended = finished ? CompletableFuture.completedFuture(null) : new CompletableFuture<>();
            }
            return ended;
        }
    }

    /** Applies an extension's outcome; called with {@link #io} held. */
    private boolean applyExtension(long sentAt, Optional<Duration> validity) {
        if (validity.isEmpty()) {
            markLost(LossReason.NOT_HELD);
            return false;
        }
        boolean applied;
        synchronized (loss) {
            applied = state == State.HELD;
            if (applied) {
                setValidity(sentAt, validity.get());
            }
        }
        if (!applied) {
            // Lost (or closed) while the request was in flight: never revive; free what was just granted.
            try {
                backend().release(handle);
            } catch (RuntimeException e) {
                log.debug("Freeing lock '{}' after a late extension failed; it ends by its lease time", name, e);
            }
            return false;
        }
        scheduleExpiry();
        return true;
    }

    /**
     * Starts a renewal on the renewal executor: takes {@link #io} and returns the lease time to ask
     * for, or returns null (without {@code io}) when there is nothing to renew now. A non-null return
     * must be followed by {@link #endRenewal} or {@link #renewalFailed}, on the same thread.
     */
    @Nullable
    Duration beginRenewal() {
        if (!io.tryLock()) {
            // A user extend or release is running; look again shortly.
            scheduleRenewal(MIN_RETRY_NANOS);
            return null;
        }
        boolean started = false;
        try {
            if (!isValid()) {
                return null;
            }
            Duration leaseTime = options.leaseTime();
            if (options.maxHold().isPresent()) {
                long holdLeft = acquiredAt + options.maxHold().get().toNanos() - now();
                if (holdLeft < leaseTime.toNanos()) {
                    renewalCapped = true;
                    if (holdLeft < LeaseOptions.MIN_LEASE_TIME.toNanos()) {
                        return null;
                    }
                    leaseTime = Duration.ofMillis(TimeUnit.NANOSECONDS.toMillis(holdLeft));
                }
            }
            started = true;
            return leaseTime;
        } finally {
            if (!started) {
                io.unlock();
            }
        }
    }

    /** The handle renewals extend. */
    H handle() {
        return handle;
    }

    /** The monotonic time validity ends at; a renewal is not retried past it. */
    long deadlineNanos() {
        return deadline;
    }

    /** Applies a renewal begun by {@link #beginRenewal}, sent at {@code sentAt}; gives up {@code io}. */
    void endRenewal(long sentAt, Optional<Duration> validity) {
        try {
            if (applyExtension(sentAt, validity)) {
                lastRenewalFailed = false;
                runtime().metrics().renewed(renewals.providerName());
                if (!renewalCapped) {
                    scheduleRenewal(renewalDelayAfter(sentAt));
                }
            }
        } finally {
            io.unlock();
        }
    }

    /** A renewal begun by {@link #beginRenewal} failed; retries while valid; gives up {@code io}. */
    void renewalFailed(RuntimeException e) {
        try {
            lastRenewalFailed = true;
            runtime().metrics().renewalFailed(renewals.providerName());
            long left = deadline - now();
            log.warn(
                    "Renewing lock '{}' on {} failed; {} ms of validity left: {}",
                    name,
                    backend().describe(),
                    TimeUnit.NANOSECONDS.toMillis(left),
                    e.toString());
            if (left > 0) {
                scheduleRenewal(Math.max(MIN_RETRY_NANOS, Math.min(renewalPeriodNanos(options.leaseTime()), left / 2)));
            }
        } finally {
            io.unlock();
        }
    }

    /** The scheduler or renewal executor is shut down: the lease cannot be kept. */
    void cannotRenew() {
        markLost(LossReason.RENEWAL_FAILED);
    }

    private void checkExpiry() {
        if (state != State.HELD || unbounded) {
            return;
        }
        long left = deadline - now();
        if (left <= 0) {
            markExpired(); // an extension that landed meanwhile wins, and has scheduled the next check
        } else {
            expiry.in(left);
        }
    }

    private LossReason expiryReason() {
        if (renewalCapped) {
            return LossReason.MAX_HOLD_REACHED;
        }
        // With auto-renewal on, running out means renewals failed or hung past the deadline.
        return options.autoRenew() || lastRenewalFailed ? LossReason.RENEWAL_FAILED : LossReason.EXPIRED;
    }

    /** Marks the lease lost if its deadline has passed, judged under the state lock. */
    private void markExpired() {
        LossReason reason;
        synchronized (loss) {
            if (state != State.HELD || unbounded || deadline - now() > 0) {
                return;
            }
            state = State.LOST;
            reason = expiryReason();
        }
        afterLoss(reason);
    }

    private void markLost(LossReason reason) {
        if (reason == LossReason.RELEASED) {
            return;
        }
        synchronized (loss) {
            if (state != State.HELD) {
                return;
            }
            state = State.LOST;
        }
        afterLoss(reason);
    }

    private void afterLoss(LossReason reason) {
        cancelTimers();
        runtime().metrics().lost(renewals.providerName(), reason);
        log.warn("Lost lock '{}' on {}: {}", name, backend().describe(), reason);
        loss.fire(reason);
        // The disposal waits for a renewal in flight (it holds io), so it never runs on the scheduler.
        Runnable disposal = () -> {
            io.lock();
            try {
                finish();
            } finally {
                io.unlock();
            }
        };
        if (reason == LossReason.EXPIRED
                || reason == LossReason.RENEWAL_FAILED
                || reason == LossReason.MAX_HOLD_REACHED) {
            // Judged on the local clock: the backend may still hold the lock for us a little longer, so
            // the handle stays usable for one lease time, for a holder that releases the lease it let
            // run out (its compare-and-delete frees the lock early). Then it is disposed of regardless.
            LeaseTimer.inBackgroundAfter(
                    runtime().scheduler(), renewals.lane(), options.leaseTime().toNanos(), name, disposal);
        } else {
            LeaseTimer.inBackground(renewals.lane(), name, disposal); // the backend took it away: nothing to release
        }
    }

    /** Disposes of the handle and lets the provider forget the lease, once; called with {@link #io} held. */
    private void finish() {
        if (disposed) {
            return;
        }
        disposed = true;
        try {
            backend().dispose(handle);
        } catch (RuntimeException e) {
            log.warn("Disposing of lock '{}' on {} failed: {}", name, backend().describe(), e.toString());
        }
        try {
            onEnd.accept(this);
        } finally {
            CompletableFuture<Void> waiting;
            synchronized (loss) {
                finished = true;
                waiting = ended;
            }
            if (waiting != null) {
                waiting.complete(null);
            }
        }
    }

    /** Called in the constructor or with the state lock held. */
    private void setValidity(long sentAt, Duration validity) {
        if (validity.compareTo(Grant.UNBOUNDED) >= 0 || validity.getSeconds() > Long.MAX_VALUE / 2_000_000_000L) {
            unbounded = true;
        } else {
            unbounded = false;
            deadline = sentAt + validity.toNanos();
        }
    }

    private void scheduleExpiry() {
        if (!unbounded) {
            expiry.in(deadline - now());
        }
    }

    private void scheduleRenewal(long delayNanos) {
        renewal.in(delayNanos);
    }

    /** Cancels both timers; a task already running checks the lease's state itself. */
    private void cancelTimers() {
        renewal.cancel();
        expiry.cancel();
    }

    private LockBackend<H> backend() {
        return renewals.backend();
    }

    private LockRuntime runtime() {
        return renewals.runtime();
    }

    private long now() {
        return runtime().clock().nanoTime();
    }

    /**
     * The delay until the next renewal of validity that began at {@code sentAt}: a third of the lease
     * time after the request was sent (validity counts from there, not from the reply, so a slow reply
     * must not push the renewal towards the deadline), less the batch window: a renewal may wait that
     * long for others and still goes out no later than without batching.
     */
    private long renewalDelayAfter(long sentAt) {
        long elapsed = Math.max(0, now() - sentAt);
        return Math.max(
                1, renewalPeriodNanos(options.leaseTime()) - renewals.windowNanos(options.leaseTime()) - elapsed);
    }

    private static long renewalPeriodNanos(Duration leaseTime) {
        return Math.max(1, leaseTime.toNanos() / 3);
    }

    /**
     * A timer of one lease: it lives while the lease is held, on its provider's wheel and scheduler.
     * Static, with the lease in a field of its own: an inner class and its subclass would each keep one.
     */
    private abstract static class Timer<H> extends LeaseTimer {
        final DefaultLease<H> lease;

        Timer(DefaultLease<H> lease) {
            this.lease = lease;
        }

        @Override
        boolean active() {
            return lease.state == State.HELD;
        }

        @Override
        void cannotRun() {
            lease.cannotRenew();
        }

        @Override
        String lockName() {
            return lease.name;
        }

        @Override
        ExpiryWheel wheel() {
            return lease.renewals.expiries();
        }

        @Override
        ScheduledExecutorService scheduler() {
            return lease.runtime().scheduler();
        }
    }

    /** The expiry check, on the scheduler. */
    private static final class ExpiryCheck<H> extends Timer<H> {
        ExpiryCheck(DefaultLease<H> lease) {
            super(lease);
        }

        @Override
        void fire() {
            lease.checkExpiry();
        }
    }

    /** The renewal's timer: hands the lease to the batcher, on the scheduler; never blocks. */
    private static final class RenewalDue<H> extends Timer<H> {
        RenewalDue(DefaultLease<H> lease) {
            super(lease);
        }

        @Override
        void fire() {
            lease.renewals.due(lease, lease.options.leaseTime());
        }
    }
}
