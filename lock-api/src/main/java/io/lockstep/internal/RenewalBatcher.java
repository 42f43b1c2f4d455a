package io.lockstep.internal;

import io.lockstep.LockRuntime;
import io.lockstep.spi.Extension;
import io.lockstep.spi.LockBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The renewals of one provider's leases: due renewals wait up to the runtime's {@link
 * LockRuntime#renewalBatchWindow() batch window} (at most a tenth of their lease time) for others, then
 * go to the backend as batches of up to {@link LockBackend#maxRenewalBatch()} through {@link
 * LockBackend#extendAll}, each batch one task on the provider's {@link BoundedLane}. A backend that
 * cannot batch gets one task per renewal at once, as before. Each lease applies its own result, so a
 * batch reports loss per lease. Thread-safe; {@link #due} never blocks (it runs on the scheduler).
 */
public final class RenewalBatcher<H> {

    private static final Logger log = LoggerFactory.getLogger(RenewalBatcher.class);

    private final LockBackend<H> backend;
    private final String providerName;
    private final BackendCalls calls;
    private final LockRuntime runtime;
    private final Executor lane;
    private final int maxBatch;
    private final ExpiryWheel expiries;
    private final Object lock = new Object();
    private List<DefaultLease<H>> pending = new ArrayList<>(); // guarded by lock
    private @Nullable ScheduledFuture<?> flushTask; // guarded by lock
    private long flushAt; // guarded by lock

    /** Renewals on {@code backend}, run on {@code lane}. */
    public RenewalBatcher(LockBackend<H> backend, BackendCalls calls, LockRuntime runtime, Executor lane) {
        this.backend = backend;
        this.providerName = backend.info().name();
        this.calls = calls;
        this.runtime = runtime;
        this.lane = lane;
        this.maxBatch = Math.max(1, backend.maxRenewalBatch());
        this.expiries = new ExpiryWheel(runtime);
    }

    /** The backend; its leases reach it, and the rest of the provider's parts, through here. */
    LockBackend<H> backend() {
        return backend;
    }

    /** The backend's name, for metrics. */
    String providerName() {
        return providerName;
    }

    /** How the provider calls its backend (retries). */
    BackendCalls calls() {
        return calls;
    }

    /** The provider's runtime. */
    LockRuntime runtime() {
        return runtime;
    }

    /** The provider's coarse timers for its leases' far-off expiry checks. */
    ExpiryWheel expiries() {
        return expiries;
    }

    /** The executor this provider's background round trips run on. */
    Executor lane() {
        return lane;
    }

    /**
     * How long a renewal of a lease of {@code leaseTime} may wait for others once due: the runtime's
     * window, at most a tenth of the lease time; 0 when the backend does not batch. Leases schedule
     * their renewals this much earlier, so batching never makes a renewal later.
     */
    long windowNanos(Duration leaseTime) {
        return maxBatch == 1 ? 0 : Math.min(runtime.renewalBatchWindow().toNanos(), leaseTime.toNanos() / 10);
    }

    /**
     * Called on the scheduler when {@code lease}'s renewal is due; the lease renews within {@link
     * #windowNanos} from now.
     */
    void due(DefaultLease<H> lease, Duration leaseTime) {
        if (maxBatch == 1) {
            dispatch(List.of(lease));
            return;
        }
        long window = windowNanos(leaseTime);
        List<DefaultLease<H>> now = null;
        synchronized (lock) {
            pending.add(lease);
            long at = runtime.clock().nanoTime() + window;
            if (window <= 0 || pending.size() >= maxBatch) {
                now = takePending();
            } else if (flushTask == null || at - flushAt < 0) {
                if (flushTask != null) {
                    flushTask.cancel(false);
                }
                try {
                    flushAt = at;
                    flushTask = runtime.scheduler().schedule(this::flush, window, TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException e) {
                    now = takePending();
                }
            }
        }
        if (now != null) {
            dispatch(now);
        }
    }

    private void flush() {
        List<DefaultLease<H>> now;
        synchronized (lock) {
            flushTask = null;
            now = takePending();
        }
        dispatch(now);
    }

    private List<DefaultLease<H>> takePending() {
        List<DefaultLease<H>> taken = pending;
        pending = new ArrayList<>();
        if (flushTask != null) {
            flushTask.cancel(false);
            flushTask = null;
        }
        return taken;
    }

    private void dispatch(List<DefaultLease<H>> leases) {
        for (int from = 0; from < leases.size(); from += maxBatch) {
            List<DefaultLease<H>> batch = leases.subList(from, Math.min(leases.size(), from + maxBatch));
            try {
                lane.execute(() -> renew(batch));
            } catch (RejectedExecutionException e) {
                log.error("Renewal executor is shut down; {} leases cannot be renewed", batch.size(), e);
                for (DefaultLease<H> lease : batch) {
                    lease.cannotRenew();
                }
            }
        }
    }

    /** Runs on the lane: one round trip for the whole batch. */
    private void renew(List<DefaultLease<H>> batch) {
        List<DefaultLease<H>> started = new ArrayList<>(batch.size());
        List<Extension<H>> extensions = new ArrayList<>(batch.size());
        long retryUntil = Long.MAX_VALUE;
        boolean first = true;
        try {
            for (DefaultLease<H> lease : batch) {
                Duration leaseTime = lease.beginRenewal();
                if (leaseTime != null) {
                    started.add(lease);
                    extensions.add(new Extension<>(lease.handle(), leaseTime));
                    long deadline = lease.deadlineNanos();
                    // A renewal retried past a lease's validity could not save it: stop at the earliest.
                    if (first || deadline - retryUntil < 0) {
                        retryUntil = deadline;
                        first = false;
                    }
                }
            }
        } catch (RuntimeException | Error e) {
            for (DefaultLease<H> lease : started) {
                lease.renewalFailed(new IllegalStateException("renewal batch could not start", e));
            }
            throw e;
        }
        if (started.isEmpty()) {
            return;
        }
        long sentAt = runtime.clock().nanoTime();
        List<Optional<Duration>> results;
        try {
            results = started.size() == 1
                    ? List.of(calls.callUntil(
                            () -> backend.extend(
                                    extensions.get(0).handle(),
                                    extensions.get(0).leaseTime()),
                            retryUntil))
                    : calls.callUntil(() -> backend.extendAll(extensions), retryUntil);
            if (results.size() != started.size()) {
                throw new IllegalStateException(backend.getClass().getName() + ".extendAll returned " + results.size()
                        + " results for " + started.size() + " extensions");
            }
        } catch (RuntimeException e) {
            for (DefaultLease<H> lease : started) {
                lease.renewalFailed(e);
            }
            return;
        }
        for (int i = 0; i < started.size(); i++) {
            try {
                started.get(i).endRenewal(sentAt, results.get(i));
            } catch (RuntimeException e) {
                log.error(
                        "Applying a renewal of lock '{}' failed", started.get(i).name(), e);
            }
        }
    }
}
