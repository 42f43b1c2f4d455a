package io.lockstep.internal;

import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.lockstep.BackendUnavailableException;
import io.lockstep.LockRuntime;
import io.lockstep.MonotonicClock;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Runs backend operations with resilience4j retry: transient {@link BackendUnavailableException}s are
 * retried with exponential backoff and jitter; anything else fails at once. Backend operations are
 * idempotent per owner token (see {@link io.lockstep.spi.LockBackend}), so a retry is safe.
 *
 * <p>The first attempt runs directly, without the retry's context (the hot path of every acquire and
 * release: it almost always succeeds); only after a transient failure does the retry take over, with
 * the same backoff and the same total number of attempts as if it had run from the start.
 */
public final class BackendCalls {

    /** Attempts 2..n, after the first: the same intervals, shifted by one. */
    private final @Nullable Retry retry;

    private final IntervalFunction backoff;
    private final MonotonicClock clock;
    /** The runtime's {@link LockRuntime#retryAttempts()}: attempts in all, the first included. */
    private final int attempts;

    /** Calls for one provider, with the runtime's retry settings. */
    public BackendCalls(String providerName, LockRuntime runtime) {
        this.backoff = IntervalFunction.ofExponentialRandomBackoff(runtime.retryBackoff(), 2.0, 0.5);
        this.clock = runtime.clock();
        this.attempts = runtime.retryAttempts();
        if (runtime.retryAttempts() <= 1) {
            this.retry = null;
            return;
        }
        RetryConfig config = RetryConfig.custom()
                .maxAttempts(runtime.retryAttempts() - 1)
                .intervalFunction(attempt -> backoff.apply(attempt + 1))
                .retryOnException(e -> e instanceof BackendUnavailableException b && b.isTransient())
                .build();
        this.retry = Retry.of("lockstep-" + providerName, config);
    }

    /** Runs {@code operation}, retrying transient failures; rethrows the last failure. */
    public <T> T call(Supplier<T> operation) {
        try {
            return operation.get();
        } catch (BackendUnavailableException e) {
            if (retry == null || !e.isTransient()) {
                throw e;
            }
            pauseBeforeRetry(e);
        }
        return retry.executeSupplier(operation);
    }

    /** Waits the first backoff interval; an interrupt ends the call with the failure, interrupt kept. */
    private void pauseBeforeRetry(BackendUnavailableException failure) {
        pause(failure, backoff.apply(1));
    }

    private static void pause(BackendUnavailableException failure, long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure;
        }
    }

    /**
     * Runs {@code operation}, retrying transient failures only while {@code deadline} (on the
     * runtime's monotonic clock) has not passed: a failure at or after it is final.
     */
    public <T> T callUntil(Supplier<T> operation, long deadline) {
        try {
            return operation.get();
        } catch (BackendUnavailableException e) {
            if (retry == null || !e.isTransient() || clock.nanoTime() - deadline >= 0) {
                throw e;
            }
            pauseBeforeRetry(e);
        }
        try {
            return retry.executeSupplier(() -> {
                try {
                    return operation.get();
                } catch (BackendUnavailableException e) {
                    if (e.isTransient() && clock.nanoTime() - deadline >= 0) {
                        throw new OutOfTime(e);
                    }
                    throw e;
                }
            });
        } catch (OutOfTime e) {
            throw e.failure;
        }
    }

    /**
     * Runs {@code operation} for a call whose failure costs more than a retry: transient failures are
     * retried until both the runtime's number of attempts has been made and {@code deadline} (on the
     * runtime's monotonic clock) has passed. A release that fails leaves the lock held for the rest of its
     * lease, so it keeps asking through a short disturbance (a Redis Cluster slot in migration answering
     * {@code TRYAGAIN}, a leader election) that outlasts the few quick attempts an acquire gets. With
     * retries switched off ({@code retryAttempts} 1) it makes one attempt.
     */
    public <T> T callPersistently(Supplier<T> operation, long deadline) {
        if (retry == null) {
            return operation.get();
        }
        for (int attempt = 1; ; attempt++) {
            try {
                return operation.get();
            } catch (BackendUnavailableException e) {
                if (!e.isTransient() || (attempt >= attempts && clock.nanoTime() - deadline >= 0)) {
                    throw e;
                }
                long interval = backoff.apply(attempt);
                if (attempt >= attempts) {
                    // Past the counted attempts, wait no later than the deadline: the attempt then is the last.
                    long untilDeadline = TimeUnit.NANOSECONDS.toMillis(deadline - clock.nanoTime());
                    interval = Math.max(1, Math.min(interval, untilDeadline));
                }
                pause(e, interval);
            }
        }
    }

    /** Carries a transient failure past the retry, which does not retry this type. */
    private static final class OutOfTime extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final transient BackendUnavailableException failure;

        OutOfTime(BackendUnavailableException failure) {
            super(null, null, false, false);
            this.failure = failure;
        }
    }
}
