package io.lockstep.jdbc;

import java.util.Locale;

/** How a {@link JdbcLockProvider} holds a lock. */
public enum JdbcMode {
    /**
     * A row with the owner token and an expiry computed from the database's clock; no connection is held
     * between calls, so one small pool serves any number of held locks. Claim, extend and release are
     * single conditional statements. A holder that dies keeps the lock until its lease time ends.
     */
    LEASE,
    /**
     * A row locked by {@code SELECT ... FOR UPDATE NOWAIT} in a transaction kept open on a connection of
     * its own: the lock ends the moment the transaction does, so a holder whose connection or process
     * dies loses it at once. The server's idle-in-transaction timeout is set to the longer of the session
     * timeout and the lease time, and each heartbeat resets it, so a frozen holder blocks others only
     * until then; the client counts the lease valid for its lease time from the last confirmed grant or
     * renewal, never longer than the server keeps the transaction. A lease not renewed frees its row when
     * its validity ends. Holds one pool connection per held lock.
     */
    SESSION;

    /** The mode named {@code value} ({@code lease} or {@code session}, any case). */
    public static JdbcMode parse(String value) {
        for (JdbcMode m : values()) {
            if (m.name().equalsIgnoreCase(value.strip())) {
                return m;
            }
        }
        throw new io.lockstep.LockConfigurationException("mode: expected lease or session, got '" + value + "'");
    }

    /** The name as written in a URI. */
    public String uriName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
