package io.lockstep.jdbc.internal;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Capability;
import io.lockstep.ClockAssumption;
import io.lockstep.LockConfigurationException;
import io.lockstep.ProviderInfo;
import io.lockstep.StrengthTier;
import io.lockstep.spi.LockBackend;
import io.lockstep.spi.ReleaseWatch;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.EnumSet;
import java.util.Set;
import java.util.function.Function;
import javax.sql.DataSource;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.SqlStatements;
import org.jspecify.annotations.Nullable;

/**
 * What both modes share: the pool (plain JDBC for the statements of acquire and release, Jdbi over the
 * same pool for the rest), the dialect, release signals, error translation.
 */
public abstract class SqlBackend<H> implements LockBackend<H> {

    /** The provider name every mode reports. */
    public static final String NAME = "jdbc";

    protected final Jdbi jdbi;
    /** Where the hot path takes its connections: the pool Jdbi opens its handles from. */
    protected final Connections connections;

    protected final Dialect dialect;
    protected final String where;
    private final @Nullable PgReleaseSignals signals;
    private final @Nullable AutoCloseable onClose;
    protected volatile boolean closed;

    /**
     * @param jdbi over {@code connections}; its query timeout ({@link SqlStatements}) bounds the plain
     *     statements too
     * @param connections the pool
     * @param listenSource where the PostgreSQL release listener takes its one connection from; null for
     *     no notifications (waiters poll)
     * @param onClose closed with the backend (the pool the provider built), or null
     */
    protected SqlBackend(
            Jdbi jdbi,
            Connections connections,
            Dialect dialect,
            String where,
            @Nullable DataSource listenSource,
            @Nullable AutoCloseable onClose) {
        this.jdbi = jdbi;
        this.connections = connections;
        this.dialect = dialect;
        Integer timeout = jdbi.getConfig(SqlStatements.class).getQueryTimeout();
        dialect.queryTimeout(timeout == null ? 0 : timeout);
        this.where = where;
        this.signals = listenSource != null && dialect.channel().isPresent()
                ? new PgReleaseSignals(listenSource, dialect.channel().get(), where)
                : null;
        this.onClose = onClose;
    }

    /**
     * The clock assumption of a mode. Lease mode: expiry runs on the database's clock ({@code
     * clock_timestamp() + leaseTime}), and validity leaves an allowance of {@code leaseTime × driftFactor + 2
     * ms} for a database clock that runs fast ({@link io.lockstep.spi.ClockDrift}). Session mode: no expiry
     * on the database's clock while the holder sends heartbeats, and no allowance, so rates are assumed
     * equal (see the README).
     */
    public static ClockAssumption clock(boolean sessionMode, double driftFactor) {
        return sessionMode ? ClockAssumption.NONE : ClockAssumption.rateDrift(driftFactor);
    }

    /** {@link #declaredInfo(boolean, boolean, double)} with the default drift factor. */
    public static ProviderInfo declaredInfo(boolean sessionMode, boolean notified) {
        return declaredInfo(sessionMode, notified, io.lockstep.spi.ClockDrift.DEFAULT_FACTOR);
    }

    /**
     * What a provider claims without connecting: fences always; expiry and extend in lease mode only
     * (a session lock lasts as long as its database session); notified waits where the database has a
     * notification channel and notifications are on (PostgreSQL's LISTEN/NOTIFY); the clock assumption of
     * the mode ({@link #clock}).
     */
    public static ProviderInfo declaredInfo(boolean sessionMode, boolean notified, double driftFactor) {
        Set<Capability> caps = EnumSet.of(Capability.FENCING);
        if (!sessionMode) {
            caps.add(Capability.LEASE_EXPIRY);
            caps.add(Capability.EXTEND);
        }
        if (notified) {
            caps.add(Capability.NOTIFIED_WAIT);
        }
        return new ProviderInfo(NAME, StrengthTier.TRANSACTIONAL, caps, clock(sessionMode, driftFactor));
    }

    /**
     * Fences, expiry, extend, notified waits where the database has them; less {@code missing}; under
     * {@code clock}.
     */
    protected ProviderInfo infoWithout(Set<Capability> missing, ClockAssumption clock) {
        Set<Capability> caps = EnumSet.of(Capability.FENCING, Capability.LEASE_EXPIRY, Capability.EXTEND);
        caps.removeAll(missing);
        if (signals != null) {
            caps.add(Capability.NOTIFIED_WAIT);
        }
        return new ProviderInfo(NAME, StrengthTier.TRANSACTIONAL, caps, clock);
    }

    @Override
    public ReleaseWatch watch(String name) {
        return signals != null ? signals.watch(name) : ReleaseWatch.polling();
    }

    /** The lock table. */
    public String table() {
        return dialect.table();
    }

    @Override
    public String describe() {
        return where;
    }

    @Override
    public void close() {
        closed = true;
        if (signals != null) {
            signals.close();
        }
        if (onClose != null) {
            try {
                onClose.close();
            } catch (Exception ignored) {
                // closing the pool: nothing left to do if it fails
            }
        }
    }

    protected final void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the lock backend on " + where + " is closed");
        }
    }

    /** One step of the hot path: plain JDBC on a pooled connection. */
    @FunctionalInterface
    protected interface SqlWork<T> {
        T apply(Connection c) throws SQLException;
    }

    /**
     * Runs {@code work} with plain JDBC on a pooled connection in auto-commit, translating failures as
     * {@link #withHandle} does.
     */
    protected final <T> T withConnection(String operation, SqlWork<T> work) {
        Connection c;
        try {
            c = connections.openConnection();
        } catch (SQLException | RuntimeException e) {
            throw failure(operation, e);
        }
        try {
            return work.apply(c);
        } catch (SQLException | RuntimeException e) {
            throw failure(operation, e);
        } finally {
            release(c);
        }
    }

    /** Gives {@code c} back as it was found (see {@link Connections}); a failure there is the pool's to handle. */
    protected final void release(Connection c) {
        try {
            connections.closeConnection(c);
        } catch (SQLException | RuntimeException ignored) {
            // the pool drops a broken connection
        }
    }

    /** Runs {@code work} through Jdbi on a pooled connection in auto-commit, translating failures. */
    protected final <T> T withHandle(String operation, Function<Handle, T> work) {
        try (Handle h = jdbi.open()) {
            return work.apply(h);
        } catch (RuntimeException e) {
            throw failure(operation, e);
        }
    }

    /**
     * A failure as Lockstep reports it: {@link BackendUnavailableException} (transient for connection,
     * timeout and server-shutdown states), naming where and the SQL state, never a password.
     */
    protected final RuntimeException failure(String operation, Throwable e) {
        if (e instanceof BackendUnavailableException
                || e instanceof LockConfigurationException
                || e instanceof IllegalStateException) {
            return (RuntimeException) e;
        }
        SQLException sql = sqlCause(e);
        String state = sql == null ? "no SQL state" : String.valueOf(sql.getSQLState());
        String message = sql == null ? String.valueOf(e.getMessage()) : sql.getMessage();
        if (message != null && message.contains("Connection is not available")) {
            return poolTimedOut(operation, message, sql, e);
        }
        boolean transientFailure = sql == null || dialect.isTransient(sql);
        return new BackendUnavailableException(
                where + ": " + operation + " failed (" + state + "): " + message, e, transientFailure);
    }

    /**
     * Hikari's "Connection is not available" (finding 12 of the 2026-11-26 review) covers three states that
     * need three answers: a pool that could not open any connection, or whose last attempt failed, means the
     * database is unreachable (transient); a pool whose connections are all lent out is busy (transient: the
     * caller's wait time may outlast it) and only in session mode held by locks, which is worth naming.
     */
    private BackendUnavailableException poolTimedOut(
            String operation, String message, @Nullable SQLException sql, Throwable e) {
        SQLException connectFailure = sql == null ? null : sql.getNextException();
        if (connectFailure == null && sql != null && sql.getCause() instanceof SQLException cause) {
            connectFailure = cause;
        }
        if (connectFailure != null || message.contains("total=0")) {
            String reason = connectFailure == null ? message : String.valueOf(connectFailure.getMessage());
            return new BackendUnavailableException(
                    where + ": " + operation + " could not get a connection: the database did not answer (" + reason
                            + ")",
                    e,
                    true);
        }
        return new BackendUnavailableException(
                where + ": " + operation + " found every pooled connection in use (" + message + "); "
                        + busyPoolAdvice(),
                e,
                true);
    }

    /** What to change when every pooled connection is in use; session mode says its locks hold them. */
    protected String busyPoolAdvice() {
        return "raise poolSize if this lasts";
    }

    protected static @Nullable SQLException sqlCause(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException s) {
                return s;
            }
        }
        return null;
    }
}
