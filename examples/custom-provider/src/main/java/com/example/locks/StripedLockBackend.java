package com.example.locks;

import io.lockstep.Capability;
import io.lockstep.ProviderInfo;
import io.lockstep.StrengthTier;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.Grant;
import io.lockstep.spi.LockBackend;
import io.lockstep.spi.ReleaseWatch;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A small third-party backend: locks for the threads of one JVM, kept in a table split into
 * stripes, each stripe guarded by its own monitor that also wakes its waiters on release. It shows
 * the whole provider contract in one page: atomic try-lock (idempotent for the same owner),
 * compare-and-extend, compare-and-release, fences that never repeat, and notified waiting.
 * Lockstep's {@code BackendLockProvider} adds leases, renewal, loss signals, retry and metrics.
 */
public final class StripedLockBackend implements LockBackend<StripedLockBackend.Handle> {

    /** What names a grant: the lock and the owner token. */
    public record Handle(String name, String ownerToken) {}

    private record Holder(String ownerToken, long expiresAt) {}

    private final Stripe[] stripes;
    private final String label;

    private static final class Stripe {
        final Map<String, Holder> holders = new HashMap<>();
        final Map<String, Long> fences = new HashMap<>();
        long releases; // guarded by this; bumped on every release, waited on by watchers
    }

    /** A table of {@code stripeCount} stripes; {@code label} names it in messages. */
    public StripedLockBackend(int stripeCount, String label) {
        if (stripeCount < 1 || stripeCount > 4096) {
            throw new IllegalArgumentException("stripes must be between 1 and 4096, was " + stripeCount);
        }
        this.stripes = new Stripe[stripeCount];
        for (int i = 0; i < stripeCount; i++) {
            stripes[i] = new Stripe();
        }
        this.label = label;
    }

    private Stripe stripe(String name) {
        return stripes[Math.floorMod(name.hashCode(), stripes.length)];
    }

    @Override
    public ProviderInfo info() {
        return new ProviderInfo(
                "striped",
                StrengthTier.BEST_EFFORT,
                EnumSet.of(Capability.FENCING, Capability.LEASE_EXPIRY, Capability.EXTEND, Capability.NOTIFIED_WAIT));
    }

    @Override
    public Attempt<Handle> tryLock(String name, String ownerToken, Duration leaseTime) {
        Stripe s = stripe(name);
        synchronized (s) {
            long now = System.nanoTime();
            Holder h = s.holders.get(name);
            if (h != null && h.expiresAt - now > 0 && !h.ownerToken.equals(ownerToken)) {
                return Attempt.busy(Duration.ofNanos(h.expiresAt - now));
            }
            long fence = h != null && h.ownerToken.equals(ownerToken) && h.expiresAt - now > 0
                    ? s.fences.get(name)
                    : s.fences.merge(name, 1L, Long::sum);
            s.holders.put(name, new Holder(ownerToken, now + leaseTime.toNanos()));
            return Attempt.granted(Grant.of(new Handle(name, ownerToken), OptionalLong.of(fence), leaseTime));
        }
    }

    @Override
    public Optional<Duration> extend(Handle handle, Duration leaseTime) {
        Stripe s = stripe(handle.name());
        synchronized (s) {
            long now = System.nanoTime();
            Holder h = s.holders.get(handle.name());
            if (h == null || !h.ownerToken.equals(handle.ownerToken()) || h.expiresAt - now <= 0) {
                return Optional.empty();
            }
            s.holders.put(handle.name(), new Holder(h.ownerToken, now + leaseTime.toNanos()));
            return Optional.of(leaseTime);
        }
    }

    @Override
    public boolean release(Handle handle) {
        Stripe s = stripe(handle.name());
        synchronized (s) {
            Holder h = s.holders.get(handle.name());
            if (h == null || !h.ownerToken.equals(handle.ownerToken()) || h.expiresAt - System.nanoTime() <= 0) {
                return false;
            }
            s.holders.remove(handle.name());
            s.releases++;
            s.notifyAll();
            return true;
        }
    }

    @Override
    public void abandon(String name, String ownerToken) {
        release(new Handle(name, ownerToken));
    }

    @Override
    public ReleaseWatch watch(String name) {
        Stripe s = stripe(name);
        long[] seen = new long[1];
        synchronized (s) {
            seen[0] = s.releases;
        }
        return new ReleaseWatch() {
            @Override
            public boolean await(Duration timeout) throws InterruptedException {
                long deadline = System.nanoTime() + timeout.toNanos();
                synchronized (s) {
                    while (s.releases == seen[0]) {
                        long left = deadline - System.nanoTime();
                        if (left <= 0) {
                            return false;
                        }
                        s.wait(Math.max(1, left / 1_000_000));
                    }
                    seen[0] = s.releases;
                    return true;
                }
            }

            @Override
            public void close() {}
        };
    }

    @Override
    public String describe() {
        return "striped table '" + label + "'";
    }

    @Override
    public void close() {}
}
