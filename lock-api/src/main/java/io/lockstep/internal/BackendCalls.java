package io.lockstep.internal;

import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.lockstep.BackendUnavailableException;
import io.lockstep.LockRuntime;
import io.lockstep.MonotonicClock;
import java.util.function.Supplier;

/**
 * Runs backend operations with resilience4j retry: transient {@link BackendUnavailableException}s are
 * retried with exponential backoff and jitter; anything else fails at once. Backend operations are
 * idempotent per owner token (see {@link io.lockstep.spi.LockBackend}), so a retry is safe.
 */
public final class BackendCalls {

    private final Retry retry;
    private final MonotonicClock clock;

    /** Calls for one provider, with the runtime's retry settings. */
    public BackendCalls(String providerName, LockRuntime runtime) {
        RetryConfig config = RetryConfig.custom()
                .maxAttempts(runtime.retryAttempts())
                .intervalFunction(IntervalFunction.ofExponentialRandomBackoff(runtime.retryBackoff(), 2.0, 0.5))
                .retryOnException(e -> e instanceof BackendUnavailableException b && b.isTransient())
                .build();
        this.retry = Retry.of("lockstep-" + providerName, config);
        this.clock = runtime.clock();
    }

    /** Runs {@code operation}, retrying transient failures; rethrows the last failure. */
    public <T> T call(Supplier<T> operation) {
        return retry.executeSupplier(operation);
    }

    /**
     * Runs {@code operation}, retrying transient failures only while {@code deadline} (on the
     * runtime's monotonic clock) has not passed: a failure at or after it is final.
     */
    public <T> T callUntil(Supplier<T> operation, long deadline) {
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
