package io.lockstep.jdbc.internal;

import io.lockstep.Capability;
import io.lockstep.LockRuntime;
import io.lockstep.LossReason;
import io.lockstep.ProviderInfo;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.AttemptContext;
import io.lockstep.spi.Grant;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.jdbi.v3.core.Jdbi;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Session mode: the lock is a row locked with {@code SELECT ... FOR UPDATE NOWAIT} in a transaction kept
 * open on a pooled connection of its own until release; it ends when that transaction ends, so a holder
 * whose connection or process dies loses it at once. The server's idle-in-transaction timeout of each
 * lock is set to max(session timeout, lease time) in the same statement; a grant and each renewal are
 * valid for the lease time from when they were sent, so the client never counts a lock valid that the
 * server may already have ended (a holder thawed after a freeze). A lease not renewed by the end of its
 * validity has its transaction ended then, freeing the row. One scheduler task sends a heartbeat on each
 * held connection every third of the session timeout; a heartbeat that fails completes the lease's loss
 * signal. Thread-safe.
 */
public final class SessionBackend extends SqlBackend<SessionBackend.Handle> {

    private static final Logger log = LoggerFactory.getLogger(SessionBackend.class);

    /** How soon a waiter looks again when the row is locked: the holder's time left is not known. */
    private static final Duration BUSY_RETRY = Duration.ofMillis(200);

    @Override
    protected String busyPoolAdvice() {
        return "session mode holds one connection per held lock: raise poolSize or use mode=lease";
    }

    /** A held row lock: the transaction's connection, its database session and the loss signal. */
    public static final class Handle {
        final String name;
        final Connection db;
        final long sessionId;
        /** The server's idle-in-transaction timeout of this lock: max(session timeout, lease time). */
        final long idleMillis;

        final CompletableFuture<LossReason> loss = new CompletableFuture<>();
        /** The runtime clock's time the client's validity ends at, moved by each confirmed renewal. */
        long validUntil;

        boolean ended;
        boolean beating;
        /** Whether the connection went back to its pool (once only). */
        boolean returned;

        Handle(String name, Connection db, long sessionId, long idleMillis, long validUntil) {
            this.name = name;
            this.db = db;
            this.sessionId = sessionId;
            this.idleMillis = idleMillis;
            this.validUntil = validUntil;
        }

        /** The id of the database session (PostgreSQL backend pid) holding the lock. */
        public long sessionId() {
            return sessionId;
        }

        @Override
        public String toString() {
            return "Handle[" + name + ", session " + sessionId + "]";
        }
    }

    private final ProviderInfo info;
    private final LockRuntime runtime;
    private final Duration sessionTimeout;
    private final Set<Handle> held = ConcurrentHashMap.newKeySet();
    private @Nullable ScheduledFuture<?> checker;

    public SessionBackend(
            Jdbi jdbi,
            Connections connections,
            Dialect dialect,
            String where,
            @Nullable DataSource listenSource,
            @Nullable AutoCloseable onClose,
            LockRuntime runtime,
            Duration sessionTimeout) {
        super(jdbi, connections, dialect, where, listenSource, onClose);
        this.info = infoWithout(Set.of(Capability.LEASE_EXPIRY, Capability.EXTEND), clock(true, 0));
        this.runtime = runtime;
        this.sessionTimeout = sessionTimeout;
    }

    @Override
    public ProviderInfo info() {
        return info;
    }

    @Override
    public Attempt<Handle> tryLock(AttemptContext attempt) {
        requireOpen();
        // A retry of the same acquire: end the transaction the earlier attempt opened, which frees
        // whatever a lost reply granted, before opening another.
        attempt.attachment(Connection.class).ifPresent(this::end);
        attempt.attach(null);
        Connection db;
        try {
            db = connections.openConnection();
        } catch (SQLException | RuntimeException e) {
            throw failure("tryLock (taking a connection)", e);
        }
        attempt.attach(db);
        String name = attempt.name();
        long sent = runtime.clock().nanoTime();
        // The server keeps a silent holder's transaction at least as long as the client counts it valid
        // (from before the statement was sent), so a holder thawed after a freeze never reports a lock
        // valid that the server has already ended.
        long idle = Math.max(sessionTimeout.toMillis(), attempt.leaseTime().toMillis());
        try {
            db.setAutoCommit(false);
            Optional<Dialect.Locked> locked = dialect.lockRow(db, name, idle);
            if (locked.isEmpty()) {
                // First use of this name: create its row in a transaction of its own, then lock it.
                db.rollback();
                db.setAutoCommit(true);
                dialect.ensureRow(db, name);
                db.setAutoCommit(false);
                locked = dialect.lockRow(db, name, idle);
            }
            if (locked.isEmpty()) {
                end(db);
                attempt.attach(null);
                return Attempt.busy(BUSY_RETRY);
            }
            Handle handle = new Handle(
                    name,
                    db,
                    locked.get().sessionId(),
                    idle,
                    sent + attempt.leaseTime().toNanos());
            held.add(handle);
            ensureChecker();
            expireAt(handle);
            return Attempt.granted(
                    new Grant<>(handle, OptionalLong.of(locked.get().fence()), attempt.leaseTime(), handle.loss));
        } catch (SQLException | RuntimeException e) {
            end(db);
            attempt.attach(null);
            SQLException sql = sqlCause(e);
            if (sql != null && dialect.lockNotAvailable(sql)) {
                return Attempt.busy(BUSY_RETRY);
            }
            throw failure("tryLock", e);
        }
    }

    /**
     * A confirmed heartbeat: valid for the lease time (at most the lock's idle timeout) from when it was
     * sent, since the server keeps the transaction that long after it.
     */
    @Override
    public Optional<Duration> extend(Handle handle, Duration leaseTime) {
        requireOpen();
        long sent = runtime.clock().nanoTime();
        if (!beat(handle)) {
            return Optional.empty();
        }
        Duration validity = leaseTime.toMillis() > handle.idleMillis ? Duration.ofMillis(handle.idleMillis) : leaseTime;
        synchronized (handle) {
            handle.validUntil = Math.max(handle.validUntil, sent + validity.toNanos());
        }
        expireAt(handle);
        return Optional.of(validity);
    }

    /**
     * Ends the transaction, and so frees the row lock, once the client's validity has passed without a
     * renewal, rather than keeping it (with heartbeats) for a late release.
     */
    private void expireAt(Handle handle) {
        long delay;
        synchronized (handle) {
            delay = handle.validUntil - runtime.clock().nanoTime();
        }
        try {
            runtime.scheduler()
                    .schedule(
                            () -> runtime.renewalExecutor().execute(() -> expireIfDue(handle)),
                            Math.max(0, delay),
                            TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException ignored) {
            // shutting down: close() ends every connection
        }
    }

    private void expireIfDue(Handle handle) {
        synchronized (handle) {
            if (handle.ended || runtime.clock().nanoTime() < handle.validUntil) {
                return;
            }
            handle.ended = true;
            handle.loss.complete(LossReason.EXPIRED);
            returnConnection(handle);
        }
        held.remove(handle);
    }

    /** Gives the held connection back once (rolling back, which frees the row lock); with the handle's lock. */
    private void returnConnection(Handle handle) {
        if (!handle.returned) {
            handle.returned = true;
            end(handle.db);
        }
    }

    /** Resets the server's idle timer of the held transaction; false (and the loss signalled) if it is gone. */
    private boolean beat(Handle handle) {
        synchronized (handle) {
            if (handle.ended) {
                return false;
            }
            try {
                dialect.keepAlive(handle.db, handle.idleMillis);
                return true;
            } catch (SQLException | RuntimeException e) {
                // Any error aborts the transaction that holds the lock, or says its session is gone: the
                // lock is lost. Closing the connection in dispose ends whatever is left of it on the server.
                log.debug("heartbeat of '{}' on {} found the session gone: {}", handle.name, where, e.toString());
                handle.ended = true;
                handle.loss.complete(LossReason.SESSION_EXPIRED);
                return false;
            } finally {
                handle.beating = false;
            }
        }
    }

    @Override
    public boolean release(Handle handle) {
        requireOpen();
        synchronized (handle) {
            if (handle.ended) {
                return false;
            }
            handle.ended = true;
            try {
                dialect.commitRelease(handle.db, handle.name);
                return true;
            } catch (SQLException | RuntimeException e) {
                // The transaction, and the lock with it, ended already (or ends when dispose closes it).
                log.debug("release of '{}' on {} found the session gone: {}", handle.name, where, e.toString());
                return false;
            }
        }
    }

    @Override
    public void abandon(AttemptContext attempt) {
        attempt.attachment(Connection.class).ifPresent(this::end);
        attempt.attach(null);
    }

    @Override
    public void dispose(Handle handle) {
        held.remove(handle);
        synchronized (handle) {
            handle.ended = true;
            returnConnection(handle);
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (checker != null) {
                checker.cancel(false);
            }
        }
        super.close();
    }

    /** How many locks this backend holds a connection for. */
    public int heldConnections() {
        return held.size();
    }

    private synchronized void ensureChecker() {
        if (checker != null || closed) {
            return;
        }
        long every = sessionTimeout.toNanos() / 3;
        checker = runtime.scheduler().scheduleWithFixedDelay(this::beatSoon, every, every, TimeUnit.NANOSECONDS);
    }

    /** Runs on the timing thread: hands each held connection's heartbeat to the renewal executor. */
    private void beatSoon() {
        if (closed) {
            return;
        }
        for (Handle handle : held) {
            synchronized (handle) {
                if (handle.beating || handle.ended) {
                    continue; // the last one has not finished: a slow server is not flooded
                }
                handle.beating = true;
            }
            try {
                runtime.renewalExecutor().execute(() -> beat(handle));
            } catch (RejectedExecutionException ignored) {
                return; // shutting down
            }
        }
    }

    /**
     * Rolls back whatever the connection has open, resets the dialect's session settings (MariaDB's idle
     * timeout) and returns it to the pool as it was found (a broken one is aborted and dropped).
     */
    private void end(Connection db) {
        try {
            if (!db.getAutoCommit()) {
                db.rollback();
                db.setAutoCommit(true);
            }
            dialect.resetSession(db);
        } catch (SQLException | RuntimeException e) {
            // A broken connection: abort it so no pool hands it out with lock-jdbc's settings.
            try {
                db.abort(Runnable::run);
            } catch (SQLException | RuntimeException ignored) {
                // closed below
            }
        }
        release(db);
    }
}
