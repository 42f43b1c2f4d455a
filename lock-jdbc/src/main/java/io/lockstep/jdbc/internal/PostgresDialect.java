package io.lockstep.jdbc.internal;

import io.lockstep.LockConfigurationException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.jdbi.v3.core.Handle;
import org.jspecify.annotations.Nullable;

/**
 * PostgreSQL: {@code INSERT ... ON CONFLICT} for claims, {@code clock_timestamp()} for expiry, a sequence
 * for fences, {@code FOR UPDATE NOWAIT} for session locks, {@code pg_notify} for releases.
 */
public final class PostgresDialect extends Dialect {

    private final String channel;
    private final Sql claimSql;
    private final Sql extendSql;
    private final Sql extendManySql;
    private final Sql claimHolderSql;
    private final Sql releaseSql;
    private final Sql deleteSql;
    private final Sql ensureSql;
    private final Sql lockSql;
    private final Sql commitReleaseSql;
    private final Sql keepAliveSql = Sql.of("SELECT set_config('idle_in_transaction_session_timeout', :idle, true)");

    PostgresDialect(String table) {
        super(table);
        String flat = "lockstep_" + this.table.replace('.', '_');
        this.channel =
                flat.length() <= 63 ? flat : "lockstep_" + sha256Hex(this.table).substring(0, 32);
        // The fence of a take-over is drawn in DO UPDATE, after the row is locked, never in VALUES: a
        // VALUES nextval is evaluated before the statement waits for a concurrent claim of the same name,
        // so it can be older than the fence that claim committed. Rows are never deleted (release expires
        // them), so only the very first claim of a name uses the VALUES fence.
        this.claimSql = Sql.of(claim(false));
        this.claimHolderSql = Sql.of(claim(true));
        this.extendSql = Sql.of("UPDATE " + this.table
                + " SET expires_at = clock_timestamp() + :ms * interval '1 millisecond'"
                + " WHERE name = :name AND owner = :owner AND expires_at > clock_timestamp()");
        // One statement for a batch of renewals: element i of the arrays is extension i; a row comes back
        // for each extension whose lease was still held, exactly the rows extendSql would have updated.
        this.extendManySql = Sql.of("UPDATE " + this.table + " AS l"
                + " SET expires_at = clock_timestamp() + b.ms * interval '1 millisecond'"
                + " FROM unnest(CAST(:names AS text[]), CAST(:owners AS text[]), CAST(:ms AS bigint[])) WITH ORDINALITY AS b(name, owner, ms, i)"
                + " WHERE l.name = b.name AND l.owner = b.owner AND l.expires_at > clock_timestamp()"
                + " RETURNING b.i");
        // Release expires the row rather than deleting it (see the claim); the self-join reads the expiry
        // from before the update, to answer whether the lease was still valid. Its commit is asynchronous
        // (synchronous_commit off for this transaction alone): a transaction that notifies holds a
        // database-wide lock from before its commit record until the commit ends, so with a synchronous
        // commit every release waited for the previous one's WAL flush (issue 27: at 4 callers on a server
        // that fsyncs, releases queued on that lock). A release a crash loses leaves the row held by an owner
        // that stopped renewing: it ends at its lease time, which a crash of the holder would do too. The
        // fence is not at stake: only claims draw fences, and their commits stay synchronous.
        this.releaseSql = Sql.of("WITH d AS (UPDATE " + this.table + " AS l SET owner = '', expires_at = 'epoch'"
                + " FROM " + this.table + " AS o WHERE l.name = :name AND l.owner = :owner AND o.name = l.name"
                + " RETURNING o.expires_at > clock_timestamp() AS live)"
                + " SELECT d.live, pg_notify(:channel, :name) IS NULL,"
                + " set_config('synchronous_commit', 'off', true) FROM d");
        this.deleteSql = Sql.of("UPDATE " + this.table + " SET owner = '', expires_at = 'epoch'"
                + " WHERE name = :name AND owner = :owner");
        this.ensureSql = Sql.of("INSERT INTO " + this.table + " (name, owner, fence, expires_at)"
                + " VALUES (:name, '', 0, 'epoch') ON CONFLICT (name) DO NOTHING");
        // The row is locked in the subquery; the outer projection (the fence, the settings) runs only for a
        // row that is already locked, so no fence is drawn before the lock is ours. A refused lock aborts
        // the transaction, and the settings with it.
        this.lockSql = Sql.of("SELECT nextval('" + sequence + "') AS fence, pg_backend_pid() AS pid,"
                + " set_config('idle_in_transaction_session_timeout', :idle, true) AS idle,"
                + " set_config('application_name', 'lockstep fence ' || currval('" + sequence + "'), true) AS app"
                + " FROM (SELECT name FROM " + this.table + " WHERE name = :name FOR UPDATE NOWAIT) AS locked");
        // A session lock's release, in one round trip: COMMIT, then the notice in a transaction of its own
        // whose commit is asynchronous. A transaction that notifies holds a database-wide lock from before
        // its commit record until its commit ends; queued in the lock's own transaction (as cdfe1e5 did),
        // every release held it through its WAL flush, so at 4 callers on a server that fsyncs releases
        // queued behind each other (issue 27). The lock's transaction (its fence from the sequence) still
        // commits synchronously; the notice's transaction holds nothing a crash could lose that matters
        // (every listener's connection ends with the server). The notice follows the commit, so a woken
        // waiter finds the row free.
        this.commitReleaseSql = Sql.of("COMMIT; SELECT pg_notify(:channel, :name) IS NULL,"
                + " set_config('synchronous_commit', 'off', true)");
    }

    /** The claim statement, writing the {@code holder} column too when {@code holder}. */
    private String claim(boolean holder) {
        return """
                WITH ins AS (
                    INSERT INTO %1$s AS l (name, owner, fence, expires_at%3$s)
                    VALUES (:name, :owner, nextval('%2$s'), clock_timestamp() + :ms * interval '1 millisecond'%4$s)
                    ON CONFLICT (name) DO UPDATE SET
                        owner = excluded.owner,%5$s
                        fence = CASE WHEN l.owner = excluded.owner THEN l.fence ELSE nextval('%2$s') END,
                        expires_at = clock_timestamp() + :ms * interval '1 millisecond'
                    WHERE l.expires_at <= clock_timestamp() OR l.owner = excluded.owner
                    RETURNING fence)
                SELECT (SELECT fence FROM ins) AS fence,
                       (SELECT greatest(0, ceil(extract(epoch FROM expires_at - clock_timestamp()) * 1000))::bigint
                          FROM %1$s WHERE name = :name) AS left_ms
                """
                .formatted(
                        this.table,
                        sequence,
                        holder ? ", holder" : "",
                        holder ? ", :holder" : "",
                        holder ? " holder = excluded.holder," : "");
    }

    @Override
    protected String leftMillisSql() {
        return "ceil(extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint";
    }

    @Override
    public String product() {
        return "PostgreSQL";
    }

    @Override
    public List<String> ddl() {
        return List.of(
                "CREATE SEQUENCE IF NOT EXISTS " + sequence + " CACHE 1",
                "CREATE TABLE IF NOT EXISTS " + table + " (name text PRIMARY KEY, owner text NOT NULL,"
                        + " fence bigint NOT NULL, expires_at timestamptz NOT NULL, holder text)");
    }

    @Override
    public void check(Handle h) {
        boolean[] exist = h.createQuery("SELECT to_regclass(:t) IS NOT NULL, to_regclass(:s) IS NOT NULL")
                .bind("t", table)
                .bind("s", sequence)
                .map((rs, ctx) -> new boolean[] {rs.getBoolean(1), rs.getBoolean(2)})
                .one();
        if (!exist[0] || !exist[1]) {
            throw new LockConfigurationException("table: " + (!exist[0] ? "table '" + table : "sequence '" + sequence)
                    + "' does not exist in this PostgreSQL database; create it with the DDL in lock-jdbc's"
                    + " README, or set createSchema=true to let the provider create it");
        }
        checkShape(h);
        List<String> missing = new ArrayList<>();
        for (String privilege : List.of("SELECT", "INSERT", "UPDATE", "DELETE")) {
            boolean has = h.createQuery("SELECT has_table_privilege(:t, :p)")
                    .bind("t", table)
                    .bind("p", privilege)
                    .mapTo(Boolean.class)
                    .one();
            if (!has) {
                missing.add(privilege + " on " + table);
            }
        }
        if (!h.createQuery("SELECT has_sequence_privilege(:s, 'USAGE')")
                .bind("s", sequence)
                .mapTo(Boolean.class)
                .one()) {
            missing.add("USAGE on " + sequence);
        }
        if (!missing.isEmpty()) {
            throw new LockConfigurationException("user: the database user lacks " + String.join(", ", missing)
                    + "; grant them (see lock-jdbc's README)");
        }
        boolean readOnly = h.createQuery(
                        "SELECT pg_is_in_recovery() OR current_setting('default_transaction_read_only') = 'on'")
                .mapTo(Boolean.class)
                .one();
        if (readOnly) {
            throw new LockConfigurationException("url: this PostgreSQL server is read-only (a replica in recovery,"
                    + " or default_transaction_read_only is on); point lock-jdbc at the primary");
        }
    }

    /**
     * The sequence must hand out increasing values across sessions: {@code CACHE 1} (a cache is per
     * session, so two connections would interleave their blocks), a positive increment, no cycle. The
     * expiry must be a {@code timestamptz} ({@code timestamp} is read in each client's session TimeZone,
     * which pgJDBC takes from the JVM), the fence a {@code bigint}, and {@code name} alone must be unique.
     */
    private void checkShape(Handle h) {
        List<String> differences = new ArrayList<>();
        h.createQuery("SELECT seqcache, seqincrement, seqcycle FROM pg_sequence WHERE seqrelid = to_regclass(:s)")
                .bind("s", sequence)
                .map((rs, ctx) -> {
                    long cache = rs.getLong(1);
                    long increment = rs.getLong(2);
                    boolean cycle = rs.getBoolean(3);
                    if (cache != 1) {
                        differences.add("sequence " + sequence + " has CACHE " + cache + ", needs CACHE 1 (each"
                                + " session caches its own values, so fences would go down between holders):"
                                + " ALTER SEQUENCE " + sequence + " CACHE 1");
                    }
                    if (increment <= 0) {
                        differences.add("sequence " + sequence + " has INCREMENT " + increment
                                + ", needs a positive increment");
                    }
                    if (cycle) {
                        differences.add("sequence " + sequence + " has CYCLE, needs NO CYCLE");
                    }
                    return cache;
                })
                .list();
        Map<String, String> types = new HashMap<>();
        h.createQuery("SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
                        + " WHERE attrelid = to_regclass(:t) AND attnum > 0 AND NOT attisdropped")
                .bind("t", table)
                .map((rs, ctx) -> types.put(rs.getString(1), rs.getString(2)))
                .list();
        need(differences, types, "name", "text", "text", "character varying");
        need(differences, types, "owner", "text", "text", "character varying");
        need(differences, types, "fence", "bigint", "bigint");
        holderColumn(differences, types, "text (optional)", "text", "character varying");
        need(
                differences,
                types,
                "expires_at",
                "timestamp with time zone (timestamptz; a timestamp without time zone"
                        + " is read in each client's session TimeZone)",
                "timestamp with time zone");
        boolean keyed = h.createQuery("SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a"
                        + " ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]"
                        + " WHERE i.indrelid = to_regclass(:t) AND i.indisunique AND i.indnkeyatts = 1"
                        + " AND i.indpred IS NULL AND a.attname = 'name')")
                .bind("t", table)
                .mapTo(Boolean.class)
                .one();
        if (!keyed) {
            differences.add("no primary key or unique index on name alone, needs PRIMARY KEY (name)");
        }
        refuseShape(differences);
    }

    @Override
    public Claim claim(Connection c, String name, String owner, @Nullable String holder, long leaseMillis)
            throws SQLException {
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
                rs.next();
                long fence = rs.getLong(1);
                boolean granted = !rs.wasNull();
                long left = rs.getLong(2);
                return new Claim(granted ? OptionalLong.of(fence) : OptionalLong.empty(), left);
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

    /** Renewals per statement: three arrays of this many elements in one bind message. */
    static final int MAX_EXTEND_BATCH = 1000;

    @Override
    public int maxExtendBatch() {
        return MAX_EXTEND_BATCH;
    }

    @Override
    public boolean[] extendMany(Connection c, List<String> names, List<String> owners, List<Long> leaseMillis)
            throws SQLException {
        boolean[] held = new boolean[names.size()];
        try (PreparedStatement ps = prepare(c, extendManySql)) {
            extendManySql.set(ps, "names", "text", names.toArray(String[]::new));
            extendManySql.set(ps, "owners", "text", owners.toArray(String[]::new));
            extendManySql.set(ps, "ms", "bigint", leaseMillis.toArray(Long[]::new));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    held[(int) (rs.getLong(1) - 1)] = true;
                }
            }
        }
        return held;
    }

    @Override
    public boolean release(Connection c, String name, String owner) throws SQLException {
        try (PreparedStatement ps = prepare(c, releaseSql)) {
            releaseSql.set(ps, "name", name);
            releaseSql.set(ps, "owner", owner);
            releaseSql.set(ps, "channel", channel);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    @Override
    public void free(Connection c, String name, String owner) throws SQLException {
        try (PreparedStatement ps = prepare(c, deleteSql)) {
            deleteSql.set(ps, "name", name);
            deleteSql.set(ps, "owner", owner);
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
        try (PreparedStatement ps = prepare(c, lockSql)) {
            lockSql.set(ps, "idle", Long.toString(idleMillis));
            lockSql.set(ps, "name", name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(new Locked(rs.getLong("fence"), rs.getLong("pid"))) : Optional.empty();
            }
        }
    }

    @Override
    public boolean lockNotAvailable(SQLException e) {
        return "55P03".equals(e.getSQLState());
    }

    @Override
    public void keepAlive(Connection c, long idleMillis) throws SQLException {
        try (PreparedStatement ps = prepare(c, keepAliveSql)) {
            keepAliveSql.set(ps, "idle", Long.toString(idleMillis));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
            }
        }
    }

    /** {@code COMMIT} and the notice in one round trip (see {@code commitReleaseSql}). */
    @Override
    public void commitRelease(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = prepare(c, commitReleaseSql)) {
            commitReleaseSql.set(ps, "channel", channel);
            commitReleaseSql.set(ps, "name", name);
            ps.execute();
        }
    }

    @Override
    public Optional<String> channel() {
        return Optional.of(channel);
    }

    private static String sha256Hex(String s) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
