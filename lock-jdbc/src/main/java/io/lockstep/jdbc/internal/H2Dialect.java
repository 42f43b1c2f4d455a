package io.lockstep.jdbc.internal;

import io.lockstep.LockConfigurationException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.jdbi.v3.core.Handle;
import org.jspecify.annotations.Nullable;

/**
 * H2 2.x (typically in memory, for tests and single-process tools): conditional {@code UPDATE}s read back
 * through {@code FINAL TABLE}/{@code OLD TABLE}, {@code CURRENT_TIMESTAMP} for expiry, a sequence for
 * fences, {@code FOR UPDATE NOWAIT} for session locks. No notifications (waiters poll); no server-side
 * idle timeout (an embedded database shares the holder's process, so it cannot outlive a frozen holder).
 * A name's row is created once, by the first claim, with its own statement.
 */
public final class H2Dialect extends Dialect {

    private static final String EPOCH = "TIMESTAMP WITH TIME ZONE '1970-01-01 00:00:00+00'";

    private final Sql ensureSql;
    private final Sql claimSql;
    private final Sql claimHolderSql;
    private final Sql leftSql;
    private final Sql extendSql;
    private final Sql releaseSql;
    private final Sql freeSql;
    private final Sql lockSql;
    private final String fenceSql;

    H2Dialect(String table) {
        super(table);
        this.ensureSql = Sql.of("INSERT INTO " + this.table + " (name, owner, fence, expires_at) SELECT :name, '', 0, "
                + EPOCH + " FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM " + this.table + " WHERE name = :name)");
        this.claimSql = Sql.of(claim(false));
        this.claimHolderSql = Sql.of(claim(true));
        this.leftSql = Sql.of("SELECT GREATEST(0, DATEDIFF(MILLISECOND, CURRENT_TIMESTAMP, expires_at)) FROM "
                + this.table + " WHERE name = :name");
        this.extendSql =
                Sql.of("UPDATE " + this.table + " SET expires_at = DATEADD(MILLISECOND, :ms, CURRENT_TIMESTAMP)"
                        + " WHERE name = :name AND owner = :owner AND expires_at > CURRENT_TIMESTAMP");
        this.releaseSql = Sql.of("SELECT expires_at > CURRENT_TIMESTAMP FROM OLD TABLE (UPDATE " + this.table
                + " SET owner = '', expires_at = " + EPOCH + " WHERE name = :name AND owner = :owner)");
        this.freeSql = Sql.of("UPDATE " + this.table + " SET owner = '', expires_at = " + EPOCH
                + " WHERE name = :name AND owner = :owner");
        this.lockSql = Sql.of("SELECT name FROM " + this.table + " WHERE name = :name FOR UPDATE NOWAIT");
        this.fenceSql = "SELECT NEXT VALUE FOR " + sequence + ", SESSION_ID()";
    }

    /** The claim statement, writing the {@code holder} column too when {@code holder}. */
    private String claim(boolean holder) {
        // The fence is drawn by the UPDATE, which runs with the row locked.
        return "SELECT fence FROM FINAL TABLE (UPDATE " + this.table + " SET owner = :owner,"
                + (holder ? " holder = :holder," : "")
                + " fence = CASE WHEN owner = :owner THEN fence ELSE NEXT VALUE FOR " + sequence + " END,"
                + " expires_at = DATEADD(MILLISECOND, :ms, CURRENT_TIMESTAMP)"
                + " WHERE name = :name AND (expires_at <= CURRENT_TIMESTAMP OR owner = :owner))";
    }

    @Override
    protected String leftMillisSql() {
        return "DATEDIFF(MILLISECOND, CURRENT_TIMESTAMP, expires_at)";
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
                        + " fence BIGINT NOT NULL, expires_at TIMESTAMP WITH TIME ZONE NOT NULL, holder VARCHAR("
                        + HOLDER_LENGTH + "))");
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
        List<String> differences = new ArrayList<>();
        Map<String, String> types = new HashMap<>();
        h.createQuery(
                        "SELECT COLUMN_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE UPPER(TABLE_NAME) = UPPER(:t)")
                .bind("t", bare)
                .map((rs, ctx) -> types.put(rs.getString(1).toLowerCase(Locale.ROOT), rs.getString(2)))
                .list();
        need(differences, types, "fence", "BIGINT", "bigint");
        need(differences, types, "expires_at", "TIMESTAMP WITH TIME ZONE", "timestamp with time zone");
        holderColumn(differences, types, "VARCHAR(" + HOLDER_LENGTH + ") (optional)", "character varying", "varchar");
        h.createQuery("SELECT INCREMENT, CYCLE_OPTION FROM INFORMATION_SCHEMA.SEQUENCES"
                        + " WHERE UPPER(SEQUENCE_NAME) = UPPER(:s)")
                .bind("s", seq)
                .map((rs, ctx) -> {
                    if (rs.getLong(1) <= 0) {
                        differences.add("sequence " + sequence + " has INCREMENT " + rs.getLong(1)
                                + ", needs a positive increment");
                    }
                    if ("YES".equalsIgnoreCase(rs.getString(2))) {
                        differences.add("sequence " + sequence + " has CYCLE, needs NO CYCLE");
                    }
                    return 0;
                })
                .list();
        refuseShape(differences);
        try {
            if (h.getConnection().getMetaData().isReadOnly()) {
                throw new LockConfigurationException("url: this H2 database is read-only; open it writable");
            }
        } catch (SQLException e) {
            throw new org.jdbi.v3.core.ConnectionException(e);
        }
    }

    @Override
    public Claim claim(Connection c, String name, String owner, @Nullable String holder, long leaseMillis)
            throws SQLException {
        ensureRow(c, name);
        boolean withHolder = holder != null && keepsHolder();
        Sql sql = withHolder ? claimHolderSql : claimSql;
        try (PreparedStatement ps = prepare(c, sql)) {
            sql.set(ps, "name", name);
            sql.set(ps, "owner", owner);
            sql.set(ps, "ms", leaseMillis);
            if (withHolder) {
                sql.set(ps, "holder", holder);
            }
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    return new Claim(OptionalLong.of(rs.getLong(1)), 0);
                }
            }
        }
        try (PreparedStatement ps = prepare(c, leftSql)) {
            leftSql.set(ps, "name", name);
            try (ResultSet rs = ps.executeQuery()) {
                return new Claim(OptionalLong.empty(), rs.next() ? rs.getLong(1) : 0L);
            }
        }
    }

    @Override
    public boolean extend(Connection c, String name, String owner, long leaseMillis) throws SQLException {
        try (PreparedStatement ps = prepare(c, extendSql)) {
            extendSql.set(ps, "ms", leaseMillis);
            extendSql.set(ps, "name", name);
            extendSql.set(ps, "owner", owner);
            return ps.executeUpdate() == 1;
        }
    }

    @Override
    public boolean release(Connection c, String name, String owner) throws SQLException {
        try (PreparedStatement ps = prepare(c, releaseSql)) {
            releaseSql.set(ps, "name", name);
            releaseSql.set(ps, "owner", owner);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    @Override
    public void free(Connection c, String name, String owner) throws SQLException {
        try (PreparedStatement ps = prepare(c, freeSql)) {
            freeSql.set(ps, "name", name);
            freeSql.set(ps, "owner", owner);
            ps.executeUpdate();
        }
    }

    @Override
    public void ensureRow(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = prepare(c, ensureSql)) {
            ensureSql.set(ps, "name", name);
            ps.executeUpdate();
        } catch (SQLException e) {
            if (!"23505".equals(e.getSQLState())) {
                throw e; // 23505: a concurrent first claim created it
            }
        }
    }

    @Override
    public Optional<Locked> lockRow(Connection c, String name, long idleMillis) throws SQLException {
        try (PreparedStatement ps = prepare(c, lockSql)) {
            lockSql.set(ps, "name", name);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
            }
        }
        try (PreparedStatement ps = prepare(c, fenceSql);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return Optional.of(new Locked(rs.getLong(1), rs.getLong(2)));
        }
    }

    @Override
    public boolean lockNotAvailable(SQLException e) {
        return e.getErrorCode() == 50200 || "HYT00".equals(e.getSQLState());
    }

    @Override
    public void keepAlive(Connection c, long idleMillis) throws SQLException {
        try (PreparedStatement ps = prepare(c, "SELECT 1");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
        }
    }
}
