package io.lockstep.jdbc.internal;

import io.lockstep.LockConfigurationException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Pattern;
import org.jdbi.v3.core.Handle;
import org.jspecify.annotations.Nullable;

/**
 * The SQL of one database product for one lock table. Every statement is a constant built once from the
 * validated table name; lock names and owner tokens are only ever bind parameters.
 *
 * <p>The statements of acquire and release (claim, extend, release, free; session mode's lock,
 * heartbeat and commit signal) run as plain {@link PreparedStatement}s on the pool's connection: Jdbi's
 * per-statement context, parsing cache, argument and mapper look-ups were most of the client's time per
 * statement. Schema checks, creation and inspect go through Jdbi.
 */
public abstract class Dialect {

    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,56}");

    /** The lock table, validated ({@code table} or {@code schema.table}). */
    protected final String table;
    /** The fence sequence (or counter row's table), {@code <table>_fence}. */
    protected final String sequence;

    /** The bound of each plain statement in whole seconds (JDBC query timeout); 0 for none. */
    private int queryTimeout;

    /**
     * The width the optional {@code holder} column needs: {@code host pid label} of at most 253, 19 and 64
     * characters and two spaces ({@link io.lockstep.spi.HolderText}), rounded up.
     */
    public static final int HOLDER_LENGTH = 340;

    /** Whether the lease table has the optional {@code holder} column; found by {@link #check}. */
    private volatile boolean holderColumn;

    protected Dialect(String table) {
        this.table = requireTableName(table);
        this.sequence = this.table + "_fence";
    }

    /**
     * Bounds each statement of the hot path with a JDBC query timeout of {@code seconds} (0: none, the
     * server bounds them), as Jdbi's {@code SqlStatements} query timeout bounds the others. Set before the
     * dialect is handed to a backend.
     */
    public final void queryTimeout(int seconds) {
        this.queryTimeout = seconds;
    }

    /**
     * A statement written with named parameters ({@code :name}, as for Jdbi), turned once into JDBC's
     * positional form. Immutable.
     */
    protected static final class Sql {
        private final String jdbc;
        private final String[] params;

        private Sql(String jdbc, String[] params) {
            this.jdbc = jdbc;
            this.params = params;
        }

        /**
         * Parses {@code named}: {@code :identifier} outside quotes is a parameter; {@code ::} (a cast) and
         * {@code :=} (an assignment) are not.
         */
        public static Sql of(String named) {
            StringBuilder out = new StringBuilder(named.length());
            List<String> params = new ArrayList<>();
            int i = 0;
            while (i < named.length()) {
                char c = named.charAt(i);
                if (c == '\'' || c == '"') {
                    int end = named.indexOf(c, i + 1);
                    end = end < 0 ? named.length() : end + 1;
                    out.append(named, i, end);
                    i = end;
                } else if (c == ':' && i + 1 < named.length() && named.charAt(i + 1) == ':') {
                    out.append("::");
                    i += 2;
                } else if (c == ':' && i + 1 < named.length() && Character.isJavaIdentifierStart(named.charAt(i + 1))) {
                    int end = i + 1;
                    while (end < named.length() && Character.isJavaIdentifierPart(named.charAt(end))) {
                        end++;
                    }
                    params.add(named.substring(i + 1, end));
                    out.append('?');
                    i = end;
                } else {
                    out.append(c);
                    i++;
                }
            }
            return new Sql(out.toString(), params.toArray(String[]::new));
        }

        /** The statement in JDBC's form, with {@code ?} for each parameter. */
        public String jdbc() {
            return jdbc;
        }

        /** Sets every occurrence of the parameter {@code name}. */
        public void set(PreparedStatement ps, String name, String value) throws SQLException {
            boolean found = false;
            for (int i = 0; i < params.length; i++) {
                if (params[i].equals(name)) {
                    ps.setString(i + 1, value);
                    found = true;
                }
            }
            requireFound(found, name);
        }

        /** Sets every occurrence of the parameter {@code name}. */
        public void set(PreparedStatement ps, String name, long value) throws SQLException {
            boolean found = false;
            for (int i = 0; i < params.length; i++) {
                if (params[i].equals(name)) {
                    ps.setLong(i + 1, value);
                    found = true;
                }
            }
            requireFound(found, name);
        }

        /** Sets every occurrence of the parameter {@code name} to an SQL array of {@code type}. */
        public void set(PreparedStatement ps, String name, String type, Object[] values) throws SQLException {
            java.sql.Array array = ps.getConnection().createArrayOf(type, values);
            boolean found = false;
            for (int i = 0; i < params.length; i++) {
                if (params[i].equals(name)) {
                    ps.setArray(i + 1, array);
                    found = true;
                }
            }
            requireFound(found, name);
        }

        private void requireFound(boolean found, String name) {
            if (!found) {
                throw new IllegalArgumentException("no parameter :" + name + " in " + jdbc);
            }
        }
    }

    /** Prepares {@code sql} on {@code c}, bounded by the query timeout; the caller closes it. */
    protected final PreparedStatement prepare(Connection c, Sql sql) throws SQLException {
        return prepare(c, sql.jdbc());
    }

    /** Prepares {@code jdbc} (no parameters, or positional ones) on {@code c}, bounded by the query timeout. */
    protected final PreparedStatement prepare(Connection c, String jdbc) throws SQLException {
        PreparedStatement ps = c.prepareStatement(jdbc);
        if (queryTimeout > 0) {
            try {
                ps.setQueryTimeout(queryTimeout);
            } catch (SQLException | RuntimeException e) {
                ps.close();
                throw e;
            }
        }
        return ps;
    }

    /** {@code table} if it is an identifier or {@code schema.identifier} of at most 57 characters each. */
    public static String requireTableName(String table) {
        String[] parts = table.split("\\.", -1);
        boolean ok = parts.length <= 2;
        for (String p : parts) {
            ok &= IDENTIFIER.matcher(p).matches();
        }
        if (!ok) {
            throw new LockConfigurationException("table: expected an SQL identifier (letters, digits and '_', not"
                    + " starting with a digit, at most 57 characters) optionally qualified by a schema, got '"
                    + table + "'");
        }
        return table.toLowerCase(Locale.ROOT);
    }

    /** The dialect for a database product name as JDBC metadata reports it. */
    public static Dialect forProduct(String product, String table) {
        String p = product.toLowerCase(Locale.ROOT);
        if (p.contains("postgres")) {
            return new PostgresDialect(table);
        }
        if (p.contains("mariadb") || p.contains("mysql")) {
            return new MariaDbDialect(table);
        }
        if (p.equals("h2")) {
            return new H2Dialect(table);
        }
        throw new LockConfigurationException(
                "dialect: lock-jdbc supports PostgreSQL, MariaDB and H2; this database is '" + product + "'");
    }

    /** The product's name. */
    public abstract String product();

    /** The table name. */
    public final String table() {
        return table;
    }

    /** The statements that create the table and the fence sequence if they are missing. */
    public abstract List<String> ddl();

    /**
     * Fails with a {@link LockConfigurationException} naming the setting if the table or sequence is
     * missing, the user lacks a privilege, or the database is read-only.
     */
    public abstract void check(Handle h);

    /**
     * Refuses a table or sequence that exists but is not of the shape the statements rely on, naming
     * each difference (what was found, what is needed).
     */
    protected final void refuseShape(List<String> differences) {
        if (!differences.isEmpty()) {
            throw new LockConfigurationException("table: the lock table '" + table + "' or its sequence '" + sequence
                    + "' is not what lock-jdbc relies on: " + String.join("; ", differences)
                    + " (see the schema guide, lock-jdbc's SCHEMA.md)");
        }
    }

    /** Adds a difference unless column {@code column} has a type starting with one of {@code accepted}. */
    protected static void need(
            List<String> differences,
            java.util.Map<String, String> types,
            String column,
            String needed,
            String... accepted) {
        String found = types.get(column);
        if (found == null) {
            differences.add("no column " + column + ", needs " + needed);
            return;
        }
        for (String a : accepted) {
            if (found.toLowerCase(Locale.ROOT).startsWith(a)) {
                return;
            }
        }
        differences.add("column " + column + " is " + found + ", needs " + needed);
    }

    /**
     * Notes whether the table has the optional {@code holder} column (a table made before it existed has
     * not, and keeps working without it: claims then keep no holder), and checks its type if it has.
     */
    protected final void holderColumn(
            List<String> differences, Map<String, String> types, String needed, String... accepted) {
        boolean present = types.containsKey("holder");
        if (present) {
            need(differences, types, "holder", needed, accepted);
        }
        holderColumn = present;
    }

    /**
     * Whether lease-mode claims write the holder ({@code host pid[ label]}) and {@link #inspectLease} reads
     * it: only when the table has a {@code holder} column.
     */
    public final boolean keepsHolder() {
        return holderColumn;
    }

    /** Whether a message of {@link #check} says the table or sequence is missing (createSchema may help). */
    public static boolean isMissingSchema(LockConfigurationException e) {
        return String.valueOf(e.getMessage()).contains("does not exist");
    }

    // ------------------------------------------------------------------ lease mode

    /** The outcome of a claim: the fence if granted, else the holder's time left in milliseconds. */
    public record Claim(OptionalLong fence, long leftMillis) {}

    /**
     * Takes or re-takes (same owner) the lease row if free or expired, in one statement; writes {@code
     * holder} with it when the table {@link #keepsHolder() keeps one} and it is not null.
     */
    public abstract Claim claim(Connection c, String name, String owner, @Nullable String holder, long leaseMillis)
            throws SQLException;

    /** Moves the expiry of an unexpired row of {@code owner}; whether it was still held. */
    public abstract boolean extend(Connection c, String name, String owner, long leaseMillis) throws SQLException;

    /**
     * The most lease rows {@link #extendMany} moves in one statement; 1 if the dialect has no such
     * statement (then renewals go one by one through {@link #extend}).
     */
    public int maxExtendBatch() {
        return 1;
    }

    /**
     * Moves the expiry of each unexpired row {@code names[i]} of {@code owners[i]} by {@code leaseMillis[i]}
     * in one statement; element {@code i} says whether row {@code i} was still held. By default one
     * {@link #extend} each.
     */
    public boolean[] extendMany(Connection c, List<String> names, List<String> owners, List<Long> leaseMillis)
            throws SQLException {
        boolean[] held = new boolean[names.size()];
        for (int i = 0; i < held.length; i++) {
            held[i] = extend(c, names.get(i), owners.get(i), leaseMillis.get(i));
        }
        return held;
    }

    /** Frees {@code owner}'s row (rows are kept: see the fence rule) and signals waiters; whether it was held and unexpired. */
    public abstract boolean release(Connection c, String name, String owner) throws SQLException;

    /** Frees {@code owner}'s row, expired or not. */
    public abstract void free(Connection c, String name, String owner) throws SQLException;

    /**
     * For {@code lockctl inspect}, lease mode: the row's fence, the milliseconds until its expiry on the
     * database's clock (zero or less: free) and the holder where the table keeps it, read in one statement
     * that never reads the owner. Empty if the lock never had a row.
     */
    public Optional<LeaseRow> inspectLease(Handle h, String name) {
        boolean holder = holderColumn;
        return h.createQuery("SELECT fence, " + leftMillisSql() + (holder ? ", holder" : "") + " FROM " + table
                        + " WHERE name = :name")
                .bind("name", name)
                .map((rs, ctx) -> new LeaseRow(rs.getLong(1), rs.getLong(2), holder ? rs.getString(3) : null))
                .findOne();
    }

    /** A lease row as {@link #inspectLease} reads it; {@code holder} as written by the last claim, or null. */
    public record LeaseRow(long fence, long leftMillis, @Nullable String holder) {}

    /** The milliseconds until {@code expires_at} on the database's clock, as an SQL expression. */
    protected abstract String leftMillisSql();

    // ------------------------------------------------------------------ session mode

    /** A row lock taken: the fence and the id of the database session that holds it. */
    public record Locked(long fence, long sessionId) {}

    /** Inserts the lock's row if absent, in its own committed transaction. */
    public abstract void ensureRow(Connection c, String name) throws SQLException;

    /**
     * In the connection's open transaction, locks the row without waiting, takes a fence and sets the
     * server's idle-in-transaction timeout to {@code idleMillis}. Empty if the row does not exist; throws
     * if it is locked (see {@link #lockNotAvailable}).
     */
    public abstract Optional<Locked> lockRow(Connection c, String name, long idleMillis) throws SQLException;

    /** Whether {@code e} says the row is locked by another transaction. */
    public abstract boolean lockNotAvailable(SQLException e);

    /** Resets the idle-in-transaction timeout of the connection's open transaction to {@code idleMillis}. */
    public abstract void keepAlive(Connection c, long idleMillis) throws SQLException;

    /**
     * Releases a session lock: commits the open transaction and, where the product has notifications, tells
     * waiters on {@code name}. By default a bare commit (waiters poll).
     */
    public void commitRelease(Connection c, String name) throws SQLException {
        c.commit();
    }

    /** The notification channel, or empty if the product has none (waiters poll). */
    public Optional<String> channel() {
        return Optional.empty();
    }

    /**
     * Puts back the session settings this dialect changed on {@code c} (which is in auto-commit, nothing
     * open), before the connection goes back to its pool. By default nothing: PostgreSQL's settings are
     * local to the transaction.
     */
    public void resetSession(Connection c) throws SQLException {}

    /** Whether {@code e} means the server, or the connection to it, is unavailable for a while. */
    public boolean isTransient(SQLException e) {
        String state = e.getSQLState();
        return state == null
                || state.startsWith("08")
                || state.startsWith("57")
                || state.startsWith("53")
                || state.startsWith("40")
                || state.equals("HYT00")
                || e instanceof java.sql.SQLTransientException
                || e instanceof java.sql.SQLRecoverableException;
    }
}
