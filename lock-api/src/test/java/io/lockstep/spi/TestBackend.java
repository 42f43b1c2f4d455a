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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

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
    /** How many grants from now on are slowed by {@link #grantDelay} (negative: all). */
    volatile int delayedGrantsLeft = -1;
    /** When positive, tryLock takes this long and then fails transiently, like a stalled server. */
    volatile Duration stall = Duration.ZERO;
    /** When set, extend() blocks until it opens (after counting down extendEntered). */
    volatile @Nullable CountDownLatch extendGate;

    final CountDownLatch extendEntered = new CountDownLatch(1);
    /** When set, release() blocks until it opens, like a stalled server. */
    volatile @Nullable CountDownLatch releaseGate;

    final AtomicInteger releaseCalls = new AtomicInteger();
    /** How often each handle was disposed of. */
    final Map<String, AtomicInteger> disposals = new ConcurrentHashMap<>();
    /** Whether tryLock waits on the "server" (this object's monitor) up to the attempt's maxWait. */
    volatile boolean serverWait;

    final List<Duration> maxWaits = new CopyOnWriteArrayList<>();
    final AtomicInteger watches = new AtomicInteger();
    /** Contexts passed to abandon(AttemptContext). */
    final List<AttemptContext> abandonedContexts = new CopyOnWriteArrayList<>();
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
        if (!stall.isZero() && !stall.isNegative()) {
            try {
                Thread.sleep(stall.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            throw new BackendUnavailableException("test backend at test:1 timed out", null, true);
        }
        maybeFail();
        boolean delayed = !grantDelay.isZero() && delayedGrantsLeft != 0;
        if (delayed && delayedGrantsLeft > 0) {
            delayedGrantsLeft--;
        }
        if (delayed) {
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

    /** The holder of the last {@link #tryLock(AttemptContext)}. */
    volatile io.lockstep.@Nullable Holder lastHolder;

    @Override
    public Attempt<String> tryLock(AttemptContext attempt) {
        lastHolder = attempt.holder();
        attempt.attach("session-of-" + attempt.ownerToken());
        if (!serverWait) {
            return tryLock(attempt.name(), attempt.ownerToken(), attempt.leaseTime());
        }
        maxWaits.add(attempt.maxWait());
        long until = System.nanoTime() + attempt.maxWait().toNanos();
        synchronized (this) {
            while (true) {
                Attempt<String> result = tryLock(attempt.name(), attempt.ownerToken(), attempt.leaseTime());
                long left = until - System.nanoTime();
                if (result.isGranted() || left <= 0) {
                    return result;
                }
                try {
                    // Woken by release(); the holder's expiry is noticed within 10 ms.
                    wait(Math.max(1, Math.min(10, left / 1_000_000)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return Attempt.busy(Duration.ZERO);
                }
            }
        }
    }

    @Override
    public boolean waitsOnServer() {
        return serverWait;
    }

    @Override
    public ReleaseWatch watch(String name) {
        watches.incrementAndGet();
        return LockBackend.super.watch(name);
    }

    @Override
    public void dispose(String handle) {
        disposals.computeIfAbsent(handle, h -> new AtomicInteger()).incrementAndGet();
    }

    /** How often the handle of {@code lease} was disposed of. */
    int disposalsOf(io.lockstep.Lease lease) {
        AtomicInteger count = disposals.get(lease.name() + "|" + lease.ownerToken());
        return count == null ? 0 : count.get();
    }

    @Override
    public void abandon(AttemptContext attempt) {
        abandonedContexts.add(attempt);
        LockBackend.super.abandon(attempt);
    }

    @Override
    public Optional<Duration> extend(String handle, Duration leaseTime) {
        CountDownLatch gate = extendGate;
        if (gate != null) {
            extendEntered.countDown();
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        extendCalls.incrementAndGet();
        return extendNow(handle, leaseTime);
    }

    private synchronized Optional<Duration> extendNow(String handle, Duration leaseTime) {
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

    /** What maxRenewalBatch() answers; above 1, extendAll is one call for the batch. */
    volatile int renewalBatch = 1;
    /** The size of every extendAll call, in order. */
    final List<Integer> extendAllSizes = new CopyOnWriteArrayList<>();

    final AtomicInteger extendCalls = new AtomicInteger();

    @Override
    public int maxRenewalBatch() {
        return renewalBatch;
    }

    @Override
    public List<Optional<Duration>> extendAll(List<Extension<String>> extensions) {
        extendAllSizes.add(extensions.size());
        List<Optional<Duration>> results = new java.util.ArrayList<>();
        for (Extension<String> extension : extensions) {
            results.add(extendNow(extension.handle(), extension.leaseTime()));
        }
        return results;
    }

    /** Gives {@code name}'s lock to another owner, as if it expired on the server and was taken. */
    synchronized void steal(String name) {
        Entry e = locks.get(name);
        locks.put(
                name,
                new Entry("thief", System.nanoTime() + Duration.ofMinutes(1).toNanos(), e == null ? 0 : e.fence + 1));
    }

    @Override
    public boolean release(String handle) {
        releaseCalls.incrementAndGet();
        CountDownLatch gate = releaseGate;
        if (gate != null) {
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return releaseNow(handle);
    }

    private synchronized boolean releaseNow(String handle) {
        notifyAll();
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

    /** How many tryLock calls reached the backend. */
    public int tryLockCalls() {
        return tryLockCalls.get();
    }

    /** Whether {@code ownerToken} holds {@code name} right now. */
    synchronized boolean isHeldBy(String name, String ownerToken) {
        Entry e = locks.get(name);
        return e != null && e.expiresAt - System.nanoTime() > 0 && e.token.equals(ownerToken);
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
