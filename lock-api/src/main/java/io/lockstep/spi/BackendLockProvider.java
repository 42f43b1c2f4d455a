package io.lockstep.spi;

import io.lockstep.BackendUnavailableException;
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
import io.lockstep.internal.DefaultLease;
import io.lockstep.internal.OwnerTokens;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A complete {@link LockProvider} over a {@link LockBackend}: validation, waiting (notified by the
 * backend's {@link ReleaseWatch}, polling at the backend's hint as a bounded fallback), retry of
 * transient errors, leases with renewal and loss, metrics. Every Lockstep backend is one of these, so
 * they all behave alike; a provider author writes the backend and gets the rest.
 *
 * <p>Thread-safe. Fails closed: when the backend cannot be reached, acquiring throws {@link
 * BackendUnavailableException} and any lock the failed attempt may have taken is abandoned.
 */
public final class BackendLockProvider<H> implements LockProvider {

    private static final Logger log = LoggerFactory.getLogger(BackendLockProvider.class);

    /** The longest a waiter sleeps without a signal before it asks the backend again. */
    static final Duration MAX_POLL = Duration.ofSeconds(1);

    private final LockBackend<H> backend;
    private final LockRuntime runtime;
    private final ProviderInfo info;
    private final BackendCalls calls;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Set<DefaultLease<H>> live = ConcurrentHashMap.newKeySet();

    /** A provider over {@code backend}; closing the provider closes the backend. */
    public BackendLockProvider(LockBackend<H> backend, LockRuntime runtime) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.runtime = Objects.requireNonNull(runtime, "runtime");
        this.info = Objects.requireNonNull(backend.info(), "backend.info()");
        this.calls = new BackendCalls(info.name(), runtime);
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

    /**
     * Releases the leases this provider still holds (best effort, so other processes can take over at
     * once; a lease that cannot be released ends by its lease time), stops their renewal, and closes
     * the backend.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (DefaultLease<H> lease : List.copyOf(live)) {
            try {
                lease.close();
            } catch (RuntimeException e) {
                log.warn(
                        "Could not release lock '{}' while closing; it ends by its lease time: {}",
                        lease.name(),
                        e.toString());
            }
        }
        backend.close();
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
        String token = OwnerTokens.next();
        runtime.metrics().acquireAttempted(info.name());
        @Nullable ReleaseWatch watch = waitNanos > 0 ? backend.watch(name, token) : null;
        try {
            while (true) {
                long sentAt = clock.nanoTime();
                Attempt<H> attempt = attemptOnce(name, token, options);
                if (attempt.isGranted()) {
                    runtime.metrics().acquired(info.name(), Duration.ofNanos(clock.nanoTime() - start));
                    DefaultLease<H> lease = DefaultLease.start(
                            backend, calls, runtime, name, token, attempt.grant(), options, sentAt, live::remove);
                    live.add(lease);
                    if (closed.get()) {
                        lease.close(); // closed while we were acquiring: hand it straight back
                        throw new IllegalStateException("provider " + this + " was closed during acquire");
                    }
                    return Optional.of(lease);
                }
                long left = waitNanos - (clock.nanoTime() - start);
                if (left <= 0 || watch == null) {
                    runtime.metrics().acquireTimedOut(info.name(), Duration.ofNanos(clock.nanoTime() - start));
                    return Optional.empty();
                }
                long pause = Math.min(left, Math.min(attempt.retryAfter().toNanos(), MAX_POLL.toNanos()));
                watch.await(Duration.ofNanos(Math.max(pause, TimeUnit.MILLISECONDS.toNanos(1))));
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

    private Attempt<H> attemptOnce(String name, String token, LeaseOptions options) {
        try {
            return calls.call(() -> backend.tryLock(name, token, options.leaseTime()));
        } catch (RuntimeException e) {
            // The outcome is unknown: the backend may have granted before the reply was lost. Fail
            // closed and leave nothing behind.
            try {
                backend.abandon(name, token);
            } catch (RuntimeException cleanupFailure) {
                log.debug("Abandoning a failed attempt on lock '{}' failed too", name, cleanupFailure);
            }
            throw e;
        }
    }
}
