package io.lockstep;

import io.lockstep.metrics.LockMetrics;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * What providers share in a process: the monotonic clock, the one scheduler that renews and expires
 * every lease (no thread per lease), metrics, and the retry policy for transient backend errors.
 *
 * <p>{@link #defaults()} is what {@link Locks#open(String)} uses. Immutable and thread-safe.
 */
public final class LockRuntime {

    private static final class SharedScheduler {
        // Created on first use; daemon threads so an application that forgets to close exits.
        static final ScheduledExecutorService INSTANCE = newScheduler(2);
    }

    private static final class SharedRenewalExecutor {
        // Renewal round trips block; they run here so a stalled backend never delays the scheduler's
        // expiry checks (which decide when lost() completes). Idle threads end after a minute.
        static final ExecutorService INSTANCE = newRenewalExecutor();
    }

    private final MonotonicClock clock;
    private final ScheduledExecutorService scheduler;
    private final Executor renewalExecutor;
    private final LockMetrics metrics;
    private final int retryAttempts;
    private final Duration retryBackoff;

    private LockRuntime(Builder b) {
        this.clock = b.clock;
        this.scheduler = b.scheduler == null ? SharedScheduler.INSTANCE : b.scheduler;
        this.renewalExecutor = b.renewalExecutor == null ? SharedRenewalExecutor.INSTANCE : b.renewalExecutor;
        this.metrics = b.metrics;
        this.retryAttempts = b.retryAttempts;
        this.retryBackoff = b.retryBackoff;
    }

    /** The system clock, the shared scheduler, no metrics, three attempts with 20 ms backoff and jitter. */
    public static LockRuntime defaults() {
        return builder().build();
    }

    /** A builder starting from the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A scheduler for leases: {@code threads} daemon threads, cancelled tasks removed at once. The
     * threads only time renewals and expiry checks; one is enough for thousands of leases.
     */
    public static ScheduledExecutorService newScheduler(int threads) {
        AtomicInteger counter = new AtomicInteger();
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(threads, runnable -> {
            Thread thread = new Thread(runnable, "lockstep-lease-" + counter.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    private static ExecutorService newRenewalExecutor() {
        AtomicInteger counter = new AtomicInteger();
        return Executors.newCachedThreadPool(runnable -> {
            Thread thread = new Thread(runnable, "lockstep-renewal-" + counter.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Where renewal round trips run (they block); the scheduler only times them. */
    public Executor renewalExecutor() {
        return renewalExecutor;
    }

    /** The clock lease validity is measured on. */
    public MonotonicClock clock() {
        return clock;
    }

    /** The scheduler that renews and expires leases. */
    public ScheduledExecutorService scheduler() {
        return scheduler;
    }

    /** Where lock events are counted. */
    public LockMetrics metrics() {
        return metrics;
    }

    /** How many times a backend call is tried when it fails transiently (1 = no retry). */
    public int retryAttempts() {
        return retryAttempts;
    }

    /** The first backoff between attempts; it doubles, with jitter, after each. */
    public Duration retryBackoff() {
        return retryBackoff;
    }

    /** Builds a {@link LockRuntime}; every setting is optional. */
    public static final class Builder {
        private MonotonicClock clock = MonotonicClock.SYSTEM;
        private @Nullable ScheduledExecutorService scheduler;
        private @Nullable Executor renewalExecutor;
        private LockMetrics metrics = LockMetrics.NOOP;
        private int retryAttempts = 3;
        private Duration retryBackoff = Duration.ofMillis(20);

        private Builder() {}

        /** The monotonic clock; tests inject a controllable one. */
        public Builder clock(MonotonicClock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** The scheduler for renewals and expiry; the caller owns and shuts it down. */
        public Builder scheduler(ScheduledExecutorService scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /** Where renewal round trips run; the caller owns it. Default: a shared pool of daemon threads. */
        public Builder renewalExecutor(Executor renewalExecutor) {
            this.renewalExecutor = Objects.requireNonNull(renewalExecutor, "renewalExecutor");
            return this;
        }

        /** Where to count lock events, for example {@code new MicrometerLockMetrics(registry)}. */
        public Builder metrics(LockMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /** Attempts per backend call for transient failures, 1 to 10. */
        public Builder retryAttempts(int retryAttempts) {
            if (retryAttempts < 1 || retryAttempts > 10) {
                throw new IllegalArgumentException("retryAttempts must be between 1 and 10, was " + retryAttempts);
            }
            this.retryAttempts = retryAttempts;
            return this;
        }

        /** The first backoff between attempts, 1 ms to 10 s. */
        public Builder retryBackoff(Duration retryBackoff) {
            Objects.requireNonNull(retryBackoff, "retryBackoff");
            if (retryBackoff.compareTo(Duration.ofMillis(1)) < 0
                    || retryBackoff.compareTo(Duration.ofSeconds(10)) > 0) {
                throw new IllegalArgumentException("retryBackoff must be between 1 ms and 10 s, was " + retryBackoff);
            }
            this.retryBackoff = retryBackoff;
            return this;
        }

        /** The runtime. */
        public LockRuntime build() {
            return new LockRuntime(this);
        }
    }
}
