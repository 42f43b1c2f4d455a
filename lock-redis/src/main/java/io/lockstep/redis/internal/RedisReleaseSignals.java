package io.lockstep.redis.internal;

import io.lockstep.spi.ReleaseWatch;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.UnifiedJedis;

/**
 * One pub/sub subscription per provider, started on the first wait, that wakes the waiters of a lock
 * when its release is announced. If the subscription drops it reconnects and wakes every waiter so
 * nobody sleeps on a missed message; waiters also poll at the holder's TTL, so a lost message costs
 * time, never a lock.
 */
public final class RedisReleaseSignals implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedisReleaseSignals.class);

    private final UnifiedJedis jedis;
    private final String channel;
    private final String where;
    private final Map<String, Set<Watch>> watchers = new ConcurrentHashMap<>();
    private volatile @Nullable Thread thread;
    private volatile @Nullable JedisPubSub subscription;
    private volatile CountDownLatch subscribed = new CountDownLatch(1);
    private volatile boolean closed;

    /** Signals for releases announced on {@code channel}. */
    public RedisReleaseSignals(UnifiedJedis jedis, String channel, String where) {
        this.jedis = jedis;
        this.channel = channel;
        this.where = where;
    }

    /** A watch on {@code name}, live (subscribed) when this returns unless Redis is unreachable. */
    public ReleaseWatch watch(String name) {
        ensureStarted();
        Watch watch = new Watch(name);
        watchers.computeIfAbsent(name, n -> ConcurrentHashMap.newKeySet()).add(watch);
        try {
            // Wait briefly for the subscription so a release right after our failed attempt is heard.
            subscribed.await(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return watch;
    }

    private synchronized void ensureStarted() {
        if (thread != null || closed) {
            return;
        }
        Thread t = new Thread(this::subscribeLoop, "lockstep-redis-releases");
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    private void subscribeLoop() {
        long backoffMillis = 50;
        while (!closed) {
            JedisPubSub pubSub = new JedisPubSub() {
                @Override
                public void onSubscribe(String ch, int count) {
                    subscribed.countDown();
                    wakeEveryone(); // anything released while we were not listening
                }

                @Override
                public void onMessage(String ch, String name) {
                    Set<Watch> set = watchers.get(name);
                    if (set != null) {
                        set.forEach(Watch::signal);
                    }
                }
            };
            subscription = pubSub;
            try {
                jedis.subscribe(pubSub, channel);
                backoffMillis = 50;
            } catch (RuntimeException e) {
                if (closed) {
                    return;
                }
                log.debug("Release subscription on Redis at {} dropped; reconnecting: {}", where, e.toString());
            }
            subscribed = new CountDownLatch(1);
            wakeEveryone();
            try {
                Thread.sleep(backoffMillis);
            } catch (InterruptedException e) {
                return;
            }
            backoffMillis = Math.min(2_000, backoffMillis * 2);
        }
    }

    private void wakeEveryone() {
        watchers.values().forEach(set -> set.forEach(Watch::signal));
    }

    @Override
    public void close() {
        closed = true;
        JedisPubSub pubSub = subscription;
        if (pubSub != null) {
            try {
                pubSub.unsubscribe();
            } catch (RuntimeException ignored) {
                // Not subscribed (yet or any more).
            }
        }
        Thread t = thread;
        if (t != null) {
            t.interrupt();
        }
        wakeEveryone();
    }

    private final class Watch implements ReleaseWatch {
        private final String name;
        private final Semaphore signals = new Semaphore(0);

        Watch(String name) {
            this.name = name;
        }

        void signal() {
            if (signals.availablePermits() == 0) {
                signals.release();
            }
        }

        @Override
        public boolean await(Duration timeout) throws InterruptedException {
            boolean signalled = signals.tryAcquire(timeout.toNanos(), TimeUnit.NANOSECONDS);
            signals.drainPermits();
            return signalled;
        }

        @Override
        public void close() {
            watchers.computeIfPresent(name, (n, set) -> {
                set.remove(this);
                return set.isEmpty() ? null : set;
            });
        }
    }
}
