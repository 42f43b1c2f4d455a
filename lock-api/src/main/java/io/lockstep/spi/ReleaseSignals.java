package io.lockstep.spi;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Release notices from a backend's own channel (Redis pub/sub, PostgreSQL {@code LISTEN/NOTIFY}) turned
 * into {@link ReleaseWatch}es: one subscription per provider, on its own thread, started by the first
 * watch. A subclass only says how to subscribe ({@link #listen()}); this class keeps the waiters, wakes
 * them, and handles failure the same way for every backend:
 *
 * <ul>
 *   <li>When the subscription drops, every waiter is woken (a notice may have been missed) and it
 *       subscribes again; while subscribing keeps failing it backs off exponentially from 50 ms up to
 *       the maximum backoff, and the failure is logged once as a warning (see {@link
 *       #worthAWarning}), then at debug level until it works again.
 *   <li>A new watch waits for the first subscription only until it has succeeded or failed (at most
 *       the first-listen wait), and not at all once an attempt failed: waiting degrades to polling,
 *       never stalls. Waiters poll anyway, so a lost notice costs time, never a lock.
 * </ul>
 *
 * <p>Thread-safe.
 */
public abstract class ReleaseSignals implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ReleaseSignals.class);

    private static final long FIRST_BACKOFF_MILLIS = 50;

    private final String threadName;
    private final Duration maxBackoff;
    private final Duration firstListenWait;
    private final Duration closeJoin;
    /** Where the notices come from, for log lines (never a password). */
    protected final String where;

    private final Map<String, Set<Watch>> watchers = new ConcurrentHashMap<>();
    private volatile @Nullable Thread thread;
    /** Counted down when the current attempt to subscribe has succeeded or failed. */
    private volatile CountDownLatch attempt = new CountDownLatch(1);
    /** The last attempt failed: new watches do not wait for the subscription. */
    private volatile boolean degraded;
    /** The current attempt got as far as {@link #listening()}. */
    private volatile boolean heard;

    private volatile boolean closed;

    /**
     * @param threadName the name of the subscribing thread
     * @param where the backend's address, for log lines
     * @param maxBackoff the longest pause between two attempts to subscribe
     * @param firstListenWait the longest a new watch waits for a first attempt to succeed or fail
     * @param closeJoin how long {@link #close()} waits for the subscribing thread to end
     */
    protected ReleaseSignals(
            String threadName, String where, Duration maxBackoff, Duration firstListenWait, Duration closeJoin) {
        this.threadName = Objects.requireNonNull(threadName, "threadName");
        this.where = Objects.requireNonNull(where, "where");
        this.maxBackoff = Objects.requireNonNull(maxBackoff, "maxBackoff");
        this.firstListenWait = Objects.requireNonNull(firstListenWait, "firstListenWait");
        this.closeJoin = Objects.requireNonNull(closeJoin, "closeJoin");
    }

    /**
     * One subscription, on the subscribing thread: subscribe, call {@link #listening()} once notices can
     * no longer be missed, pass each notice's lock name to {@link #signal(String)}, and return (or throw)
     * when the subscription ends; it is called again after a backoff until {@link #isClosed()}. Throws
     * an unchecked exception when subscribing or listening fails.
     */
    protected abstract void listen();

    /**
     * Ends a {@link #listen()} in progress, from {@link #close()}; the subscribing thread is interrupted
     * afterwards in any case. Does nothing by default. Must not throw.
     */
    protected void stopListening() {}

    /**
     * Whether {@code failure}, the {@code failuresInARow}-th attempt in a row that never got to {@link
     * #listening()}, is worth the one warning; by default the first one is.
     */
    protected boolean worthAWarning(RuntimeException failure, int failuresInARow) {
        return true;
    }

    /** The warning logged for {@code failure}; by default it names the backend and says waiters poll. */
    protected String warning(RuntimeException failure) {
        return "Release notifications from " + where + " fail (" + failure.getMessage()
                + "); waiters poll for free locks (at most every second) until they work again";
    }

    /** Marks the subscription live: wakes every waiter (a release may have come before it). */
    protected final void listening() {
        heard = true;
        degraded = false;
        attempt.countDown();
        wakeEveryone();
    }

    /** Wakes the waiters of lock {@code name}. */
    protected final void signal(String name) {
        Set<Watch> set = watchers.get(name);
        if (set != null) {
            set.forEach(Watch::signal);
        }
    }

    /** Whether {@link #close()} was called. */
    protected final boolean isClosed() {
        return closed;
    }

    /** A watch on {@code name}: live when this returns, unless subscribing failed (then its waiter polls). */
    public final ReleaseWatch watch(String name) {
        ensureStarted();
        Watch watch = new Watch(name);
        watchers.computeIfAbsent(name, n -> ConcurrentHashMap.newKeySet()).add(watch);
        awaitFirstSubscription();
        return watch;
    }

    /**
     * For a subclass that wakes waiters of its own (not opened by {@link #watch}): starts subscribing if
     * nobody has yet, and waits as {@link #watch} does for the first attempt to succeed or fail. Call it
     * after the waiter can be woken ({@link #wakeOwnWaiters}), so a subscription that starts meanwhile
     * wakes it.
     */
    protected final void subscribe() {
        ensureStarted();
        awaitFirstSubscription();
    }

    private void awaitFirstSubscription() {
        if (!degraded) {
            try {
                // Wait briefly for the subscription so a release right after our failed attempt is heard;
                // only until the attempt succeeds or fails, so a failing subscription never stalls a waiter.
                attempt.await(firstListenWait.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Wakes the waiters a subclass keeps itself, whenever every watch is woken: the subscription started
     * or dropped (a notice may have been missed), or this closed. Must not block. Does nothing by default.
     */
    protected void wakeOwnWaiters() {}

    private synchronized void ensureStarted() {
        if (thread != null || closed) {
            return;
        }
        Thread t = new Thread(this::subscribeLoop, threadName);
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    private void subscribeLoop() {
        long backoffMillis = FIRST_BACKOFF_MILLIS;
        int failures = 0;
        boolean warned = false;
        while (!closed) {
            CountDownLatch current = attempt;
            heard = false;
            RuntimeException failure = null;
            try {
                listen();
            } catch (RuntimeException e) {
                failure = e;
            }
            if (closed) {
                return;
            }
            boolean worked = heard;
            if (worked) {
                // It worked until it dropped: start over as on the first attempt.
                backoffMillis = FIRST_BACKOFF_MILLIS;
                failures = 0;
                if (warned) {
                    log.info("Release notifications from {} work again", where);
                    warned = false;
                }
            } else {
                failures++;
                degraded = true;
            }
            if (failure != null) {
                if (!worked && !warned && worthAWarning(failure, failures)) {
                    warned = true;
                    log.warn(warning(failure));
                } else {
                    log.debug(
                            "Release notifications from {} dropped; subscribing again: {}", where, failure.toString());
                }
            }
            current.countDown();
            wakeEveryone();
            try {
                Thread.sleep(backoffMillis);
            } catch (InterruptedException e) {
                return;
            }
            if (!worked) {
                backoffMillis = Math.min(maxBackoff.toMillis(), backoffMillis * 2);
            }
            attempt = new CountDownLatch(1);
        }
    }

    private void wakeEveryone() {
        watchers.values().forEach(set -> set.forEach(Watch::signal));
        wakeOwnWaiters();
    }

    /**
     * Stops subscribing and wakes every waiter; returns within the close join time given at construction.
     */
    @Override
    public void close() {
        closed = true;
        stopListening();
        Thread t = thread;
        if (t != null) {
            t.interrupt();
            if (!closeJoin.isZero()) {
                try {
                    t.join(closeJoin.toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
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
