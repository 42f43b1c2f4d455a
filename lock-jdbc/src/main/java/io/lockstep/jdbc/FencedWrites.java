package io.lockstep.jdbc;

import io.lockstep.LockConfigurationException;
import io.lockstep.jdbc.internal.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Fencing at the protected resource: a table of the last fence admitted per resource, checked and moved
 * in the caller's own transaction, so a write is applied only if its fence is not older than the last
 * one applied. A former holder that paused past its lease (a GC pause, a frozen VM) and then writes with
 * its old fence is rejected, whatever the lock service believed at the time.
 *
 * <pre>{@code
 * FencedWrites fences = FencedWrites.on("booking_fence");
 * try (Connection c = dataSource.getConnection()) {
 *     c.setAutoCommit(false);
 *     if (fences.admit(c, "room-12", lease.fencingToken().orElseThrow())) {
 *         ... the update of room 12 ...
 *         c.commit();
 *     } else {
 *         c.rollback(); // a newer holder has written: this one's lock is gone
 *     }
 * }
 * }</pre>
 *
 * <p>{@link #admit} locks the resource's fence row until the transaction ends, so concurrent writers of
 * one resource are serialized and the check and the update commit together (or roll back together).
 * Fences are compared, never trusted to authorize anything. Immutable and thread-safe; works on
 * PostgreSQL, MariaDB and H2 (the DDL is {@link #ddl}; MySQL is not supported: see the README).
 */
public final class FencedWrites {

    private final String table;

    private FencedWrites(String table) {
        this.table = table;
    }

    /**
     * The fence table {@code table} (an SQL identifier, optionally schema-qualified).
     *
     * @throws LockConfigurationException naming {@code table} if it is not an identifier
     */
    public static FencedWrites on(String table) {
        return new FencedWrites(Dialect.requireTableName(Objects.requireNonNull(table, "table")));
    }

    /** The statements that create the fence table if it is missing, for the database behind {@code c}. */
    public List<String> ddl(Connection c) throws SQLException {
        String product = c.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
        String text = product.contains("postgres") ? "text" : "varchar(256)";
        return List.of("CREATE TABLE IF NOT EXISTS " + table + " (resource " + text
                + " NOT NULL PRIMARY KEY, fence bigint NOT NULL)");
    }

    /**
     * In {@code c}'s current transaction: records {@code fence} as the last one admitted for {@code
     * resource} and returns true if no newer fence was admitted before; else changes nothing and returns
     * false. The caller applies its write only on true, in the same transaction, and commits both.
     *
     * <p>Call it before any read the write depends on: in READ COMMITTED a value read before {@code admit}
     * can be older than the write of the holder {@code admit} waited for.
     *
     * @throws IllegalArgumentException if {@code resource} is empty or longer than 256 characters
     * @throws IllegalStateException if {@code c} is in auto-commit: there the fence row is unlocked as soon
     *     as the statement ends, so a newer holder's write could come before this one's
     */
    public boolean admit(Connection c, String resource, long fence) throws SQLException {
        if (resource == null || resource.isEmpty() || resource.length() > 256) {
            throw new IllegalArgumentException("resource must be 1 to 256 characters, was "
                    + (resource == null ? "null" : resource.length() + " characters"));
        }
        if (c.getAutoCommit()) {
            throw new IllegalStateException("admit needs a transaction: call setAutoCommit(false) on the connection"
                    + " first (in auto-commit the check and the write would not commit together)");
        }
        String product = c.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
        if (product.contains("postgres")) {
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " AS f (resource, fence)"
                    + " VALUES (?, ?) ON CONFLICT (resource) DO UPDATE SET fence = excluded.fence"
                    + " WHERE f.fence <= excluded.fence RETURNING fence")) {
                ps.setString(1, resource);
                ps.setLong(2, fence);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next();
                }
            }
        }
        // Portable: make sure the row exists, lock it, compare, move.
        try (PreparedStatement ps =
                c.prepareStatement("SELECT fence FROM " + table + " WHERE resource = ? FOR UPDATE")) {
            ps.setString(1, resource);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    if (rs.getLong(1) > fence) {
                        return false;
                    }
                    try (PreparedStatement up =
                            c.prepareStatement("UPDATE " + table + " SET fence = ? WHERE resource = ?")) {
                        up.setLong(1, fence);
                        up.setString(2, resource);
                        up.executeUpdate();
                    }
                    return true;
                }
            }
        }
        // First write to this resource: a concurrent first write makes one of the inserts fail on the key.
        try (PreparedStatement ins = c.prepareStatement("INSERT INTO " + table + " (resource, fence) VALUES (?, ?)")) {
            ins.setString(1, resource);
            ins.setLong(2, fence);
            ins.executeUpdate();
            return true;
        }
    }

    @Override
    public String toString() {
        return "FencedWrites[" + table + "]";
    }
}
