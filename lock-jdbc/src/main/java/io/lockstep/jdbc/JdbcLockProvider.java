package io.lockstep.jdbc;

import io.lockstep.BackendUnavailableException;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockRuntime;
import io.lockstep.jdbc.internal.Connections;
import io.lockstep.jdbc.internal.Dialect;
import io.lockstep.jdbc.internal.LeaseBackend;
import io.lockstep.jdbc.internal.SessionBackend;
import io.lockstep.jdbc.internal.SqlBackend;
import io.lockstep.spi.BackendLockProvider;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.ForwardingLockProvider;
import java.time.Duration;
import java.util.Objects;
import javax.sql.DataSource;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Handles;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.SqlStatements;
import org.jspecify.annotations.Nullable;

/**
 * Locks in a relational database (PostgreSQL, MariaDB, H2; not MySQL), tier {@link
 * io.lockstep.StrengthTier#TRANSACTIONAL}: fencing tokens from a database sequence, which a rollback or a
 * restart never takes back; expiry on the database's clock, never the client's. {@link JdbcMode#LEASE}
 * holds no connection between calls; {@link JdbcMode#SESSION} holds the row lock in an open transaction
 * on a connection of its own, so a holder whose connection dies loses the lock at once. On PostgreSQL
 * waiters are woken by {@code LISTEN/NOTIFY} (one connection per provider).
 *
 * <p>Explicit wiring over an application's own {@link DataSource} (bounded, ideally pooled):
 *
 * <pre>{@code
 * try (LockProvider locks = JdbcLockProvider.builder(dataSource).mode(JdbcMode.LEASE).build()) { ... }
 * }</pre>
 *
 * <p>Building checks the table, the sequence, the privileges and that the database is writable, and
 * throws {@link LockConfigurationException} naming the setting if not. Thread-safe.
 */
public final class JdbcLockProvider extends ForwardingLockProvider {

    /** The default table in lease mode. */
    public static final String DEFAULT_LEASE_TABLE = "lockstep_lease";
    /** The default table in session mode (one mode per table: their rows mean different things). */
    public static final String DEFAULT_SESSION_TABLE = "lockstep_session";
    /**
     * Session mode: how long the server keeps the transaction of a holder that sends nothing (a frozen
     * JVM) before it ends the session and the lock; heartbeats go every third of it.
     */
    public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(10);

    private final SqlBackend<?> backend;

    private JdbcLockProvider(SqlBackend<?> backend, LockRuntime runtime) {
        super(new BackendLockProvider<>(backend, runtime));
        this.backend = backend;
    }

    /** A builder over {@code dataSource}, which the provider uses but does not close. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** The lock table this provider uses. */
    public String table() {
        return backend.table();
    }

    /** Builds a {@link JdbcLockProvider}. */
    public static final class Builder {
        private final DataSource dataSource;
        private JdbcMode mode = JdbcMode.LEASE;
        private @Nullable String table;
        private boolean createSchema;
        private LockRuntime runtime = LockRuntime.defaults();
        private Duration sessionTimeout = DEFAULT_SESSION_TIMEOUT;
        private Duration callTimeout = Duration.ofSeconds(5);
        private @Nullable String where;
        private @Nullable AutoCloseable closeWithProvider;
        private @Nullable DataSource listenSource;
        private @Nullable Boolean listen;
        private boolean statementsBoundByServer;
        private double driftFactor = ClockDrift.DEFAULT_FACTOR;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /** Lease mode (the default) or session mode. */
        public Builder mode(JdbcMode mode) {
            this.mode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /**
         * The lock table: an SQL identifier, optionally schema-qualified; the fence sequence is named after
         * it with {@code _fence}. Defaults to {@value #DEFAULT_LEASE_TABLE} or {@value #DEFAULT_SESSION_TABLE}.
         */
        public Builder table(String table) {
            this.table = Dialect.requireTableName(Objects.requireNonNull(table, "table"));
            return this;
        }

        /** Whether to create the table and sequence if missing (off by default: use the README's DDL). */
        public Builder createSchema(boolean createSchema) {
            this.createSchema = createSchema;
            return this;
        }

        /** The runtime (scheduler, executors, clock, metrics). */
        public Builder runtime(LockRuntime runtime) {
            this.runtime = Objects.requireNonNull(runtime, "runtime");
            return this;
        }

        /**
         * Session mode: the least idle-in-transaction timeout the server applies to held locks (default
         * 10 s, at least 300 ms); each lock's is the longer of this and its lease time, so a holder that
         * stops sending heartbeats blocks others at most that long, and is never counted valid after it.
         */
        public Builder sessionTimeout(Duration sessionTimeout) {
            if (sessionTimeout == null || sessionTimeout.toMillis() < 300) {
                throw new IllegalArgumentException("sessionTimeout must be at least 300ms, was " + sessionTimeout);
            }
            this.sessionTimeout = sessionTimeout;
            return this;
        }

        /**
         * Lease mode: the clock drift allowance as a fraction of the lease time, in [0, 0.5), default 0.01.
         * The row expires after the whole lease time on the database's clock, which may run faster than the
         * client's, so a grant or extension is counted valid for {@code leaseTime − (leaseTime × driftFactor +
         * 2 ms)} from when it was sent (see {@link ClockDrift}); declared as {@code
         * ClockAssumption.rateDrift(driftFactor)}. Session mode ignores it.
         *
         * @throws IllegalArgumentException naming {@code driftFactor} and the value if it is outside [0, 0.5)
         *     or not a number
         */
        public Builder driftFactor(double driftFactor) {
            this.driftFactor = ClockDrift.requireFactor(driftFactor);
            return this;
        }

        /** The bound of each statement (JDBC query timeout, whole seconds, default 5 s). */
        public Builder callTimeout(Duration callTimeout) {
            if (callTimeout == null || callTimeout.isNegative() || callTimeout.isZero()) {
                throw new IllegalArgumentException("callTimeout must be positive, was " + callTimeout);
            }
            this.callTimeout = callTimeout;
            return this;
        }

        /**
         * Whether PostgreSQL waiters are woken by LISTEN/NOTIFY. {@code true} takes the LISTEN connection
         * from the builder's {@code DataSource} on the first wait and keeps it for the provider's lifetime:
         * count it in the application pool's size. By default notifications are on only if {@link
         * #notifications(DataSource)} named a source of their own; else waiters poll.
         */
        public Builder notifications(boolean listen) {
            this.listen = listen;
            return this;
        }

        /**
         * Notifications on, with the LISTEN connection taken from {@code listenSource} (ideally unpooled,
         * one connection for the provider's lifetime), never from the application's pool.
         */
        public Builder notifications(DataSource listenSource) {
            this.listenSource = Objects.requireNonNull(listenSource, "listenSource");
            this.listen = true;
            return this;
        }

        /** Where the database is, for messages (never with a password); by default the product name. */
        public Builder describedAs(String where) {
            this.where = Objects.requireNonNull(where, "where");
            return this;
        }

        /** For the factory: the pool it built, closed with the provider. */
        Builder closeWithProvider(AutoCloseable pool) {
            this.closeWithProvider = pool;
            return this;
        }

        /**
         * For the factory: every connection of the pool already carries a server-side statement timeout of
         * the call timeout, so no per-statement JDBC query timeout is set.
         */
        Builder statementsBoundByServer() {
            this.statementsBoundByServer = true;
            return this;
        }

        /**
         * Connects, checks (or creates) the schema and builds the provider.
         *
         * @throws LockConfigurationException if the table or sequence is missing, a privilege is lacking or
         *     the database is read-only, naming the setting
         * @throws BackendUnavailableException if the database cannot be reached
         */
        public JdbcLockProvider build() {
            // Every connection, also the application's, is taken in auto-commit and bounded by a network
            // timeout lock-jdbc sets itself; both are put back on return (Connections).
            Connections connections =
                    new Connections(dataSource, (int) Math.min(Integer.MAX_VALUE, 2 * callTimeout.toMillis()));
            Jdbi jdbi = Jdbi.create(connections);
            jdbi.getConfig(Handles.class).setForceEndTransactions(false);
            if (!statementsBoundByServer) {
                jdbi.getConfig(SqlStatements.class)
                        .setQueryTimeout((int) Math.max(1, (callTimeout.toMillis() + 999) / 1000));
            }
            String tableName =
                    table != null ? table : mode == JdbcMode.LEASE ? DEFAULT_LEASE_TABLE : DEFAULT_SESSION_TABLE;
            Dialect dialect;
            String place;
            try (Handle h = jdbi.open()) {
                String product = h.getConnection().getMetaData().getDatabaseProductName();
                dialect = Dialect.forProduct(product, tableName);
                place = where != null ? where : dialect.product();
                try {
                    dialect.check(h);
                } catch (LockConfigurationException missing) {
                    // Only a missing schema is created, and only when asked: DDL, even IF NOT EXISTS, waits
                    // for metadata locks that open session-mode transactions hold (MariaDB), so it is not
                    // sent when the table and sequence are there.
                    if (!createSchema || !Dialect.isMissingSchema(missing)) {
                        throw missing;
                    }
                    for (String ddl : dialect.ddl()) {
                        h.execute(ddl);
                    }
                    dialect.check(h);
                }
            } catch (LockConfigurationException e) {
                closeQuietly();
                throw e;
            } catch (java.sql.SQLException | RuntimeException e) {
                closeQuietly();
                String at = where != null ? where : "the database";
                if (sqlState(e).startsWith("SQL state 42")) {
                    // Syntax or access rule: the database is there; the table name is the only text we add.
                    throw new LockConfigurationException(
                            "table: the statements on table '" + tableName
                                    + "' were rejected (" + sqlState(e) + "): " + describe(e)
                                    + "; is it a reserved word? choose another table name",
                            e);
                }
                throw new BackendUnavailableException(
                        at + ": could not connect or check the lock table (" + sqlState(e) + "): " + describe(e),
                        e,
                        true);
            }
            boolean notified = listen != null ? listen : listenSource != null;
            DataSource listenFrom = notified ? (listenSource != null ? listenSource : dataSource) : null;
            SqlBackend<?> backend = mode == JdbcMode.LEASE
                    ? new LeaseBackend(jdbi, connections, dialect, place, listenFrom, closeWithProvider, driftFactor)
                    : new SessionBackend(
                            jdbi, connections, dialect, place, listenFrom, closeWithProvider, runtime, sessionTimeout);
            return new JdbcLockProvider(backend, runtime);
        }

        private void closeQuietly() {
            if (closeWithProvider != null) {
                try {
                    closeWithProvider.close();
                } catch (Exception ignored) {
                    // already failing
                }
            }
        }

        /**
         * The failure and, when the pool hides it ("Connection is not available"), the driver's reason
         * (such as a TLS handshake refused): without it the message would not name what to fix.
         */
        private static String describe(Throwable e) {
            StringBuilder message = new StringBuilder(String.valueOf(e.getMessage()));
            int added = 0;
            for (Throwable t = e.getCause(); t != null && added < 2; t = t.getCause() == t ? null : t.getCause()) {
                if (t.getMessage() != null && message.indexOf(t.getMessage()) < 0) {
                    message.append(" (").append(t.getMessage()).append(')');
                    added++;
                }
            }
            return message.toString();
        }

        private static String sqlState(Throwable e) {
            for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
                if (t instanceof java.sql.SQLException s && s.getSQLState() != null) {
                    return "SQL state " + s.getSQLState();
                }
            }
            return "no SQL state";
        }
    }
}
