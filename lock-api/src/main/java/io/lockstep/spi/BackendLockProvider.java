package io.lockstep.spi;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Capability;
import io.lockstep.Holder;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockException;
import io.lockstep.LockNames;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.LockTimeoutException;
import io.lockstep.MonotonicClock;
import io.lockstep.ProviderInfo;
import io.lockstep.internal.BackendCalls;
import io.lockstep.internal.BoundedLane;
import io.lockstep.internal.DefaultLease;
import io.lockstep.internal.OwnerTokens;
import io.lockstep.internal.RenewalBatcher;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A complete {@link LockProvider} over a {@link LockBackend}: validation, waiting (notified by the
 * backend's {@link ReleaseWatch}, polling at the backend's hint as a bounded fallback; waiters of one
 * name queue locally so that a release wakes one of them), retry of transient errors, leases with
 * batched renewal and loss, metrics. Every Lockstep backend is one of these, so
 * they all behave alike; a provider author writes the backend and gets the rest.
 *
 * <p>Thread-safe. Fails closed: when the backend cannot be reached, acquiring throws {@link
 * BackendUnavailableException} and any lock the failed attempt may have taken is abandoned.
 */
public final class BackendLockProvider<H> implements LockProvider {

    private static final Logger log = LoggerFactory.getLogger(BackendLockProvider.class);

    /** The longest a waiter sleeps without a signal before it asks the backend again. */
    static final Duration MAX_POLL = Duration.ofSeconds(1);

    /**
     * The least validity a grant must still have when it arrives to be handed out: a grant that took
     * longer than its lease time to come back (a leader election, a stalled connection) is worth
     * nothing, and would only hand the caller a lease that is already lost.
     */
    static final Duration MIN_VALIDITY_ON_ARRIVAL = Duration.ofMillis(1);

    private final LockBackend<H> backend;
    private final LockRuntime runtime;
    private final ProviderInfo info;
    private final BackendCalls calls;
    private final BoundedLane lane;
    private final RenewalBatcher<H> renewals;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Set<DefaultLease<H>> live = ConcurrentHashMap.newKeySet();
    /** What each lease calls when it ends: one object for all of them, not one per lease. */
    private final Consumer<DefaultLease<H>> forget = live::remove;
    /** This provider's waiters, queued per lock name (see {@link #acquireInLocalQueue}). */
    private final ConcurrentHashMap<String, LocalQueue> waiters = new ConcurrentHashMap<>();

    /** A provider over {@code backend}; closing the provider closes the backend. */
    public BackendLockProvider(LockBackend<H> backend, LockRuntime runtime) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.runtime = Objects.requireNonNull(runtime, "runtime");
        this.info = Objects.requireNonNull(backend.info(), "backend.info()");
        this.calls = new BackendCalls(info.name(), runtime);
        // This provider's share of the renewal executor: a slow backend holds at most this many threads.
        this.lane = new BoundedLane(runtime.renewalExecutor(), runtime.backendConcurrency());
        this.renewals = new RenewalBatcher<>(backend, calls, runtime, lane);
    }

    @Override
    public Optional<Lease> tryAcquire(String name, LeaseOptions options) {
        return acquireWithin(name, options);
    }

    @Override
    public Lease acquire(String name, LeaseOptions options) {
        return acquireWithin(name, options)
                .orElseThrow(() -> new LockTimeoutException("lock '" + name + "' on " + backend.describe()
                        + " was still held by another holder after waiting " + options.waitTime()));
    }

    @Override
    public ProviderInfo info() {
        return info;
    }

    @Override
    public Optional<io.lockstep.LockState> inspect(String name) {
        LockNames.requireValid(name);
        return backend.inspect(name);
    }

    /**
     * Ends every lease this provider still holds and closes the backend, within the runtime's {@link
     * LockRuntime#closeTimeout() close timeout} (5 s by default). Each lease's {@link Lease#lost()}
     * completes with RELEASED at once and its renewal stops; the releases then run in parallel on the
     * runtime's renewal executor (up to {@link LockRuntime#backendConcurrency()} at once), one attempt each, so that other processes can take over at once. A
     * lease whose release does not finish in time ends on the backend by its lease time. Returns
     * within the close timeout plus the time the backend's own {@code close()} takes.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        MonotonicClock clock = runtime.clock();
        long deadline = clock.nanoTime() + runtime.closeTimeout().toNanos();
        List<CompletableFuture<Void>> ends = new ArrayList<>();
        for (DefaultLease<H> lease : List.copyOf(live)) {
            ends.add(lease.endForClose());
        }
        try {
            CompletableFuture.allOf(ends.toArray(CompletableFuture[]::new))
                    .get(Math.max(0, deadline - clock.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            long unfinished = ends.stream().filter(end -> !end.isDone()).count();
            log.warn(
                    "Closing {}: {} of {} leases were not released within {}; they end by their lease time",
                    this,
                    unfinished,
                    ends.size(),
                    runtime.closeTimeout());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.warn("Closing {} was interrupted; leases not yet released end by their lease time", this);
        } catch (ExecutionException e) {
            log.warn("Closing {}: ending a lease failed", this, e.getCause());
        }
        backend.close();
    }

    /** How many leases have not ended yet (ended = released or lost, and disposed of). */
    int liveLeases() {
        return live.size();
    }

    @Override
    public String toString() {
        return info.name() + " provider on " + backend.describe();
    }

    private Optional<Lease> acquireWithin(String name, LeaseOptions options) {
        LockNames.requireValid(name);
        if (options == null) {
            throw new IllegalArgumentException("options must not be null");
        }
        if (closed.get()) {
            throw new IllegalStateException("provider " + this + " is closed");
        }
        MonotonicClock clock = runtime.clock();
        long start = clock.nanoTime();
        long waitNanos = options.waitTime().toNanos();
        // Transient failures are retried only within the wait time, or the retry window for short waits.
        long retryUntil = start + Math.max(waitNanos, runtime.retryWindow().toNanos());
        Holder holder = Holder.thisProcess(options.label().orElse(null));
        AttemptContext context = new AttemptContext(name, OwnerTokens.next(), options.leaseTime(), holder);
        boolean serverWait = waitNanos > 0 && backend.waitsOnServer();
        long maxServerWait = options.leaseTime().toNanos() / 2;
        runtime.metrics().acquireAttempted(info.name());
        if (waitNanos > 0 && !serverWait && !info.capabilities().contains(Capability.FAIR)) {
            return acquireInLocalQueue(context, options, start, retryUntil);
        }
        @Nullable ReleaseWatch watch = waitNanos > 0 && !serverWait ? backend.watch(name, context.ownerToken()) : null;
        try {
            while (true) {
                long sentAt = clock.nanoTime();
                if (serverWait) {
                    long left = Math.max(0, waitNanos - (sentAt - start));
                    context.maxWait(Duration.ofNanos(Math.min(left, maxServerWait)));
                }
                Attempt<H> attempt = attemptOnce(context, retryUntil);
                if (attempt.isGranted() && arrivedSpent(attempt.grant(), sentAt)) {
                    giveBackSpent(context, attempt.grant(), start, waitNanos);
                    // Ask again under a new owner token: the old one's entry is being deleted.
                    context = new AttemptContext(name, OwnerTokens.next(), options.leaseTime(), context.holder());
                    if (watch != null) {
                        watch.close();
                        watch = backend.watch(name, context.ownerToken());
                    }
                    continue;
                }
                if (attempt.isGranted()) {
                    runtime.metrics().acquired(info.name(), Duration.ofNanos(clock.nanoTime() - start));
                    return Optional.of(startLease(context, attempt.grant(), options, sentAt));
                }
                long left = waitNanos - (clock.nanoTime() - start);
                if (left <= 0 || (watch == null && !serverWait)) {
                    runtime.metrics().acquireTimedOut(info.name(), Duration.ofNanos(clock.nanoTime() - start));
                    return Optional.empty();
                }
                long pause = Math.max(
                        TimeUnit.MILLISECONDS.toNanos(1),
                        Math.min(left, Math.min(attempt.retryAfter().toNanos(), MAX_POLL.toNanos())));
                if (watch != null) {
                    watch.await(Duration.ofNanos(pause));
                } else if (clock.nanoTime() - sentAt < context.maxWait().toNanos()) {
                    // The server answered busy before its wait ran out: pause rather than spin.
                    TimeUnit.NANOSECONDS.sleep(pause);
                } else if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException("interrupted while waiting for lock '" + name + "'", e);
        } finally {
            if (watch != null) {
                watch.close();
            }
        }
    }

    /**
     * Waiting for a backend that neither queues waiters itself nor waits on the server: the waiters of
     * this provider on one name queue here, first come first served. Only the first (the head) asks
     * the backend, and only after a release signal (or at the polling bound); when it takes the lock or
     * leaves, the next becomes head. So a release costs one attempt in this process, not one per
     * waiting thread, and one watch per name serves every local waiter.
     */
    private Optional<Lease> acquireInLocalQueue(
            AttemptContext context, LeaseOptions options, long start, long retryUntil) {
        MonotonicClock clock = runtime.clock();
        long waitNanos = options.waitTime().toNanos();
        String name = context.name();
        LocalQueue queue = waiters.compute(name, (n, q) -> {
            LocalQueue joined = q == null ? new LocalQueue() : q;
            joined.members++;
            return joined;
        });
        Object me = new Object();
        boolean askNow = queue.join(me); // the first waiter asks at once; later ones wait their turn
        boolean granted = false;
        try {
            while (true) {
                if (!queue.awaitTurn(me, waitNanos - (clock.nanoTime() - start))) {
                    return timedOut(start);
                }
                String ownerToken = context.ownerToken();
                ReleaseWatch watch = queue.watch(() -> backend.watch(name, ownerToken));
                if (!askNow && !queue.takePendingSignal()) {
                    // Our turn came because the one before took the lock (so it is held) or left: wait for
                    // a release signal, or poll at the bound.
                    long left = waitNanos - (clock.nanoTime() - start);
                    if (left <= 0) {
                        return timedOut(start);
                    }
                    long pause = queue.pollHintNanos;
                    watch.await(Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(1), Math.min(left, pause))));
                }
                askNow = false;
                long sentAt = clock.nanoTime();
                Attempt<H> attempt = attemptOnce(context, retryUntil);
                if (attempt.isGranted() && arrivedSpent(attempt.grant(), sentAt)) {
                    giveBackSpent(context, attempt.grant(), start, waitNanos);
                    context = new AttemptContext(name, OwnerTokens.next(), options.leaseTime(), context.holder());
                    askNow = true;
                    continue;
                }
                if (attempt.isGranted()) {
                    granted = true;
                    runtime.metrics().acquired(info.name(), Duration.ofNanos(clock.nanoTime() - start));
                    return Optional.of(startLease(context, attempt.grant(), options, sentAt));
                }
                queue.pollHintNanos = Math.min(attempt.retryAfter().toNanos(), MAX_POLL.toNanos());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException("interrupted while waiting for lock '" + name + "'", e);
        } finally {
            queue.leave(me, granted);
            waiters.computeIfPresent(name, (n, q) -> --q.members == 0 ? null : q);
        }
    }

    private Optional<Lease> timedOut(long start) {
        runtime.metrics()
                .acquireTimedOut(info.name(), Duration.ofNanos(runtime.clock().nanoTime() - start));
        return Optional.empty();
    }

    /**
     * The local waiters on one name, in arrival order; the first is the head. Only heads touch the
     * watch, and there is one head at a time, handed over under {@link #lock}.
     */
    private static final class LocalQueue {
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition turn = lock.newCondition();
        private final ArrayDeque<Object> queue = new ArrayDeque<>();
        /** Waiters that joined and have not left, counted in {@link #waiters}'s compute. */
        int members;
        /** The head that left without the lock may have taken a signal meant for the next: ask at once. */
        private boolean pendingSignal; // guarded by lock

        private @Nullable ReleaseWatch watch; // guarded by lock; used by the head only

        /**
         * How long a head waits for a signal before asking again: the backend's last retry hint, kept
         * here so that a new head (whose predecessor just took the lock) polls at the backend's pace
         * rather than at {@link #MAX_POLL} when the backend sends no release signals. Written and read
         * by heads only, one at a time.
         */
        volatile long pollHintNanos = MAX_POLL.toNanos();

        /** Joins at the end; true if this waiter is the head at once. */
        boolean join(Object me) {
            lock.lock();
            try {
                queue.addLast(me);
                return queue.peekFirst() == me;
            } finally {
                lock.unlock();
            }
        }

        /** Waits until {@code me} is the head; false if {@code leftNanos} ran out first. */
        boolean awaitTurn(Object me, long leftNanos) throws InterruptedException {
            lock.lock();
            try {
                long left = leftNanos;
                while (queue.peekFirst() != me) {
                    if (left <= 0) {
                        return false;
                    }
                    left = turn.awaitNanos(left);
                }
                return true;
            } finally {
                lock.unlock();
            }
        }

        /** The head's watch, opened by the first head that needs it and kept while waiters remain. */
        ReleaseWatch watch(java.util.function.Supplier<ReleaseWatch> open) {
            lock.lock();
            try {
                if (watch != null) {
                    return watch;
                }
            } finally {
                lock.unlock();
            }
            ReleaseWatch opened = open.get(); // may wait briefly for a subscription: not under the lock
            lock.lock();
            try {
                watch = opened;
                return opened;
            } finally {
                lock.unlock();
            }
        }

        boolean takePendingSignal() {
            lock.lock();
            try {
                boolean pending = pendingSignal;
                pendingSignal = false;
                return pending;
            } finally {
                lock.unlock();
            }
        }

        /** Leaves the queue; a head hands over to the next (the last one closes the watch). */
        void leave(Object me, boolean granted) {
            ReleaseWatch toClose = null;
            lock.lock();
            try {
                boolean head = queue.peekFirst() == me;
                queue.remove(me);
                if (head) {
                    pendingSignal = !granted;
                    if (queue.isEmpty()) {
                        toClose = watch;
                        watch = null;
                        pendingSignal = false;
                    }
                    turn.signalAll();
                }
            } finally {
                lock.unlock();
            }
            if (toClose != null) {
                toClose.close();
            }
        }
    }

    private DefaultLease<H> startLease(AttemptContext context, Grant<H> grant, LeaseOptions options, long sentAt) {
        DefaultLease<H> lease =
                DefaultLease.create(renewals, context.name(), context.ownerToken(), grant, options, sentAt, forget);
        // Registered before its timers start, so a lease that has already expired is forgotten after it
        // was added, never before.
        live.add(lease);
        lease.start();
        if (closed.get()) {
            lease.close(); // closed while we were acquiring: hand it straight back
            throw new IllegalStateException("provider " + this + " was closed during acquire");
        }
        return lease;
    }

    /** Whether {@code grant}, requested at {@code sentAt}, has less than {@link #MIN_VALIDITY_ON_ARRIVAL} left. */
    private boolean arrivedSpent(Grant<H> grant, long sentAt) {
        Duration validity = grant.validity();
        if (validity.compareTo(Grant.UNBOUNDED) >= 0 || validity.getSeconds() > Long.MAX_VALUE / 2_000_000_000L) {
            return false;
        }
        long left = sentAt + validity.toNanos() - runtime.clock().nanoTime();
        return left < MIN_VALIDITY_ON_ARRIVAL.toNanos();
    }

    /**
     * Gives a grant that arrived with no validity left back to the backend, in the background (release,
     * then dispose); the caller treats it as not granted. Throws when the wait time is over, so that a
     * caller without wait time learns why it got no lock: the backend was too slow, not the lock held.
     */
    private void giveBackSpent(AttemptContext context, Grant<H> grant, long start, long waitNanos) {
        log.debug(
                "Lock '{}' on {} was granted with no validity left (lease time {}); giving it back",
                context.name(),
                backend.describe(),
                context.leaseTime());
        Runnable giveBack = () -> {
            try {
                backend.release(grant.handle());
            } catch (RuntimeException e) {
                log.debug("Giving back a spent grant of lock '{}' failed", context.name(), e);
            } finally {
                try {
                    backend.dispose(grant.handle());
                } catch (RuntimeException e) {
                    log.debug("Disposing of a spent grant of lock '{}' failed", context.name(), e);
                }
            }
        };
        try {
            lane.execute(giveBack);
        } catch (RejectedExecutionException e) {
            giveBack.run();
        }
        long elapsed = runtime.clock().nanoTime() - start;
        if (elapsed - waitNanos >= 0) {
            runtime.metrics().acquireTimedOut(info.name(), Duration.ofNanos(elapsed));
            throw new BackendUnavailableException(
                    "lock '" + context.name() + "' on " + backend.describe()
                            + " was granted with no validity left: the grant took longer than its lease time "
                            + context.leaseTime() + " to arrive; it was given back",
                    null,
                    true);
        }
    }

    private Attempt<H> attemptOnce(AttemptContext context, long retryUntil) {
        try {
            return calls.callUntil(() -> backend.tryLock(context), retryUntil);
        } catch (RuntimeException e) {
            // The outcome is unknown: the backend may have granted before the reply was lost. Fail
            // closed and leave nothing behind; the cleanup runs in the background so that a stalled
            // backend does not hold the caller past its bound.
            abandonInBackground(context);
            throw e;
        }
    }

    private void abandonInBackground(AttemptContext context) {
        Runnable abandon = () -> {
            try {
                backend.abandon(context);
            } catch (RuntimeException cleanupFailure) {
                log.debug("Abandoning a failed attempt on lock '{}' failed too", context.name(), cleanupFailure);
            }
        };
        try {
            lane.execute(abandon);
        } catch (RejectedExecutionException e) {
            abandon.run();
        }
    }
}
