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
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one {@link Lease} implementation: validity on the monotonic clock, renewal and expiry on the
 * runtime's shared scheduler, and {@link #lost()} completed exactly once.
 *
 * <p>State moves HELD → LOST or HELD/LOST → RELEASED and never back: a renewal that comes back after
 * the lease was marked lost does not revive it (its grant is freed instead).
 */
public final class DefaultLease<H> implements Lease {

    private static final Logger log = LoggerFactory.getLogger(DefaultLease.class);
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private enum State {
        HELD,
        LOST,
        RELEASED
    }

    private final LockBackend<H> backend;
    private final BackendCalls calls;
    private final LockRuntime runtime;
    private final String providerName;
    private final String name;
    private final String ownerToken;
    private final Grant<H> grant;
    private final LeaseOptions options;
    private final long acquiredAt;
    private final Consumer<DefaultLease<H>> onEnd;

    private final AtomicReference<State> state = new AtomicReference<>(State.HELD);
    private final CompletableFuture<LossReason> lost = new CompletableFuture<>();
    /** Serializes backend calls for this lease (renewal, extend, release); never held by the expiry check. */
    private final ReentrantLock io = new ReentrantLock();

    private volatile boolean unbounded;
    private volatile long deadline;
    private volatile boolean lastRenewalFailed;
    private volatile boolean renewalCapped;
    private volatile @Nullable ScheduledFuture<?> expiryTask;
    private volatile @Nullable ScheduledFuture<?> renewalTask;

    private DefaultLease(
            LockBackend<H> backend,
            BackendCalls calls,
            LockRuntime runtime,
            String name,
            String ownerToken,
            Grant<H> grant,
            LeaseOptions options,
            long sentAt,
            Consumer<DefaultLease<H>> onEnd) {
        this.backend = backend;
        this.onEnd = onEnd;
        this.calls = calls;
        this.runtime = runtime;
        this.providerName = backend.info().name();
        this.name = name;
        this.ownerToken = ownerToken;
        this.grant = grant;
        this.options = options;
        this.acquiredAt = sentAt;
        setValidity(sentAt, grant.validity());
    }

    /**
     * A held lease for a fresh grant, with its expiry (and renewal, if asked for) scheduled.
     *
     * @param sentAt the monotonic time just before the acquire request was sent
     * @param onEnd called once when the lease is released or lost (the provider forgets it)
     */
    public static <H> DefaultLease<H> start(
            LockBackend<H> backend,
            BackendCalls calls,
            LockRuntime runtime,
            String name,
            String ownerToken,
            Grant<H> grant,
            LeaseOptions options,
            long sentAt,
            Consumer<DefaultLease<H>> onEnd) {
        DefaultLease<H> lease =
                new DefaultLease<>(backend, calls, runtime, name, ownerToken, grant, options, sentAt, onEnd);
        if (grant.backendLoss() != null) {
            grant.backendLoss().thenAccept(lease::markLost);
        }
        lease.scheduleExpiry();
        if (options.autoRenew() && !lease.unbounded) {
            lease.scheduleRenewal(renewalPeriodNanos(options.leaseTime()));
        }
        return lease;
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
        return grant.fencingToken();
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
        if (state.get() != State.HELD) {
            return false;
        }
        if (!unbounded && deadline - now() <= 0) {
            markLost(expiryReason());
            return false;
        }
        return true;
    }

    @Override
    public boolean extend(Duration leaseTime) {
        LeaseOptions.requireValidLeaseTime(leaseTime);
        io.lock();
        try {
            if (state.get() == State.RELEASED) {
                throw new IllegalStateException("lease on lock '" + name + "' was released; it cannot be extended");
            }
            if (!isValid()) {
                return false;
            }
            return extendHeld(leaseTime);
        } finally {
            io.unlock();
        }
    }

    @Override
    public boolean release() {
        io.lock();
        try {
            State previous = state.getAndSet(State.RELEASED);
            if (previous == State.RELEASED) {
                throw new IllegalStateException("lease on lock '" + name + "' was already released");
            }
            cancelTasks();
            try {
                return calls.call(() -> backend.release(grant.handle()));
            } finally {
                runtime.metrics().released(providerName, Duration.ofNanos(now() - acquiredAt));
                lost.complete(LossReason.RELEASED);
                onEnd.accept(this);
            }
        } finally {
            io.unlock();
        }
    }

    @Override
    public void close() {
        if (state.get() != State.RELEASED) {
            try {
                release();
            } catch (IllegalStateException alreadyReleasedConcurrently) {
                // close() is idempotent: another thread released it first.
            }
        }
    }

    @Override
    public CompletionStage<LossReason> lost() {
        return lost.minimalCompletionStage();
    }

    @Override
    public String toString() {
        return "Lease[" + name + ", " + state.get() + ", fence=" + grant.fencingToken() + "]";
    }

    /** Called with {@link #io} held and the lease valid. */
    private boolean extendHeld(Duration leaseTime) {
        long sentAt = now();
        Optional<Duration> validity = calls.call(() -> backend.extend(grant.handle(), leaseTime));
        if (validity.isEmpty()) {
            markLost(LossReason.NOT_HELD);
            return false;
        }
        if (state.get() != State.HELD) {
            // Marked lost while the request was in flight: never revive; free what the backend just granted.
            backend.abandon(name, ownerToken);
            return false;
        }
        setValidity(sentAt, validity.get());
        scheduleExpiry();
        return true;
    }

    private void renew() {
        if (!io.tryLock()) {
            // A user extend or release is running; look again shortly.
            scheduleRenewal(MIN_RETRY_NANOS);
            return;
        }
        try {
            if (!isValid()) {
                return;
            }
            Duration leaseTime = options.leaseTime();
            if (options.maxHold().isPresent()) {
                long holdLeft = acquiredAt + options.maxHold().get().toNanos() - now();
                if (holdLeft < leaseTime.toNanos()) {
                    renewalCapped = true;
                    if (holdLeft < LeaseOptions.MIN_LEASE_TIME.toNanos()) {
                        return;
                    }
                    leaseTime = Duration.ofMillis(TimeUnit.NANOSECONDS.toMillis(holdLeft));
                }
            }
            try {
                if (extendHeld(leaseTime)) {
                    lastRenewalFailed = false;
                    runtime.metrics().renewed(providerName);
                    if (!renewalCapped) {
                        scheduleRenewal(renewalPeriodNanos(options.leaseTime()));
                    }
                }
            } catch (RuntimeException e) {
                lastRenewalFailed = true;
                runtime.metrics().renewalFailed(providerName);
                long left = deadline - now();
                log.warn(
                        "Renewing lock '{}' on {} failed; {} ms of validity left: {}",
                        name,
                        backend.describe(),
                        TimeUnit.NANOSECONDS.toMillis(left),
                        e.toString());
                if (left > 0) {
                    scheduleRenewal(
                            Math.max(MIN_RETRY_NANOS, Math.min(renewalPeriodNanos(options.leaseTime()), left / 2)));
                }
            }
        } finally {
            io.unlock();
        }
    }

    private void checkExpiry() {
        if (state.get() != State.HELD || unbounded) {
            return;
        }
        long left = deadline - now();
        if (left <= 0) {
            markLost(expiryReason());
        } else {
            schedule(this::checkExpiry, left, true);
        }
    }

    private LossReason expiryReason() {
        if (renewalCapped) {
            return LossReason.MAX_HOLD_REACHED;
        }
        // With auto-renewal on, running out means renewals failed or hung past the deadline.
        return options.autoRenew() || lastRenewalFailed ? LossReason.RENEWAL_FAILED : LossReason.EXPIRED;
    }

    private void markLost(LossReason reason) {
        if (reason == LossReason.RELEASED || !state.compareAndSet(State.HELD, State.LOST)) {
            return;
        }
        cancelTasks();
        runtime.metrics().lost(providerName, reason);
        log.warn("Lost lock '{}' on {}: {}", name, backend.describe(), reason);
        lost.complete(reason);
        onEnd.accept(this);
    }

    private void setValidity(long sentAt, Duration validity) {
        if (validity.compareTo(Grant.UNBOUNDED) >= 0 || validity.getSeconds() > Long.MAX_VALUE / 2_000_000_000L) {
            unbounded = true;
        } else {
            unbounded = false;
            deadline = sentAt + validity.toNanos();
        }
    }

    private void scheduleExpiry() {
        if (unbounded) {
            return;
        }
        schedule(this::checkExpiry, deadline - now(), true);
    }

    private void scheduleRenewal(long delayNanos) {
        // The scheduler only times the renewal; the blocking round trip runs on the renewal executor.
        schedule(
                () -> {
                    try {
                        runtime.renewalExecutor().execute(guarded(this::renew));
                    } catch (RejectedExecutionException e) {
                        log.error("Renewal executor for lock '{}' is shut down; the lease cannot be renewed", name, e);
                        markLost(LossReason.RENEWAL_FAILED);
                    }
                },
                delayNanos,
                false);
    }

    private void schedule(Runnable task, long delayNanos, boolean expiry) {
        if (state.get() != State.HELD) {
            return;
        }
        try {
            ScheduledFuture<?> future =
                    runtime.scheduler().schedule(guarded(task), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
            ScheduledFuture<?> previous;
            if (expiry) {
                previous = expiryTask;
                expiryTask = future;
            } else {
                previous = renewalTask;
                renewalTask = future;
            }
            if (previous != null && previous != future) {
                previous.cancel(false);
            }
        } catch (RejectedExecutionException e) {
            log.error("Lease scheduler for lock '{}' is shut down; the lease cannot be renewed or expired", name, e);
            markLost(LossReason.RENEWAL_FAILED);
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

    private void cancelTasks() {
        ScheduledFuture<?> renewal = renewalTask;
        ScheduledFuture<?> expiry = expiryTask;
        if (renewal != null) {
            renewal.cancel(false);
        }
        if (expiry != null) {
            expiry.cancel(false);
        }
    }

    private long now() {
        return runtime.clock().nanoTime();
    }

    private static long renewalPeriodNanos(Duration leaseTime) {
        return Math.max(1, leaseTime.toNanos() / 3);
    }
}
