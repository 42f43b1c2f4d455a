package io.lockstep.jdbc.internal;

import io.lockstep.LockConfigurationException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.jdbi.v3.core.Handle;
import org.jspecify.annotations.Nullable;

/**
 * MariaDB 10.6+ (not MySQL, which has no sequences; refused by {@link #check}): {@code INSERT ... ON DUPLICATE KEY UPDATE} for
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

    private final Sql claimSql;
    private final Sql claimHolderSql;
    private final Sql readSql;
    private final Sql extendSql;
    private final Sql releaseSql;
    private final Sql freeSql;
    private final Sql ensureSql;
    private final Sql lockSql;
    private final String fenceSql;

    MariaDbDialect(String table) {
        super(table);
        this.claimSql = Sql.of(claim(false));
        this.claimHolderSql = Sql.of(claim(true));
        this.readSql = Sql.of("SELECT fence, owner = :owner, GREATEST(0, TIMESTAMPDIFF(MICROSECOND, " + NOW
                + ", expires_at) DIV 1000) FROM " + this.table + " WHERE name = :name");
        this.extendSql = Sql.of("UPDATE " + this.table + " SET expires_at = " + NOW + " + INTERVAL :us MICROSECOND"
                + " WHERE name = :name AND owner = :owner AND expires_at > " + NOW);
        this.releaseSql = Sql.of("UPDATE " + this.table + " SET owner = IF(@lockstep_live := (expires_at > " + NOW
                + "), '', ''), expires_at = " + EPOCH + " WHERE name = :name AND owner = :owner");
        this.freeSql = Sql.of("UPDATE " + this.table + " SET owner = '', expires_at = " + EPOCH
                + " WHERE name = :name AND owner = :owner");
        this.ensureSql = Sql.of("INSERT IGNORE INTO " + this.table
                + " (name, owner, fence, expires_at) VALUES (:name, '', 0, " + EPOCH + ")");
        this.lockSql = Sql.of("SELECT name FROM " + this.table + " WHERE name = :name FOR UPDATE NOWAIT");
        this.fenceSql = "SELECT NEXTVAL(" + sequence + "), CONNECTION_ID()";
    }

    /**
     * The claim statement, writing the {@code holder} column too when {@code holder}. Assignments run left to
     * right: {@code @lockstep_ok} is set by the first and read by the others, the owner's last.
     */
    private String claim(boolean holder) {
        return "INSERT INTO " + this.table + " (name, owner, fence, expires_at" + (holder ? ", holder" : "")
                + ") VALUES (:name, :owner, NEXTVAL(" + sequence + "), " + NOW + " + INTERVAL :us MICROSECOND"
                + (holder ? ", :holder" : "") + ") ON DUPLICATE KEY UPDATE"
                + " fence = IF(@lockstep_ok := (expires_at <= " + NOW + " OR owner = VALUES(owner)),"
                + " IF(owner = VALUES(owner), fence, NEXTVAL(" + sequence + ")), fence),"
                + " expires_at = IF(@lockstep_ok, VALUES(expires_at), expires_at),"
                + (holder ? " holder = IF(@lockstep_ok, VALUES(holder), holder)," : "")
                + " owner = IF(@lockstep_ok, VALUES(owner), owner)";
    }

    @Override
    protected String leftMillisSql() {
        return "TIMESTAMPDIFF(MICROSECOND, " + NOW + ", expires_at) DIV 1000";
    }

    @Override
    public String product() {
        return "MariaDB";
    }

    @Override
    public List<String> ddl() {
        return List.of(
                "CREATE SEQUENCE IF NOT EXISTS " + sequence + " INCREMENT BY 1 NOCYCLE",
                "CREATE TABLE IF NOT EXISTS " + table + " (name VARBINARY(256) NOT NULL PRIMARY KEY,"
                        + " owner VARCHAR(64) CHARACTER SET ascii NOT NULL, fence BIGINT NOT NULL,"
                        + " expires_at DATETIME(6) NOT NULL, holder VARCHAR(" + HOLDER_LENGTH
                        + ") CHARACTER SET ascii NULL) ENGINE=InnoDB");
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
        checkShape(h, schema, bare);
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

    /**
     * The server must be MariaDB (MySQL has no sequences); the expiry a {@code DATETIME} ({@code
     * TIMESTAMP} converts {@code UTC_TIMESTAMP()} through the session time_zone), the fence a {@code
     * BIGINT}, {@code name} alone unique; the sequence increasing and not cycling. Its cache is the
     * server's, shared by every session, so any CACHE is fine.
     */
    private void checkShape(Handle h, String schema, String bare) {
        String version = h.createQuery("SELECT VERSION()").mapTo(String.class).one();
        if (!version.toLowerCase(java.util.Locale.ROOT).contains("mariadb")) {
            throw new LockConfigurationException("url: this server is MySQL " + version + "; lock-jdbc needs MariaDB"
                    + " 10.6 or later (sequences, FOR UPDATE NOWAIT)");
        }
        List<String> differences = new ArrayList<>();
        Map<String, String> types = new LinkedHashMap<>();
        h.createQuery("SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = " + schema
                        + " AND TABLE_NAME = :n")
                .bind("n", bare)
                .map((rs, ctx) -> types.put(rs.getString(1).toLowerCase(java.util.Locale.ROOT), rs.getString(2)))
                .list();
        need(
                differences,
                types,
                "name",
                "VARBINARY(256) (bytes, compared byte by byte)",
                "varbinary",
                "varchar",
                "binary",
                "char");
        need(differences, types, "owner", "VARCHAR(64)", "varchar", "char");
        need(differences, types, "fence", "BIGINT", "bigint");
        holderColumn(differences, types, "VARCHAR(" + HOLDER_LENGTH + ") (optional)", "varchar", "text");
        need(
                differences,
                types,
                "expires_at",
                "DATETIME(6) (a TIMESTAMP converts through the session time_zone)",
                "datetime");
        int keys = count(
                h,
                "SELECT COUNT(*) FROM (SELECT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = "
                        + schema + " AND TABLE_NAME = :n AND NON_UNIQUE = 0 GROUP BY INDEX_NAME"
                        + " HAVING COUNT(*) = 1 AND MAX(COLUMN_NAME) = 'name') k",
                bare);
        if (keys == 0) {
            differences.add("no primary key or unique index on name alone, needs PRIMARY KEY (name)");
        }
        try {
            h.createQuery("SELECT increment, cycle_option FROM " + sequence)
                    .map((rs, ctx) -> {
                        if (rs.getLong(1) <= 0) {
                            differences.add("sequence " + sequence + " has INCREMENT " + rs.getLong(1)
                                    + ", needs a positive increment");
                        }
                        if (rs.getBoolean(2)) {
                            differences.add("sequence " + sequence + " has CYCLE, needs NOCYCLE");
                        }
                        return 0;
                    })
                    .list();
        } catch (RuntimeException e) {
            if (!(e.getCause() instanceof SQLException denied) || denied.getErrorCode() != COMMAND_DENIED) {
                throw e;
            }
            // no SELECT on the sequence: its shape cannot be read; NEXTVAL is checked below
        }
        refuseShape(differences);
    }

    private static int count(Handle h, String sql, String name) {
        return h.createQuery(sql).bind("n", name).mapTo(Integer.class).one();
    }

    @Override
    public Claim claim(Connection c, String name, String owner, @Nullable String holder, long leaseMillis)
            throws SQLException {
        boolean withHolder = holder != null && keepsHolder();
        Sql sql = withHolder ? claimHolderSql : claimSql;
        try (PreparedStatement ps = prepare(c, sql)) {
            sql.set(ps, "name", name);
            sql.set(ps, "owner", owner);
            sql.set(ps, "us", leaseMillis * 1000);
            if (withHolder) {
                sql.set(ps, "holder", holder);
            }
            ps.executeUpdate();
        }
        try (PreparedStatement ps = prepare(c, readSql)) {
            readSql.set(ps, "name", name);
            readSql.set(ps, "owner", owner);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new IllegalStateException("the row of the lock just claimed is missing");
                }
                return rs.getBoolean(2)
                        ? new Claim(OptionalLong.of(rs.getLong(1)), 0)
                        : new Claim(OptionalLong.empty(), rs.getLong(3));
            }
        }
    }

    @Override
    public boolean extend(Connection c, String name, String owner, long leaseMillis) throws SQLException {
        try (PreparedStatement ps = prepare(c, extendSql)) {
            extendSql.set(ps, "us", leaseMillis * 1000);
            extendSql.set(ps, "name", name);
            extendSql.set(ps, "owner", owner);
            return ps.executeUpdate() == 1;
        }
    }

    /** Renewals per batch: four placeholders each, far below MariaDB's 65,535 per statement. */
    static final int MAX_EXTEND_BATCH = 500;

    @Override
    public int maxExtendBatch() {
        return MAX_EXTEND_BATCH;
    }

    /**
     * Two statements for the whole batch (MariaDB's {@code UPDATE} has no {@code RETURNING}): an {@code
     * UPDATE} joined to the batch moves every row that is still its owner's and unexpired, then a {@code
     * SELECT} joined to the same batch reads which rows are held. A row is held after the update exactly
     * when the update moved it: one that had expired stays expired (only its owner extends it, and no lease
     * is renewed twice at once), one taken over or released has another owner. A lease time so short that
     * the row expires between the two reads as lost: early, never late.
     */
    @Override
    public boolean[] extendMany(Connection c, List<String> names, List<String> owners, List<Long> leaseMillis)
            throws SQLException {
        int n = names.size();
        StringBuilder batch = new StringBuilder(40 + 40 * n);
        batch.append("SELECT ? AS i, CAST(? AS BINARY) AS name, ? AS owner, ? AS us");
        for (int i = 1; i < n; i++) {
            batch.append(" UNION ALL SELECT ?, CAST(? AS BINARY), ?, ?");
        }
        String join = " AS l JOIN (" + batch + ") AS b ON l.name = b.name AND l.owner = b.owner";
        try (PreparedStatement ps = prepare(
                c,
                "UPDATE " + table + join + " SET l.expires_at = " + NOW
                        + " + INTERVAL b.us MICROSECOND WHERE l.expires_at > " + NOW)) {
            bindBatch(ps, names, owners, leaseMillis);
            ps.executeUpdate();
        }
        boolean[] held = new boolean[n];
        try (PreparedStatement ps = prepare(c, "SELECT b.i FROM " + table + join + " WHERE l.expires_at > " + NOW)) {
            bindBatch(ps, names, owners, leaseMillis);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    held[rs.getInt(1)] = true;
                }
            }
        }
        return held;
    }

    private static void bindBatch(PreparedStatement ps, List<String> names, List<String> owners, List<Long> leaseMillis)
            throws SQLException {
        for (int i = 0; i < names.size(); i++) {
            ps.setInt(4 * i + 1, i);
            ps.setString(4 * i + 2, names.get(i));
            ps.setString(4 * i + 3, owners.get(i));
            ps.setLong(4 * i + 4, leaseMillis.get(i) * 1000);
        }
    }

    @Override
    public boolean release(Connection c, String name, String owner) throws SQLException {
        int rows;
        try (PreparedStatement ps = prepare(c, releaseSql)) {
            releaseSql.set(ps, "name", name);
            releaseSql.set(ps, "owner", owner);
            rows = ps.executeUpdate();
        }
        if (rows != 1) {
            return false;
        }
        try (PreparedStatement ps = prepare(c, "SELECT @lockstep_live");
                ResultSet rs = ps.executeQuery()) {
            return rs.next() && rs.getBoolean(1);
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
        }
    }

    @Override
    public Optional<Locked> lockRow(Connection c, String name, long idleMillis) throws SQLException {
        try (PreparedStatement ps = prepare(
                c,
                "SET @lockstep_idle = COALESCE(@lockstep_idle, @@session.idle_transaction_timeout),"
                        + " SESSION idle_transaction_timeout = " + Math.max(1, (idleMillis + 999) / 1000))) {
            ps.executeUpdate();
        }
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
    public void keepAlive(Connection c, long idleMillis) throws SQLException {
        try (PreparedStatement ps = prepare(c, "SELECT 1");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
        }
    }

    /**
     * Puts back the session's {@code idle_transaction_timeout} from before {@link #lockRow} (an
     * application's later transactions on this pooled connection must not be ended by lock-jdbc's
     * timeout) and clears lock-jdbc's user variables.
     */
    @Override
    public void resetSession(Connection c) throws SQLException {
        try (PreparedStatement ps = prepare(
                c,
                "SET SESSION idle_transaction_timeout = COALESCE(@lockstep_idle,"
                        + " @@session.idle_transaction_timeout), @lockstep_idle = NULL, @lockstep_ok = NULL,"
                        + " @lockstep_live = NULL")) {
            ps.executeUpdate();
        }
    }
}
