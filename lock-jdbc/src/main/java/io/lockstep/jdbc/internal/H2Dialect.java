package io.lockstep.jdbc.internal;

import io.lockstep.LockConfigurationException;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.UnableToExecuteStatementException;

/**
 * H2 2.x (typically in memory, for tests and single-process tools): conditional {@code UPDATE}s read back
 * through {@code FINAL TABLE}/{@code OLD TABLE}, {@code CURRENT_TIMESTAMP} for expiry, a sequence for
 * fences, {@code FOR UPDATE NOWAIT} for session locks. No notifications (waiters poll); no server-side
 * idle timeout (an embedded database shares the holder's process, so it cannot outlive a frozen holder).
 * A name's row is created once, by the first claim, with its own statement.
 */
public final class H2Dialect extends Dialect {

    private static final String EPOCH = "TIMESTAMP WITH TIME ZONE '1970-01-01 00:00:00+00'";

    private final String ensureSql;
    private final String claimSql;
    private final String leftSql;
    private final String extendSql;
    private final String releaseSql;
    private final String freeSql;
    private final String lockSql;

    H2Dialect(String table) {
        super(table);
        this.ensureSql = "INSERT INTO " + this.table + " (name, owner, fence, expires_at) SELECT :name, '', 0, " + EPOCH
                + " FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM " + this.table + " WHERE name = :name)";
        // The fence is drawn by the UPDATE, which runs with the row locked.
        this.claimSql = "SELECT fence FROM FINAL TABLE (UPDATE " + this.table + " SET owner = :owner,"
                + " fence = CASE WHEN owner = :owner THEN fence ELSE NEXT VALUE FOR " + sequence + " END,"
                + " expires_at = DATEADD(MILLISECOND, :ms, CURRENT_TIMESTAMP)"
                + " WHERE name = :name AND (expires_at <= CURRENT_TIMESTAMP OR owner = :owner))";
        this.leftSql = "SELECT GREATEST(0, DATEDIFF(MILLISECOND, CURRENT_TIMESTAMP, expires_at)) FROM " + this.table
                + " WHERE name = :name";
        this.extendSql = "UPDATE " + this.table + " SET expires_at = DATEADD(MILLISECOND, :ms, CURRENT_TIMESTAMP)"
                + " WHERE name = :name AND owner = :owner AND expires_at > CURRENT_TIMESTAMP";
        this.releaseSql = "SELECT expires_at > CURRENT_TIMESTAMP FROM OLD TABLE (UPDATE " + this.table
                + " SET owner = '', expires_at = " + EPOCH + " WHERE name = :name AND owner = :owner)";
        this.freeSql = "UPDATE " + this.table + " SET owner = '', expires_at = " + EPOCH
                + " WHERE name = :name AND owner = :owner";
        this.lockSql = "SELECT name FROM " + this.table + " WHERE name = :name FOR UPDATE NOWAIT";
    }

    @Override
    protected String inspectSql() {
        return "SELECT fence, DATEDIFF(MILLISECOND, CURRENT_TIMESTAMP, expires_at) FROM " + table
                + " WHERE name = :name";
    }

    @Override
    public String product() {
        return "H2";
    }

    @Override
    public List<String> ddl() {
        return List.of(
                "CREATE SEQUENCE IF NOT EXISTS " + sequence,
                "CREATE TABLE IF NOT EXISTS " + table + " (name VARCHAR(256) PRIMARY KEY, owner VARCHAR(64) NOT NULL,"
                        + " fence BIGINT NOT NULL, expires_at TIMESTAMP WITH TIME ZONE NOT NULL)");
    }

    @Override
    public void check(Handle h) {
        String bare = table.contains(".") ? table.substring(table.indexOf('.') + 1) : table;
        String seq = bare + "_fence";
        boolean tableExists =
                h.createQuery("SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES WHERE UPPER(TABLE_NAME) = UPPER(:t)")
                                .bind("t", bare)
                                .mapTo(Integer.class)
                                .one()
                        > 0;
        boolean sequenceExists = h.createQuery(
                                "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SEQUENCES WHERE UPPER(SEQUENCE_NAME) = UPPER(:s)")
                        .bind("s", seq)
                        .mapTo(Integer.class)
                        .one()
                > 0;
        if (!tableExists || !sequenceExists) {
            throw new LockConfigurationException(
                    "table: " + (!tableExists ? "table '" + table : "sequence '" + sequence)
                            + "' does not exist in this H2 database; create it with the DDL in lock-jdbc's README, or set"
                            + " createSchema=true to let the provider create it");
        }
        try {
            if (h.getConnection().getMetaData().isReadOnly()) {
                throw new LockConfigurationException("url: this H2 database is read-only; open it writable");
            }
        } catch (SQLException e) {
            throw new org.jdbi.v3.core.ConnectionException(e);
        }
    }

    @Override
    public Claim claim(Handle h, String name, String owner, long leaseMillis) {
        ensureRow(h, name);
        Optional<Long> fence = h.createQuery(claimSql)
                .bind("name", name)
                .bind("owner", owner)
                .bind("ms", leaseMillis)
                .mapTo(Long.class)
                .findOne();
        if (fence.isPresent()) {
            return new Claim(OptionalLong.of(fence.get()), 0);
        }
        long left = h.createQuery(leftSql)
                .bind("name", name)
                .mapTo(Long.class)
                .findOne()
                .orElse(0L);
        return new Claim(OptionalLong.empty(), left);
    }

    @Override
    public boolean extend(Handle h, String name, String owner, long leaseMillis) {
        return h.createUpdate(extendSql)
                        .bind("ms", leaseMillis)
                        .bind("name", name)
                        .bind("owner", owner)
                        .execute()
                == 1;
    }

    @Override
    public boolean release(Handle h, String name, String owner) {
        return h.createQuery(releaseSql)
                .bind("name", name)
                .bind("owner", owner)
                .mapTo(Boolean.class)
                .findOne()
                .orElse(false);
    }

    @Override
    public void free(Handle h, String name, String owner) {
        h.createUpdate(freeSql).bind("name", name).bind("owner", owner).execute();
    }

    @Override
    public void ensureRow(Handle h, String name) {
        try {
            h.createUpdate(ensureSql).bind("name", name).execute();
        } catch (UnableToExecuteStatementException e) {
            SQLException sql = e.getCause() instanceof SQLException s ? s : null;
            if (sql == null || !"23505".equals(sql.getSQLState())) {
                throw e; // 23505: a concurrent first claim created it
            }
        }
    }

    @Override
    public Optional<Locked> lockRow(Handle h, String name, long idleMillis) {
        if (h.createQuery(lockSql)
                .bind("name", name)
                .mapTo(String.class)
                .findOne()
                .isEmpty()) {
            return Optional.empty();
        }
        long fence = h.createQuery("SELECT NEXT VALUE FOR " + sequence)
                .mapTo(Long.class)
                .one();
        long session = h.createQuery("SELECT SESSION_ID()").mapTo(Long.class).one();
        return Optional.of(new Locked(fence, session));
    }

    @Override
    public boolean lockNotAvailable(SQLException e) {
        return e.getErrorCode() == 50200 || "HYT00".equals(e.getSQLState());
    }

    @Override
    public void keepAlive(Handle h, long idleMillis) {
        h.createQuery("SELECT 1").mapTo(Integer.class).one();
    }

    @Override
    public void signalOnCommit(Handle h, String name) {
        // no notifications: waiters poll
    }
}
