package io.lockstep.redlock.internal;

import io.lockstep.spi.ReleaseWatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Wakes waiters when a lock is released: the release script publishes the lock key on one channel per
 * key prefix, and one subscriber per node (a daemon thread holding one connection, started with the
 * first watch) signals the waiters of that key. A release on any node wakes them; the attempt they
 * make then decides. Expiry publishes nothing: waiters also poll at the backend's hint. A Redis user
 * without permission on the channel (Redis 7 ACLs default to none) cannot subscribe: that node's
 * subscriber stops, one warning is logged, and waiters poll. Thread-safe.
 */
final class ReleaseNotifier implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ReleaseNotifier.class);
    private static final long RECONNECT_MILLIS = 500;
    private static final long SUBSCRIBE_WAIT_MILLIS = 200;

    private final List<Node> nodes;
    private final String channel;
    private final Map<String, Set<Waiter>> waiters = new ConcurrentHashMap<>();
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicBoolean warnedNoPermission = new AtomicBoolean();
    private final CountDownLatch firstSubscription = new CountDownLatch(1);
    private final List<Subscriber> subscribers = new ArrayList<>();

    ReleaseNotifier(List<Node> nodes, String channel) {
        this.nodes = nodes;
        this.channel = channel;
    }

    /** The channel releases are published on. */
    String channel() {
        return channel;
    }

    /** A watch on {@code lockKey}; the first one starts the subscribers and waits briefly for one to be up. */
    ReleaseWatch watch(String lockKey) {
        start();
        Waiter waiter = new Waiter(lockKey);
        waiters.computeIfAbsent(lockKey, k -> ConcurrentHashMap.newKeySet()).add(waiter);
        return waiter;
    }

    private void start() {
        if (!started.compareAndSet(false, true)) {
            return;
        }
        synchronized (subscribers) {
            for (Node node : nodes) {
                Subscriber subscriber = new Subscriber(node);
                subscribers.add(subscriber);
                Thread thread = new Thread(subscriber::run, "lockstep-redlock-notify-" + node.address());
                thread.setDaemon(true);
                thread.start();
            }
        }
        try {
            // Not required for correctness (waiters poll too), only so that the first waiter hears releases.
            firstSubscription.await(SUBSCRIBE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A subscriber that may never subscribe gives up, and says so once; the first waiter need not wait for it. */
    private void noPermission(Node node, RuntimeException e) {
        firstSubscription.countDown();
        if (warnedNoPermission.compareAndSet(false, true)) {
            log.warn(
                    "Redlock node {} does not let this Redis user subscribe to the release channel ({}); waiters poll"
                            + " instead of being woken by releases. Grant the user the channel to be woken.",
                    node.address(),
                    Node.describe(e));
        }
    }

    private static boolean isNoPermission(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof JedisDataException
                    && String.valueOf(t.getMessage()).startsWith("NOPERM")) {
                return true;
            }
        }
        return false;
    }

    private void released(String lockKey) {
        Set<Waiter> set = waiters.get(lockKey);
        if (set != null) {
            set.forEach(Waiter::signal);
        }
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            synchronized (subscribers) {
                subscribers.forEach(Subscriber::stop);
            }
        }
    }

    /** One node's subscription, reconnected until the notifier closes. */
    private final class Subscriber {
        private final Node node;
        private final JedisPubSub pubSub = new JedisPubSub() {
            @Override
            public void onMessage(String channel, String message) {
                released(message);
            }

            @Override
            public void onSubscribe(String channel, int subscribedChannels) {
                firstSubscription.countDown();
            }
        };
        private volatile @Nullable Jedis connection;

        Subscriber(Node node) {
            this.node = node;
        }

        void run() {
            while (!closed.get()) {
                Jedis jedis = null;
                try {
                    jedis = node.pool().getResource();
                    connection = jedis;
                    if (closed.get()) {
                        return;
                    }
                    jedis.subscribe(pubSub, channel);
                } catch (RuntimeException e) {
                    if (isNoPermission(e)) {
                        noPermission(node, e);
                        return;
                    }
                    if (!closed.get()) {
                        log.debug("Release notifications from {} interrupted: {}", node.address(), e.toString());
                    }
                } finally {
                    connection = null;
                    if (jedis != null) {
                        jedis.getConnection().setBroken(); // a subscribed connection is never reused
                        jedis.close();
                    }
                }
                sleepQuietly(RECONNECT_MILLIS);
            }
        }

        void stop() {
            Jedis jedis = connection;
            if (jedis != null) {
                jedis.getConnection().disconnect(); // ends a blocked read, even on a frozen node
            }
        }

        private void sleepQuietly(long millis) {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                closed.set(true);
            }
        }
    }

    /** One waiter's watch: signalled by any release of its key since it last returned true. */
    private final class Waiter implements ReleaseWatch {
        private final String lockKey;
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition signalled = lock.newCondition();
        private boolean pending;

        Waiter(String lockKey) {
            this.lockKey = lockKey;
        }

        void signal() {
            lock.lock();
            try {
                pending = true;
                signalled.signalAll();
            } finally {
                lock.unlock();
            }
        }

        @Override
        public boolean await(Duration timeout) throws InterruptedException {
            long nanos = timeout.toNanos();
            lock.lock();
            try {
                while (!pending && nanos > 0) {
                    nanos = signalled.awaitNanos(nanos);
                }
                boolean was = pending;
                pending = false;
                return was;
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void close() {
            waiters.computeIfPresent(lockKey, (k, set) -> {
                set.remove(this);
                return set.isEmpty() ? null : set;
            });
        }
    }
}
