package io.lockstep.jdbc.internal;

import io.lockstep.spi.ReleaseWatch;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code LISTEN} connection per provider, opened on the first wait, that wakes the waiters of a lock
 * when its release is announced with {@code pg_notify}. When the connection drops it reconnects (backing
 * off up to {@link #MAX_BACKOFF}) and wakes every waiter, so nobody sleeps on a missed notification;
 * waiters also poll at the holder's time left, so a lost notification costs time, never a lock.
 */
public final class PgReleaseSignals implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PgReleaseSignals.class);

    static final Duration MAX_BACKOFF = Duration.ofSeconds(10);
    private static final Duration FIRST_LISTEN_WAIT = Duration.ofSeconds(2);
    private static final int POLL_MILLIS = 250;

    private final DataSource dataSource;
    private final String channel;
    private final String where;
    private final Map<String, Set<Watch>> watchers = new ConcurrentHashMap<>();
    private volatile @Nullable Thread thread;
    private volatile @Nullable Connection connection;
    private volatile CountDownLatch attempt = new CountDownLatch(1);
    private volatile boolean degraded;
    private volatile boolean closed;

    /** Signals for releases announced on {@code channel} of the database behind {@code dataSource}. */
    public PgReleaseSignals(DataSource dataSource, String channel, String where) {
        this.dataSource = dataSource;
        this.channel = channel;
        this.where = where;
    }

    /** A watch on {@code name}, listening when this returns unless listening failed (then it polls). */
    public ReleaseWatch watch(String name) {
        ensureStarted();
        Watch watch = new Watch(name);
        watchers.computeIfAbsent(name, n -> ConcurrentHashMap.newKeySet()).add(watch);
        if (!degraded) {
            try {
                attempt.await(FIRST_LISTEN_WAIT.toMillis(), TimeUnit.MILLISECONDS);
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
        Thread t = new Thread(this::listenLoop, "lockstep-jdbc-releases");
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    private void listenLoop() {
        long backoffMillis = 50;
        boolean warned = false;
        while (!closed) {
            CountDownLatch current = attempt;
            boolean listened = false;
            try (Connection c = dataSource.getConnection()) {
                connection = c;
                c.setAutoCommit(true);
                try (Statement st = c.createStatement()) {
                    st.execute("LISTEN \"" + channel + "\"");
                }
                listened = true;
                degraded = false;
                current.countDown();
                wakeEveryone(); // anything released while we were not listening
                if (warned) {
                    log.info("Release notifications from {} work again", where);
                    warned = false;
                }
                backoffMillis = 50;
                PGConnection pg = c.unwrap(PGConnection.class);
                while (!closed) {
                    PGNotification[] batch = pg.getNotifications(POLL_MILLIS);
                    if (batch == null) {
                        continue;
                    }
                    for (PGNotification n : batch) {
                        Set<Watch> set = watchers.get(n.getParameter());
                        if (set != null) {
                            set.forEach(Watch::signal);
                        }
                    }
                }
            } catch (SQLException | RuntimeException e) {
                if (closed) {
                    return;
                }
                if (!listened) {
                    degraded = true;
                }
                if (!warned && !listened) {
                    warned = true;
                    log.warn(
                            "Listening for releases on {} failed ({}); waiters poll (at most every second) until it"
                                    + " works again",
                            where,
                            e.getMessage());
                } else {
                    log.debug("Release listener on {} dropped; reconnecting: {}", where, e.toString());
                }
            } finally {
                connection = null;
            }
            current.countDown();
            wakeEveryone();
            try {
                Thread.sleep(backoffMillis);
            } catch (InterruptedException e) {
                return;
            }
            backoffMillis = Math.min(MAX_BACKOFF.toMillis(), backoffMillis * 2);
            attempt = new CountDownLatch(1);
        }
    }

    private void wakeEveryone() {
        watchers.values().forEach(set -> set.forEach(Watch::signal));
    }

    @Override
    public void close() {
        closed = true;
        Thread t = thread;
        if (t != null) {
            t.interrupt();
            try {
                t.join(POLL_MILLIS * 4L);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
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
