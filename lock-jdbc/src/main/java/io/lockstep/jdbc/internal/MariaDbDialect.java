package io.lockstep.jdbc.internal;

import io.lockstep.LockConfigurationException;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.jdbi.v3.core.Handle;

/**
 * MariaDB 10.6+ (and MySQL 8 where noted in the README): {@code INSERT ... ON DUPLICATE KEY UPDATE} for
 * claims with the condition captured once in a session variable (assignments see earlier ones), {@code
 * UTC_TIMESTAMP(6)} for expiry, a sequence for fences, {@code FOR UPDATE NOWAIT} for session locks with
 * {@code idle_transaction_timeout} (whole seconds). Names are {@code VARBINARY}, compared byte by byte.
 * No notifications (waiters poll). A claim is two statements: the conditional write, then reading the row.
 */
public final class MariaDbDialect extends Dialect {

    /** ER_TABLEACCESS_DENIED_ERROR: "... command denied to user ... for table ...". */
    private static final int COMMAND_DENIED = 1142;

    private static final String EPOCH = "'1970-01-01 00:00:00'";
    private static final String NOW = "UTC_TIMESTAMP(6)";

    private final String claimSql;
    private final String readSql;
    private final String extendSql;
    private final String releaseSql;
    private final String freeSql;
    private final String ensureSql;
    private final String lockSql;

    MariaDbDialect(String table) {
        super(table);
        this.claimSql = "INSERT INTO " + this.table + " (name, owner, fence, expires_at) VALUES (:name, :owner,"
                + " NEXTVAL(" + sequence + "), " + NOW + " + INTERVAL :us MICROSECOND) ON DUPLICATE KEY UPDATE"
                + " fence = IF(@lockstep_ok := (expires_at <= " + NOW + " OR owner = VALUES(owner)),"
                + " IF(owner = VALUES(owner), fence, NEXTVAL(" + sequence + ")), fence),"
                + " expires_at = IF(@lockstep_ok, VALUES(expires_at), expires_at),"
                + " owner = IF(@lockstep_ok, VALUES(owner), owner)";
        this.readSql = "SELECT fence, owner = :owner, GREATEST(0, TIMESTAMPDIFF(MICROSECOND, " + NOW
                + ", expires_at) DIV 1000) FROM " + this.table + " WHERE name = :name";
        this.extendSql = "UPDATE " + this.table + " SET expires_at = " + NOW + " + INTERVAL :us MICROSECOND"
                + " WHERE name = :name AND owner = :owner AND expires_at > " + NOW;
        this.releaseSql = "UPDATE " + this.table + " SET owner = IF(@lockstep_live := (expires_at > " + NOW
                + "), '', ''), expires_at = " + EPOCH + " WHERE name = :name AND owner = :owner";
        this.freeSql = "UPDATE " + this.table + " SET owner = '', expires_at = " + EPOCH
                + " WHERE name = :name AND owner = :owner";
        this.ensureSql = "INSERT IGNORE INTO " + this.table + " (name, owner, fence, expires_at) VALUES (:name, '', 0, "
                + EPOCH + ")";
        this.lockSql = "SELECT name FROM " + this.table + " WHERE name = :name FOR UPDATE NOWAIT";
    }

    @Override
    protected String inspectSql() {
        return "SELECT fence, TIMESTAMPDIFF(MICROSECOND, " + NOW + ", expires_at) DIV 1000 FROM " + table
                + " WHERE name = :name";
    }

    @Override
    public String product() {
        return "MariaDB";
    }

    @Override
    public List<String> ddl() {
        return List.of(
                "CREATE SEQUENCE IF NOT EXISTS " + sequence,
                "CREATE TABLE IF NOT EXISTS " + table + " (name VARBINARY(256) NOT NULL PRIMARY KEY,"
                        + " owner VARCHAR(64) CHARACTER SET ascii NOT NULL, fence BIGINT NOT NULL,"
                        + " expires_at DATETIME(6) NOT NULL) ENGINE=InnoDB");
    }

    @Override
    public void check(Handle h) {
        String bare = table.contains(".") ? table.substring(table.indexOf('.') + 1) : table;
        String schema = table.contains(".") ? "'" + table.substring(0, table.indexOf('.')) + "'" : "DATABASE()";
        boolean tableExists = count(
                        h,
                        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = " + schema
                                + " AND TABLE_NAME = :n AND TABLE_TYPE <> 'SEQUENCE'",
                        bare)
                > 0;
        boolean sequenceExists = count(
                        h,
                        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = " + schema
                                + " AND TABLE_NAME = :n AND TABLE_TYPE = 'SEQUENCE'",
                        bare + "_fence")
                > 0;
        if (!tableExists || !sequenceExists) {
            throw new LockConfigurationException(
                    "table: " + (!tableExists ? "table '" + table : "sequence '" + sequence)
                            + "' does not exist in this MariaDB database (or the user may not see it); create it with the DDL"
                            + " in lock-jdbc's README, or set createSchema=true to let the provider create it");
        }
        boolean readOnly = h.createQuery("SELECT @@read_only OR @@tx_read_only")
                .mapTo(Boolean.class)
                .one();
        if (readOnly) {
            throw new LockConfigurationException("url: this MariaDB server is read-only (read_only or"
                    + " tx_read_only is set, as on a replica); point lock-jdbc at the primary");
        }
        // MariaDB checks privileges when it prepares a statement, so statements that touch no row ask the
        // server itself, whatever the grants come from (user, database, table or role). NEXTVAL draws one
        // fence, which only leaves a gap: fences need to increase, not to be dense.
        List<String> missing = new ArrayList<>();
        Map<String, String> probes = new LinkedHashMap<>();
        probes.put("SELECT on " + table, "SELECT name FROM " + table + " WHERE 1 = 0");
        probes.put("INSERT on " + table, "INSERT INTO " + table + " SELECT * FROM " + table + " WHERE 1 = 0");
        probes.put("UPDATE on " + table, "UPDATE " + table + " SET owner = owner WHERE 1 = 0");
        probes.put("DELETE on " + table, "DELETE FROM " + table + " WHERE 1 = 0");
        probes.put("INSERT on " + sequence, "SELECT NEXTVAL(" + sequence + ")");
        probes.forEach((privilege, sql) -> {
            try {
                if (sql.startsWith("SELECT")) {
                    h.createQuery(sql).mapToMap().list();
                } else {
                    h.createUpdate(sql).execute();
                }
            } catch (RuntimeException e) {
                if (!(e.getCause() instanceof SQLException denied) || denied.getErrorCode() != COMMAND_DENIED) {
                    throw e;
                }
                missing.add(privilege);
            }
        });
        if (!missing.isEmpty()) {
            throw new LockConfigurationException("user: the database user lacks " + String.join(", ", missing)
                    + "; grant them (see lock-jdbc's README)");
        }
    }

    private static int count(Handle h, String sql, String name) {
        return h.createQuery(sql).bind("n", name).mapTo(Integer.class).one();
    }

    @Override
    public Claim claim(Handle h, String name, String owner, long leaseMillis) {
        h.createUpdate(claimSql)
                .bind("name", name)
                .bind("owner", owner)
                .bind("us", leaseMillis * 1000)
                .execute();
        return h.createQuery(readSql)
                .bind("name", name)
                .bind("owner", owner)
                .map((rs, ctx) -> rs.getBoolean(2)
                        ? new Claim(OptionalLong.of(rs.getLong(1)), 0)
                        : new Claim(OptionalLong.empty(), rs.getLong(3)))
                .one();
    }

    @Override
    public boolean extend(Handle h, String name, String owner, long leaseMillis) {
        return h.createUpdate(extendSql)
                        .bind("us", leaseMillis * 1000)
                        .bind("name", name)
                        .bind("owner", owner)
                        .execute()
                == 1;
    }

    @Override
    public boolean release(Handle h, String name, String owner) {
        int rows = h.createUpdate(releaseSql)
                .bind("name", name)
                .bind("owner", owner)
                .execute();
        return rows == 1
                && h.createQuery("SELECT @lockstep_live")
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
        h.createUpdate(ensureSql).bind("name", name).execute();
    }

    @Override
    public Optional<Locked> lockRow(Handle h, String name, long idleMillis) {
        h.createUpdate("SET SESSION idle_transaction_timeout = " + Math.max(1, (idleMillis + 999) / 1000))
                .execute();
        if (h.createQuery(lockSql).bind("name", name).mapToMap().findOne().isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(h.createQuery("SELECT NEXTVAL(" + sequence + "), CONNECTION_ID()")
                .map((rs, ctx) -> new Locked(rs.getLong(1), rs.getLong(2)))
                .one());
    }

    /**
     * 1205 lock wait timeout, 3572 NOWAIT refused, and 1969 "max_statement_time exceeded": MariaDB's
     * driver enforces the call timeout ({@code setQueryTimeout}) with {@code max_statement_time}, and a
     * session-mode attempt that contends for a new row with others can run past it on a loaded server
     * (seen once in the kit's eight concurrent tryAcquires). It is retried as busy within the wait
     * time; a server that does not answer at all still fails as unavailable (socket timeout).
     */
    @Override
    public boolean lockNotAvailable(SQLException e) {
        return e.getErrorCode() == 1205 || e.getErrorCode() == 3572 || e.getErrorCode() == 1969;
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
