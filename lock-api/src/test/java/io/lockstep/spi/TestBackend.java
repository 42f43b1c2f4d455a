package io.lockstep.spi;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Capability;
import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import io.lockstep.LossReason;
import io.lockstep.ProviderInfo;
import io.lockstep.StrengthTier;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-memory backend for testing lock-api's own machinery, with switches that make it fail the way
 * real backends do. Real backends are tested against real servers in their modules.
 */
public final class TestBackend implements LockBackend<String> {

    /** A backend with no failures switched on. */
    public TestBackend() {}

    private record Entry(String token, long expiresAt, long fence) {}

    private final Map<String, Entry> locks = new ConcurrentHashMap<>();
    private final AtomicLong fences = new AtomicLong();
    final AtomicInteger tryLockCalls = new AtomicInteger();
    final AtomicInteger abandoned = new AtomicInteger();
    volatile int transientFailuresLeft;
    volatile boolean down;
    volatile boolean permanentFailure;
    volatile boolean rejectExtends;
    volatile Duration grantDelay = Duration.ZERO;
    /** Completed to signal a session loss to every grant made while it was current. */
    public volatile CompletableFuture<LossReason> sessionLoss = new CompletableFuture<>();

    @Override
    public ProviderInfo info() {
        return new ProviderInfo(
                "test",
                StrengthTier.BEST_EFFORT,
                EnumSet.of(Capability.FENCING, Capability.LEASE_EXPIRY, Capability.EXTEND));
    }

    private void maybeFail() {
        if (permanentFailure) {
            throw new BackendUnavailableException("test backend at test:1 refused", null, false);
        }
        if (down) {
            throw new BackendUnavailableException("test backend at test:1 unreachable", null, true);
        }
        if (transientFailuresLeft > 0) {
            transientFailuresLeft--;
            throw new BackendUnavailableException("test backend at test:1 hiccup", null, true);
        }
    }

    @Override
    public synchronized Attempt<String> tryLock(String name, String ownerToken, Duration leaseTime) {
        tryLockCalls.incrementAndGet();
        maybeFail();
        if (!grantDelay.isZero()) {
            try {
                Thread.sleep(grantDelay.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        long now = System.nanoTime();
        Entry e = locks.get(name);
        if (e != null && e.expiresAt - now > 0 && !e.token.equals(ownerToken)) {
            return Attempt.busy(Duration.ofNanos(e.expiresAt - now));
        }
        long fence = e != null && e.token.equals(ownerToken) ? e.fence : fences.incrementAndGet();
        locks.put(name, new Entry(ownerToken, now + leaseTime.toNanos(), fence));
        return Attempt.granted(new Grant<>(name + "|" + ownerToken, OptionalLong.of(fence), leaseTime, sessionLoss));
    }

    @Override
    public synchronized Optional<Duration> extend(String handle, Duration leaseTime) {
        maybeFail();
        String[] parts = handle.split("\\|");
        Entry e = locks.get(parts[0]);
        long now = System.nanoTime();
        if (rejectExtends || e == null || !e.token.equals(parts[1]) || e.expiresAt - now <= 0) {
            return Optional.empty();
        }
        locks.put(parts[0], new Entry(e.token, now + leaseTime.toNanos(), e.fence));
        return Optional.of(leaseTime);
    }

    @Override
    public synchronized boolean release(String handle) {
        maybeFail();
        String[] parts = handle.split("\\|");
        Entry e = locks.get(parts[0]);
        if (e != null && e.token.equals(parts[1]) && e.expiresAt - System.nanoTime() > 0) {
            locks.remove(parts[0]);
            return true;
        }
        return false;
    }

    @Override
    public synchronized void abandon(String name, String ownerToken) {
        abandoned.incrementAndGet();
        Entry e = locks.get(name);
        if (e != null && e.token.equals(ownerToken)) {
            locks.remove(name);
        }
    }

    /** Whether anyone holds {@code name} right now. */
    synchronized boolean isHeld(String name) {
        Entry e = locks.get(name);
        return e != null && e.expiresAt - System.nanoTime() > 0;
    }

    @Override
    public String describe() {
        return "test backend at test:1";
    }

    @Override
    public void close() {}

    /** Registered for ServiceLoader under the scheme {@code memory-test}. */
    public static final class Factory implements LockProviderFactory {
        @Override
        public String name() {
            return "memory-test";
        }

        @Override
        public Set<String> schemes() {
            return Set.of("memory-test");
        }

        @Override
        public LockProvider create(LockConfig config) {
            return new BackendLockProvider<>(new TestBackend(), config.runtime());
        }
    }
}
