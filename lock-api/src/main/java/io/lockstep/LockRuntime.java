package io.lockstep;

import io.lockstep.metrics.LockMetrics;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * What providers share in a process: the monotonic clock, the one scheduler that renews and expires
 * every lease (no thread per lease), the executor for blocking backend round trips, the executor that
 * runs user callbacks, metrics, the retry policy for transient backend errors and the time bounds of
 * failing calls.
 *
 * <p>Three kinds of threads, kept apart so that none can stall another:
 *
 * <ul>
 *   <li>the <b>scheduler</b> only times renewals and expiry checks; it never blocks;
 *   <li>the <b>renewal executor</b> runs the blocking round trips that no caller waits for: renewals,
 *       the release of leases when a provider closes, the cleanup of a failed attempt, and {@link
 *       io.lockstep.spi.LockBackend#dispose} when a lease ends;
 *   <li>the <b>callback executor</b> runs user code: every stage that depends on {@link Lease#lost()}.
 *       Callbacks should not block; one that does delays other leases' callbacks on the same executor,
 *       never a renewal or an expiry check.
 * </ul>
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
        // expiry checks (which decide when lost() completes). A fixed number of threads, idle ones end
        // after a minute; each provider may use only a few of them at once (see backendConcurrency).
        static final ExecutorService INSTANCE = newRenewalExecutor(DEFAULT_RENEWAL_THREADS);
    }

    private static final class SharedCallbackExecutor {
        // User callbacks (lost() stages) run here, never on the scheduler or the renewal executor. A
        // fixed number of threads: a callback that blocks cannot make the JVM grow a thread per lease.
        static final ExecutorService INSTANCE = newCallbackExecutor(DEFAULT_CALLBACK_THREADS);
    }

    /** Threads of the shared renewal executor: never more, however many leases or backends. */
    public static final int DEFAULT_RENEWAL_THREADS = 16;
    /** The default {@link #backendConcurrency()}. */
    public static final int DEFAULT_BACKEND_CONCURRENCY = 4;
    /** The default {@link #renewalBatchWindow()}. */
    public static final Duration DEFAULT_RENEWAL_BATCH_WINDOW = Duration.ofMillis(50);
    /** Threads of the shared callback executor. */
    public static final int DEFAULT_CALLBACK_THREADS = 4;
    /** The default bound of {@link LockProvider#close()}: see {@link #closeTimeout()}. */
    public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(5);
    /** The default {@link #retryWindow()}. */
    public static final Duration DEFAULT_RETRY_WINDOW = Duration.ofMillis(500);

    private final MonotonicClock clock;
    private final ScheduledExecutorService scheduler;
    private final Executor renewalExecutor;
    private final Executor callbackExecutor;
    private final LockMetrics metrics;
    private final int retryAttempts;
    private final Duration retryBackoff;
    private final Duration retryWindow;
    private final Duration closeTimeout;
    private final int backendConcurrency;
    private final Duration renewalBatchWindow;

    private LockRuntime(Builder b) {
        this.clock = b.clock;
        this.scheduler = b.scheduler == null ? SharedScheduler.INSTANCE : b.scheduler;
        this.renewalExecutor = b.renewalExecutor == null ? SharedRenewalExecutor.INSTANCE : b.renewalExecutor;
        this.callbackExecutor = b.callbackExecutor == null ? SharedCallbackExecutor.INSTANCE : b.callbackExecutor;
        this.metrics = b.metrics;
        this.retryAttempts = b.retryAttempts;
        this.retryBackoff = b.retryBackoff;
        this.retryWindow = b.retryWindow;
        this.closeTimeout = b.closeTimeout;
        this.backendConcurrency = b.backendConcurrency;
        this.renewalBatchWindow = b.renewalBatchWindow;
    }

    /**
     * The system clock, the shared scheduler, renewal and callback executors, no metrics, three
     * attempts with 20 ms backoff and jitter within a 500 ms retry window, a 5 s close timeout.
     */
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

    /**
     * A pool of {@code threads} daemon threads for blocking backend round trips that no caller waits
     * for; idle threads end after a minute and tasks queue when every thread is busy, so the pool never
     * grows with the number of leases. Each provider runs at most {@link #backendConcurrency()} tasks
     * on it at once, so one slow or unreachable backend cannot take every thread.
     */
    public static ExecutorService newRenewalExecutor(int threads) {
        return newPool("threads", threads, "lockstep-renewal-");
    }

    /**
     * A pool of {@code threads} daemon threads for user callbacks; idle threads end after a minute.
     * Tasks queue when every thread is busy.
     */
    public static ExecutorService newCallbackExecutor(int threads) {
        return newPool("threads", threads, "lockstep-callback-");
    }

    private static ExecutorService newPool(String field, int threads, String prefix) {
        if (threads < 1) {
            throw new IllegalArgumentException(field + " must be at least 1, was " + threads);
        }
        AtomicInteger counter = new AtomicInteger();
        ThreadPoolExecutor executor = new ThreadPoolExecutor(
                threads, threads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), runnable -> {
                    Thread thread = new Thread(runnable, prefix + counter.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }

    /**
     * Where blocking round trips that no caller waits for run: renewals, releases when a provider
     * closes, cleanup of failed attempts, disposal of ended leases. The scheduler only times them.
     */
    public Executor renewalExecutor() {
        return renewalExecutor;
    }

    /**
     * Where user callbacks run: every stage depending on {@link Lease#lost()} that is attached before
     * the lease ends (a stage attached later runs on the thread that attaches it, as usual for {@link
     * java.util.concurrent.CompletableFuture}). Never the scheduler or the renewal executor.
     */
    public Executor callbackExecutor() {
        return callbackExecutor;
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

    /**
     * How long after an acquire started its transient failures may still be retried, when its wait
     * time is shorter: a retry is started only before {@code max(waitTime, retryWindow)} has passed.
     * So {@code tryAcquire} returns within {@code max(waitTime, retryWindow)} plus one retry backoff and one backend call's
     * own timeout (the attempt in flight), even against a stalled server; the cleanup of the failed
     * attempt runs in the background on the {@link #renewalExecutor()}. {@link Lease#release()} retries
     * its transient failures for this long from its start, beyond {@link #retryAttempts()} if need be.
     */
    public Duration retryWindow() {
        return retryWindow;
    }

    /**
     * The bound of {@link LockProvider#close()}: the leases it still holds are released in parallel
     * (up to {@link #backendConcurrency()} at once), one attempt each, and {@code close()} waits at most this long for them (plus closing the
     * backend's connections) before it returns. A lease whose release did not finish in time ends on
     * the backend by its lease time. Every lease's {@link Lease#lost()} completes either way.
     */
    public Duration closeTimeout() {
        return closeTimeout;
    }

    /**
     * How many tasks of one provider may run on the {@link #renewalExecutor()} at once; the rest wait
     * in that provider's own queue. So a backend that is slow or down holds at most this many renewal
     * threads, and other backends' renewals keep running as long as the executor has more threads than
     * this (the default executor has {@value #DEFAULT_RENEWAL_THREADS}, this defaults to {@value
     * #DEFAULT_BACKEND_CONCURRENCY}).
     */
    public int backendConcurrency() {
        return backendConcurrency;
    }

    /**
     * How long a due renewal may wait for others of the same provider, so that they go to the backend
     * as one batch (see {@link io.lockstep.spi.LockBackend#extendAll}); never more than a tenth of the
     * lease time. Leases schedule their renewals this much before a third of their lease time, so a
     * renewal never goes out later than without batching; it only goes out up to this much earlier.
     */
    public Duration renewalBatchWindow() {
        return renewalBatchWindow;
    }

    /** Builds a {@link LockRuntime}; every setting is optional. */
    public static final class Builder {
        private MonotonicClock clock = MonotonicClock.SYSTEM;
        private @Nullable ScheduledExecutorService scheduler;
        private @Nullable Executor renewalExecutor;
        private @Nullable Executor callbackExecutor;
        private LockMetrics metrics = LockMetrics.NOOP;
        private int retryAttempts = 3;
        private Duration retryBackoff = Duration.ofMillis(20);
        private Duration retryWindow = DEFAULT_RETRY_WINDOW;
        private Duration closeTimeout = DEFAULT_CLOSE_TIMEOUT;
        private int backendConcurrency = DEFAULT_BACKEND_CONCURRENCY;
        private Duration renewalBatchWindow = DEFAULT_RENEWAL_BATCH_WINDOW;

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

        /**
         * Where renewal round trips run; the caller owns it and should bound it. Default: a shared pool
         * of {@value LockRuntime#DEFAULT_RENEWAL_THREADS} daemon threads.
         */
        public Builder renewalExecutor(Executor renewalExecutor) {
            this.renewalExecutor = Objects.requireNonNull(renewalExecutor, "renewalExecutor");
            return this;
        }

        /**
         * Where user callbacks ({@link Lease#lost()} stages) run; the caller owns it. It must not be
         * the scheduler or the renewal executor. Default: a shared pool of {@value
         * LockRuntime#DEFAULT_CALLBACK_THREADS} daemon threads.
         */
        public Builder callbackExecutor(Executor callbackExecutor) {
            this.callbackExecutor = Objects.requireNonNull(callbackExecutor, "callbackExecutor");
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

        /** How long after an acquire started a transient failure may be retried; 0 to 1 min. */
        public Builder retryWindow(Duration retryWindow) {
            this.retryWindow = requireBetween("retryWindow", retryWindow, Duration.ZERO, Duration.ofMinutes(1));
            return this;
        }

        /** The bound of a provider's {@code close()}; 0 to 10 min. */
        public Builder closeTimeout(Duration closeTimeout) {
            this.closeTimeout = requireBetween("closeTimeout", closeTimeout, Duration.ZERO, Duration.ofMinutes(10));
            return this;
        }

        /** Tasks of one provider running on the renewal executor at once, 1 to 256. */
        public Builder backendConcurrency(int backendConcurrency) {
            if (backendConcurrency < 1 || backendConcurrency > 256) {
                throw new IllegalArgumentException(
                        "backendConcurrency must be between 1 and 256, was " + backendConcurrency);
            }
            this.backendConcurrency = backendConcurrency;
            return this;
        }

        /** How long a due renewal waits to be batched with others; 0 (no wait) to 1 s. */
        public Builder renewalBatchWindow(Duration renewalBatchWindow) {
            this.renewalBatchWindow =
                    requireBetween("renewalBatchWindow", renewalBatchWindow, Duration.ZERO, Duration.ofSeconds(1));
            return this;
        }

        private static Duration requireBetween(String field, @Nullable Duration value, Duration min, Duration max) {
            if (value == null) {
                throw new IllegalArgumentException(field + " must not be null");
            }
            if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
                throw new IllegalArgumentException(
                        field + " must be between " + min + " and " + max + ", was " + value);
            }
            return value;
        }

        /** The runtime. */
        public LockRuntime build() {
            return new LockRuntime(this);
        }
    }
}
