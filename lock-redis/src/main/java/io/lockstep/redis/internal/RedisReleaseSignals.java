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
import redis.clients.jedis.exceptions.JedisAccessControlException;

/**
 * One pub/sub subscription per provider, started on the first wait, that wakes the waiters of a lock
 * when its release is announced. If the subscription drops it reconnects and wakes every waiter so
 * nobody sleeps on a missed message; waiters also poll at the holder's TTL, so a lost message costs
 * time, never a lock.
 *
 * <p>A subscription that keeps failing (a Redis 7 ACL user without permission for the channel, a pool
 * with no free connection, an unreachable server) degrades waiting to polling: a new watch waits for
 * the subscription only while it has not failed yet, the failure is logged once (with the ACL rule to
 * add, for a permission error), and re-subscription backs off exponentially up to {@link #MAX_BACKOFF}.
 */
public final class RedisReleaseSignals implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedisReleaseSignals.class);

    /** The longest pause between two attempts to subscribe while subscribing keeps failing. */
    static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

    /** The longest a new watch waits for a first subscription to succeed or fail. */
    private static final Duration FIRST_SUBSCRIPTION_WAIT = Duration.ofSeconds(2);

    /** Failed attempts in a row, other than permission errors, before the failure is logged as a warning. */
    private static final int FAILURES_BEFORE_WARNING = 3;

    private final UnifiedJedis jedis;
    private final String channel;
    private final String where;
    private final Map<String, Set<Watch>> watchers = new ConcurrentHashMap<>();
    private volatile @Nullable Thread thread;
    private volatile @Nullable JedisPubSub subscription;
    /** Counted down when the current attempt to subscribe has succeeded or failed. */
    private volatile CountDownLatch attempt = new CountDownLatch(1);
    /** The last attempt failed: waiters poll and do not wait for the subscription. */
    private volatile boolean degraded;

    private volatile boolean closed;

    /** Signals for releases announced on {@code channel}. */
    public RedisReleaseSignals(UnifiedJedis jedis, String channel, String where) {
        this.jedis = jedis;
        this.channel = channel;
        this.where = where;
    }

    /**
     * A watch on {@code name}: live (subscribed) when this returns, unless subscribing failed, in which
     * case the waiter polls. Waits for the subscription only while no attempt has failed, and at most
     * {@link #FIRST_SUBSCRIPTION_WAIT}.
     */
    public ReleaseWatch watch(String name) {
        ensureStarted();
        Watch watch = new Watch(name);
        watchers.computeIfAbsent(name, n -> ConcurrentHashMap.newKeySet()).add(watch);
        if (!degraded) {
            try {
                // Wait briefly for the subscription so a release right after our failed attempt is heard;
                // only until the attempt succeeds or fails, so a failing subscription never stalls a waiter.
                attempt.await(FIRST_SUBSCRIPTION_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
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
        int failures = 0;
        boolean warned = false;
        while (!closed) {
            CountDownLatch current = attempt;
            boolean[] heard = {false};
            JedisPubSub pubSub = new JedisPubSub() {
                @Override
                public void onSubscribe(String ch, int count) {
                    heard[0] = true;
                    degraded = false;
                    current.countDown();
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
            RuntimeException failure = null;
            try {
                jedis.subscribe(pubSub, channel);
            } catch (RuntimeException e) {
                failure = e;
            }
            if (closed) {
                return;
            }
            if (heard[0]) {
                // It worked until it dropped (or was unsubscribed): start over as on the first attempt.
                backoffMillis = 50;
                failures = 0;
                if (warned) {
                    log.info("Release notifications on Redis at {} work again", where);
                    warned = false;
                }
            } else {
                failures++;
                degraded = true;
            }
            if (failure != null) {
                boolean denied = isPermissionError(failure);
                if (!heard[0] && !warned && (denied || failures >= FAILURES_BEFORE_WARNING)) {
                    warned = true;
                    log.warn(
                            denied
                                    ? "Release notifications on Redis at {} are refused ({}); waiters poll for free"
                                            + " locks instead (at most every second). Give the user the channel:"
                                            + " ACL SETUSER <user> &{}"
                                    : "Release notifications on Redis at {} keep failing ({}); waiters poll for"
                                            + " free locks instead (at most every second) until the subscription to"
                                            + " {} works again",
                            where,
                            failure.getMessage(),
                            channel);
                } else {
                    log.debug(
                            "Release subscription on Redis at {} dropped; reconnecting: {}", where, failure.toString());
                }
            }
            current.countDown();
            wakeEveryone();
            try {
                Thread.sleep(backoffMillis);
            } catch (InterruptedException e) {
                return;
            }
            if (!heard[0]) {
                backoffMillis = Math.min(MAX_BACKOFF.toMillis(), backoffMillis * 2);
            }
            attempt = new CountDownLatch(1);
        }
    }

    private static boolean isPermissionError(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof JedisAccessControlException
                    || String.valueOf(t.getMessage()).startsWith("NOPERM")) {
                return true;
            }
        }
        return false;
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
        attempt.countDown();
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
