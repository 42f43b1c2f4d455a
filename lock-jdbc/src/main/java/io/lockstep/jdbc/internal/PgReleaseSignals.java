package io.lockstep.jdbc.internal;

import io.lockstep.BackendUnavailableException;
import io.lockstep.spi.ReleaseSignals;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * One {@code LISTEN} connection per provider, opened on the first wait, that wakes the waiters of a lock
 * when its release is announced with {@code pg_notify}; reconnecting (backing off up to {@link
 * #MAX_BACKOFF}), waking every waiter after a drop and degrading to polling are {@link ReleaseSignals}'.
 */
public final class PgReleaseSignals extends ReleaseSignals {

    static final Duration MAX_BACKOFF = Duration.ofSeconds(10);
    private static final Duration FIRST_LISTEN_WAIT = Duration.ofSeconds(2);
    /** How long one wait for notifications lasts: how soon the listening thread sees close(). */
    private static final int POLL_MILLIS = 250;

    private final DataSource dataSource;
    private final String channel;

    /** Signals for releases announced on {@code channel} of the database behind {@code dataSource}. */
    public PgReleaseSignals(DataSource dataSource, String channel, String where) {
        super("lockstep-jdbc-releases", where, MAX_BACKOFF, FIRST_LISTEN_WAIT, Duration.ofMillis(4L * POLL_MILLIS));
        this.dataSource = dataSource;
        this.channel = channel;
    }

    @Override
    protected void listen() {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            try (Statement st = c.createStatement()) {
                st.execute("LISTEN \"" + channel + "\"");
            }
            listening();
            PGConnection pg = c.unwrap(PGConnection.class);
            while (!isClosed()) {
                PGNotification[] batch = pg.getNotifications(POLL_MILLIS);
                if (batch == null) {
                    continue;
                }
                for (PGNotification n : batch) {
                    signal(n.getParameter());
                }
            }
        } catch (SQLException e) {
            throw new BackendUnavailableException("LISTEN on " + where + " failed: " + e.getMessage(), e, true);
        }
    }
}
