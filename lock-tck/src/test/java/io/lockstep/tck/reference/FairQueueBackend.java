package io.lockstep.tck.reference;

import io.lockstep.Capability;
import io.lockstep.ProviderInfo;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.LockBackend;
import io.lockstep.spi.ReleaseWatch;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;

/**
 * The reference backend with a queue of waiters shared by every client of one store, claiming {@link
 * Capability#FAIR}: a free lock goes to the first waiter still queued ({@code lastFirst} false), or, as
 * a deliberate bug, to the last one ({@code lastFirst} true). Callers that do not wait never jump the
 * queue.
 */
final class FairQueueBackend implements LockBackend<InMemoryLockBackend.Handle> {

    private static final Map<InMemoryLockStore, Map<String, Deque<String>>> QUEUES =
            Collections.synchronizedMap(new WeakHashMap<>());

    private final InMemoryLockBackend delegate;
    private final boolean lastFirst;
    private final Map<String, Deque<String>> queues;
    private final ProviderInfo info;

    FairQueueBackend(InMemoryLockBackend delegate, boolean lastFirst) {
        this.delegate = delegate;
        this.lastFirst = lastFirst;
        this.queues = QUEUES.computeIfAbsent(delegate.store(), s -> new HashMap<>());
        EnumSet<Capability> claims = EnumSet.copyOf(delegate.info().capabilities());
        claims.add(Capability.FAIR);
        this.info = new ProviderInfo(
                delegate.info().name() + (lastFirst ? "-last-first" : "-fair"),
                delegate.info().tier(),
                claims);
    }

    @Override
    public ProviderInfo info() {
        return info;
    }

    @Override
    public Attempt<InMemoryLockBackend.Handle> tryLock(String name, String ownerToken, Duration leaseTime) {
        synchronized (queues) {
            Deque<String> queue = queues.get(name);
            if (queue != null && !queue.isEmpty()) {
                String turn = lastFirst ? queue.peekLast() : queue.peekFirst();
                if (!ownerToken.equals(turn)) {
                    return Attempt.busy(Duration.ofMillis(20));
                }
            }
            Attempt<InMemoryLockBackend.Handle> attempt = delegate.tryLock(name, ownerToken, leaseTime);
            if (attempt.isGranted() && queue != null) {
                queue.remove(ownerToken);
            }
            return attempt;
        }
    }

    @Override
    public Optional<Duration> extend(InMemoryLockBackend.Handle handle, Duration leaseTime) {
        return delegate.extend(handle, leaseTime);
    }

    @Override
    public boolean release(InMemoryLockBackend.Handle handle) {
        return delegate.release(handle);
    }

    @Override
    public void abandon(String name, String ownerToken) {
        delegate.abandon(name, ownerToken);
    }

    @Override
    public ReleaseWatch watch(String name, String ownerToken) {
        synchronized (queues) {
            queues.computeIfAbsent(name, n -> new ArrayDeque<>()).addLast(ownerToken);
        }
        ReleaseWatch signals = delegate.watch(name);
        return new ReleaseWatch() {
            @Override
            public boolean await(Duration timeout) throws InterruptedException {
                return signals.await(timeout);
            }

            @Override
            public void close() {
                signals.close();
                synchronized (queues) {
                    Deque<String> queue = queues.get(name);
                    if (queue != null) {
                        queue.remove(ownerToken);
                    }
                }
            }
        };
    }

    @Override
    public String describe() {
        return info.name() + " " + delegate.describe();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
