package io.lockstep.jdbc.internal;

import io.lockstep.LockConfigurationException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import javax.sql.DataSource;
import org.jdbi.v3.core.ConnectionFactory;

/**
 * Every connection lock-jdbc takes, from its own pool or from the application's {@link DataSource}:
 * taken in auto-commit (lock-jdbc commits each statement of lease mode and controls session mode's
 * transaction itself, so a pool configured with auto-commit off cannot roll a claim back when the
 * connection goes back) and with a network timeout lock-jdbc sets itself, so no call waits on a silent
 * server longer than that, whatever the pool's driver settings. On return, whatever lock-jdbc changed is
 * put back as it found it: the auto-commit and the network timeout (session mode resets the dialect's
 * session settings itself before).
 * Thread-safe.
 */
public final class Connections implements ConnectionFactory {

    /** Runs the driver's timeout work on the calling thread: the drivers only arm their socket's timer. */
    private static final Executor DIRECT = Runnable::run;

    private final DataSource source;
    private final int networkTimeoutMillis;
    private final Map<Connection, Saved> saved = Collections.synchronizedMap(new IdentityHashMap<>());

    /** What a connection was like when lock-jdbc took it. */
    private record Saved(boolean autoCommit, int networkTimeoutMillis) {}

    /**
     * @param networkTimeoutMillis the bound of each wait for the server on every connection taken
     *     ({@link Connection#setNetworkTimeout}); 0 for none
     */
    public Connections(DataSource source, int networkTimeoutMillis) {
        this.source = source;
        this.networkTimeoutMillis = networkTimeoutMillis;
    }

    /** A connection in auto-commit with lock-jdbc's network timeout; give it back with {@link #closeConnection}. */
    @Override
    public Connection openConnection() throws SQLException {
        Connection c = source.getConnection();
        try {
            boolean autoCommit = c.getAutoCommit();
            int network = networkTimeout(c);
            if (!autoCommit) {
                c.setAutoCommit(true); // nothing is open on a connection fresh from the pool
                if (!c.getAutoCommit()) {
                    throw new LockConfigurationException("dataSource: its connections stay in a transaction after"
                            + " setAutoCommit(true) (found auto-commit off); lock-jdbc needs auto-commit on"
                            + " the connections it takes, or it cannot commit what it writes");
                }
            }
            if (networkTimeoutMillis > 0 && network != networkTimeoutMillis && network != -1) {
                c.setNetworkTimeout(DIRECT, networkTimeoutMillis);
            }
            saved.put(c, new Saved(autoCommit, network));
            return c;
        } catch (SQLException | RuntimeException e) {
            try {
                c.close();
            } catch (SQLException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * Ends whatever lock-jdbc left open (rolls it back), puts back
     * the auto-commit and network timeout the connection came with, and returns it to its pool.
     */
    @Override
    public void closeConnection(Connection c) throws SQLException {
        Saved before = saved.remove(c);
        try {
            if (before != null && !c.isClosed()) {
                restore(c, before);
            }
        } catch (SQLException | RuntimeException e) {
            // Not as it was found: the application must not get it back. Pools evict an aborted connection.
            try {
                c.abort(DIRECT);
            } catch (SQLException | RuntimeException ignored) {
                // closed below
            }
        } finally {
            c.close();
        }
    }

    private void restore(Connection c, Saved before) throws SQLException {
        if (!c.getAutoCommit()) {
            c.rollback();
            c.setAutoCommit(true);
        }
        if (!before.autoCommit()) {
            c.setAutoCommit(false);
        }
        if (networkTimeoutMillis > 0
                && before.networkTimeoutMillis() != -1
                && before.networkTimeoutMillis() != networkTimeoutMillis) {
            c.setNetworkTimeout(DIRECT, before.networkTimeoutMillis());
        }
    }

    /** The connection's network timeout, or -1 if the driver has none (then lock-jdbc sets none either). */
    private int networkTimeout(Connection c) throws SQLException {
        if (networkTimeoutMillis <= 0) {
            return -1;
        }
        try {
            return c.getNetworkTimeout();
        } catch (SQLFeatureNotSupportedException | UnsupportedOperationException e) {
            return -1;
        }
    }
}
