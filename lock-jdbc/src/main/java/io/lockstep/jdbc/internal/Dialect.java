package io.lockstep.jdbc.internal;

import io.lockstep.LockConfigurationException;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Pattern;
import org.jdbi.v3.core.Handle;

/**
 * The SQL of one database product for one lock table. Every statement is a constant built once from the
 * validated table name; lock names and owner tokens are only ever bind parameters.
 */
public abstract class Dialect {

    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,56}");

    /** The lock table, validated ({@code table} or {@code schema.table}). */
    protected final String table;
    /** The fence sequence (or counter row's table), {@code <table>_fence}. */
    protected final String sequence;

    protected Dialect(String table) {
        this.table = requireTableName(table);
        this.sequence = this.table + "_fence";
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
                "dialect: lock-jdbc supports PostgreSQL, MariaDB/MySQL and H2; this database is '" + product + "'");
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

    // ------------------------------------------------------------------ lease mode

    /** The outcome of a claim: the fence if granted, else the holder's time left in milliseconds. */
    public record Claim(OptionalLong fence, long leftMillis) {}

    /** Takes or re-takes (same owner) the lease row if free or expired, in one statement. */
    public abstract Claim claim(Handle h, String name, String owner, long leaseMillis);

    /** Moves the expiry of an unexpired row of {@code owner}; whether it was still held. */
    public abstract boolean extend(Handle h, String name, String owner, long leaseMillis);

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
    public boolean[] extendMany(Handle h, List<String> names, List<String> owners, List<Long> leaseMillis) {
        boolean[] held = new boolean[names.size()];
        for (int i = 0; i < held.length; i++) {
            held[i] = extend(h, names.get(i), owners.get(i), leaseMillis.get(i));
        }
        return held;
    }

    /** Frees {@code owner}'s row (rows are kept: see the fence rule) and signals waiters; whether it was held and unexpired. */
    public abstract boolean release(Handle h, String name, String owner);

    /** Frees {@code owner}'s row, expired or not. */
    public abstract void free(Handle h, String name, String owner);

    /**
     * For {@code lockctl inspect}, lease mode: the row's fence and the milliseconds until its expiry on
     * the database's clock (zero or less: free), read in one statement that never reads the owner.
     * Empty if the lock never had a row.
     */
    public Optional<LeaseRow> inspectLease(Handle h, String name) {
        return h.createQuery(inspectSql())
                .bind("name", name)
                .map((rs, ctx) -> new LeaseRow(rs.getLong(1), rs.getLong(2)))
                .findOne();
    }

    /** A lease row as {@link #inspectLease} reads it. */
    public record LeaseRow(long fence, long leftMillis) {}

    /** {@code SELECT fence, <milliseconds left> FROM table WHERE name = :name}. */
    protected abstract String inspectSql();

    // ------------------------------------------------------------------ session mode

    /** A row lock taken: the fence and the id of the database session that holds it. */
    public record Locked(long fence, long sessionId) {}

    /** Inserts the lock's row if absent, in its own committed transaction. */
    public abstract void ensureRow(Handle h, String name);

    /**
     * In the handle's open transaction, locks the row without waiting, takes a fence and sets the
     * server's idle-in-transaction timeout to {@code idleMillis}. Empty if the row does not exist; throws
     * if it is locked (see {@link #lockNotAvailable}).
     */
    public abstract Optional<Locked> lockRow(Handle h, String name, long idleMillis);

    /** Whether {@code e} says the row is locked by another transaction. */
    public abstract boolean lockNotAvailable(SQLException e);

    /** Resets the idle-in-transaction timeout of the handle's open transaction to {@code idleMillis}. */
    public abstract void keepAlive(Handle h, long idleMillis);

    /** Signals waiters on {@code name} when the open transaction commits. */
    public abstract void signalOnCommit(Handle h, String name);

    /** The notification channel, or empty if the product has none (waiters poll). */
    public Optional<String> channel() {
        return Optional.empty();
    }

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
