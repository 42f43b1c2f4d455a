package com.example.pgadvisory;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Capability;
import io.lockstep.ProviderInfo;
import io.lockstep.StrengthTier;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.AttemptContext;
import io.lockstep.spi.Grant;
import io.lockstep.spi.LockBackend;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Locks on PostgreSQL: each lease holds a session-level advisory lock ({@code pg_try_advisory_lock}) on
 * a connection of its own, and a <em>lease row</em> in {@code lockstep_lease} that is the lock itself.
 *
 * <p><b>The lease-row rule.</b> PostgreSQL frees an advisory lock the moment its session ends, which
 * may be long before the validity the client was given. So the row decides: keyed by the full lock
 * name, it holds the owner token, the fence, the holding session and an expiry that the server's clock
 * ({@code clock_timestamp()}) sets, as {@code leaseTime} after the statement ran, which is never
 * earlier than {@code leaseTime} after the client sent it. Another owner may take the lock only when the
 * row is absent or expired; extend moves the expiry, release deletes the row. A dropped session
 * therefore never frees the lock before its validity has ended.
 *
 * <p>The advisory key is a 64-bit hash of the name. Two names whose keys collide contend for the
 * advisory lock (one waits for the other) but never share a lock: the row, keyed by the full name,
 * decides. A session that still holds the advisory lock for an expired row (its client is gone or was
 * frozen) is ended with {@code pg_terminate_backend} by the next acquirer. Fences come from the
 * sequence {@code lockstep_fence}, which survives a restart. Names and tokens are bind parameters only.
 *
 * <p>One connection per held lease (the advisory lock lives in it), opened by the acquiring call and
 * closed by {@link #dispose}: size {@code max_connections} for the leases held at once. Thread-safe.
 */
public final class AdvisoryLockBackend implements LockBackend<AdvisoryLockBackend.Handle> {

    private static final String SCHEMA = """
            CREATE SEQUENCE IF NOT EXISTS lockstep_fence;
            CREATE TABLE IF NOT EXISTS lockstep_lease (
                name         text        PRIMARY KEY,
                lock_key     bigint      NOT NULL,
                owner        text        NOT NULL,
                fence        bigint      NOT NULL,
                holder_pid   integer     NOT NULL,
                holder_start timestamptz,
                expires_at   timestamptz NOT NULL);
            CREATE INDEX IF NOT EXISTS lockstep_lease_key ON lockstep_lease (lock_key);
            """;

    private static final String ROW_CONFLICT = """
            ON CONFLICT (name) DO UPDATE SET
                owner = excluded.owner,
                fence = CASE WHEN l.owner = excluded.owner AND l.expires_at > clock_timestamp()
                             THEN l.fence ELSE excluded.fence END,
                lock_key = excluded.lock_key,
                holder_pid = excluded.holder_pid,
                holder_start = excluded.holder_start,
                expires_at = excluded.expires_at
            WHERE l.expires_at <= clock_timestamp() OR l.owner = excluded.owner
            RETURNING fence
            """;

    private static final String TAKE_ROW = """
            INSERT INTO lockstep_lease AS l (name, lock_key, owner, fence, holder_pid, holder_start, expires_at)
            VALUES (?, ?, ?, nextval('lockstep_fence'), pg_backend_pid(),
                    (SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()),
                    clock_timestamp() + ? * interval '1 millisecond')
            """ + ROW_CONFLICT;

    /**
     * The advisory lock and the row in one round trip: the row is written only if the advisory lock was
     * taken (a volatile CTE is evaluated once, first). Answers whether the advisory lock was taken and
     * the fence, null if the row is another owner's and still valid.
     */
    private static final String TAKE_BOTH = """
            WITH adv AS (SELECT pg_try_advisory_lock(?) AS got),
            ins AS (
                INSERT INTO lockstep_lease AS l (name, lock_key, owner, fence, holder_pid, holder_start, expires_at)
                SELECT ?, ?, ?, nextval('lockstep_fence'), pg_backend_pid(),
                       (SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()),
                       clock_timestamp() + ? * interval '1 millisecond'
                FROM adv WHERE adv.got
                """ + ROW_CONFLICT + """
            )
            SELECT adv.got, (SELECT fence FROM ins) FROM adv
            """;


    private static final String EXTEND_ROW = """
            UPDATE lockstep_lease SET expires_at = clock_timestamp() + ? * interval '1 millisecond',
                holder_pid = pg_backend_pid(),
                holder_start = (SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid())
            WHERE name = ? AND owner = ? AND expires_at > clock_timestamp()
            """;

    private static final String HOLDERS_OF_KEY = """
            SELECT name, owner, holder_pid, holder_start, expires_at > clock_timestamp() AS live,
                   greatest(0, extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint AS left_ms
            FROM lockstep_lease WHERE lock_key = ?
            """;

    /** Servers whose table and sequence exist, so that each JVM creates them once per server. */
    private static final Set<String> SCHEMA_READY = ConcurrentHashMap.newKeySet();

    private static final Duration RETRY_SOON = Duration.ofMillis(20);

    /** A held lease: the lock, its owner and the session holding its advisory lock. */
    public static final class Handle {
        final String name;
        final String ownerToken;
        final long key;
        volatile Session session;

        Handle(String name, String ownerToken, long key, Session session) {
            this.name = name;
            this.ownerToken = ownerToken;
            this.key = key;
            this.session = session;
        }

        @Override
        public String toString() {
            return "Handle[" + name + "]";
        }
    }

    /** One connection and its server process id. */
    static final class Session implements AutoCloseable {
        final Connection connection;
        final int pid;

        Session(Connection connection, int pid) {
            this.connection = connection;
            this.pid = pid;
        }

        boolean broken() {
            try {
                return connection.isClosed();
            } catch (SQLException e) {
                return true;
            }
        }

        @Override
        public void close() {
            try {
                connection.close();
            } catch (SQLException | RuntimeException ignored) {
                // closing frees the advisory lock; a connection already gone has freed it too
            }
        }
    }

    private final String url;
    private final Properties connectionProperties;
    private final String where;
    private final Set<Session> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /**
     * A backend on the PostgreSQL server at {@code host:port}, database {@code database}.
     *
     * @param callTimeout the bound of every connect and statement (the driver counts whole seconds, so
     *     it is rounded up to at least one second)
     * @param sslMode the driver's {@code sslmode}: {@code disable}, {@code prefer} (one more round trip
     *     per connection to ask), {@code require}, {@code verify-ca} or {@code verify-full}
     */
    public AdvisoryLockBackend(
            String host,
            int port,
            String database,
            String user,
            String password,
            Duration callTimeout,
            String sslMode) {
        this.url = "jdbc:postgresql://" + host + ":" + port + "/" + database;
        this.where = "PostgreSQL at " + host + ":" + port + "/" + database;
        Properties p = new Properties();
        p.setProperty("user", user);
        if (!password.isEmpty()) {
            p.setProperty("password", password);
        }
        String seconds = Long.toString(Math.max(1, (callTimeout.toMillis() + 999) / 1000));
        p.setProperty("connectTimeout", seconds);
        p.setProperty("loginTimeout", seconds);
        p.setProperty("socketTimeout", seconds);
        p.setProperty("tcpKeepAlive", "true");
        p.setProperty("ApplicationName", "lockstep-advisory");
        p.setProperty("assumeMinServerVersion", "12"); // session settings go in the startup packet
        p.setProperty("sslmode", sslMode);
        this.connectionProperties = p;
    }

    @Override
    public ProviderInfo info() {
        return new ProviderInfo(
                "pgadvisory",
                StrengthTier.BEST_EFFORT,
                EnumSet.of(Capability.FENCING, Capability.LEASE_EXPIRY, Capability.EXTEND));
    }

    @Override
    public Attempt<Handle> tryLock(AttemptContext attempt) {
        requireOpen();
        // A retry of the same acquire: end the session the earlier attempt opened (its grant, if the
        // reply was lost, stays in the row under our owner token and is taken over below).
        attempt.attachment(Session.class).ifPresent(this::end);
        attempt.attach(null);
        String name = attempt.name();
        String owner = attempt.ownerToken();
        long key = keyOf(name);
        Session s = connect();
        attempt.attach(s);
        try {
            try (PreparedStatement ps = s.connection.prepareStatement(TAKE_BOTH)) {
                ps.setLong(1, key);
                ps.setString(2, name);
                ps.setLong(3, key);
                ps.setString(4, owner);
                ps.setLong(5, attempt.leaseTime().toMillis());
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    long fence = rs.getLong(2);
                    if (!rs.wasNull()) {
                        return Attempt.granted(
                                Grant.of(new Handle(name, owner, key, s), OptionalLong.of(fence), attempt.leaseTime()));
                    }
                    if (rs.getBoolean(1)) {
                        // The advisory lock was free but the row is another owner's and still valid: its
                        // session dropped before its validity ended. The row decides: busy.
                        Duration left = rowTimeLeft(s, name);
                        end(s);
                        attempt.attach(null);
                        return Attempt.busy(left);
                    }
                }
            }
            Optional<Duration> busy = takeAdvisory(s, key, name, owner, true);
            if (busy.isPresent()) {
                end(s);
                attempt.attach(null);
                return Attempt.busy(busy.get());
            }
            OptionalLong fence = takeRow(s, name, key, owner, attempt.leaseTime());
            if (fence.isEmpty()) {
                // The advisory lock was free but the row is another owner's and still valid: its
                // session dropped before its validity ended. The row decides: busy.
                Duration left = rowTimeLeft(s, name);
                end(s);
                attempt.attach(null);
                return Attempt.busy(left);
            }
            return Attempt.granted(Grant.of(new Handle(name, owner, key, s), fence, attempt.leaseTime()));
        } catch (SQLException e) {
            throw unavailable("tryLock", e);
        }
    }

    @Override
    public Optional<Duration> extend(Handle handle, Duration leaseTime) {
        requireOpen();
        Session s = handle.session;
        if (!s.broken()) {
            try {
                return updateRow(s, handle, leaseTime) ? Optional.of(leaseTime) : Optional.empty();
            } catch (SQLException e) {
                // Unreachable (even if the failure just broke the session): the caller keeps the validity it
                // had, which the row guarantees, and the next extend finds the session gone.
                throw unavailable("extend", e);
            }
        }
        // The lease's session is gone (ended on the server, or its connection broke earlier): a
        // session-bound lock does not outlive its session, so the lease is lost. The row stays until its
        // expiry, so nobody else takes the lock before the validity already given; release deletes it sooner.
        // Said only once the server answers a new connection: while it cannot be reached, the answer is
        // "unavailable" (connect() throws), and the caller keeps the validity it had.
        end(connect());
        return Optional.empty();
    }

    @Override
    public boolean release(Handle handle) {
        requireOpen();
        Session s = handle.session;
        boolean own = !s.broken();
        Session use = own ? s : connect();
        try {
            boolean held = deleteRow(use, handle.name, handle.ownerToken);
            if (own) {
                unlockAdvisory(use, handle.key);
            }
            return held;
        } catch (SQLException e) {
            throw unavailable("release", e);
        } finally {
            if (!own) {
                end(use);
            }
        }
    }

    @Override
    public void abandon(AttemptContext attempt) {
        attempt.attachment(Session.class).ifPresent(this::end);
        attempt.attach(null);
        if (closed) {
            return;
        }
        try (Session s = connect()) {
            open.remove(s);
            deleteRow(s, attempt.name(), attempt.ownerToken());
        } catch (SQLException | RuntimeException ignored) {
            // best effort: a row left behind expires on the server's clock
        }
    }

    @Override
    public void dispose(Handle handle) {
        end(handle.session);
    }

    @Override
    public String describe() {
        return where;
    }

    @Override
    public void close() {
        closed = true;
        for (Session s : open) {
            end(s);
        }
    }

    // ---------------------------------------------------------------- the steps

    /**
     * Takes the advisory lock for {@code key} on {@code s}. If another session holds it, looks at the
     * rows of that key: a valid row of another lock or owner means busy (its time left); rows that
     * expired or are this owner's mean their session is stale, and it is ended and waited for.
     *
     * @return empty once {@code s} holds the advisory lock; else how long to wait before retrying
     */
    private Optional<Duration> takeAdvisory(Session s, long key, String name, String owner, boolean wait)
            throws SQLException {
        if (tryAdvisory(s, key)) {
            return Optional.empty();
        }
        Duration busyFor = Duration.ZERO;
        boolean anyStale = false;
        try (PreparedStatement ps = s.connection.prepareStatement(HOLDERS_OF_KEY)) {
            ps.setLong(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    boolean mine = rs.getString("name").equals(name) && rs.getString("owner").equals(owner);
                    if (rs.getBoolean("live") && !mine) {
                        Duration left = Duration.ofMillis(rs.getLong("left_ms"));
                        busyFor = left.compareTo(busyFor) > 0 ? left : busyFor;
                    } else if (rs.getInt("holder_pid") != s.pid) {
                        anyStale = true;
                        terminate(s, rs.getInt("holder_pid"), rs.getObject("holder_start"));
                    }
                }
            }
        }
        if (!busyFor.isZero()) {
            return Optional.of(busyFor.compareTo(RETRY_SOON) < 0 ? RETRY_SOON : busyFor);
        }
        if (!anyStale || !wait) {
            return Optional.of(RETRY_SOON); // a grant between its advisory lock and its row, or a collision
        }
        return waitForAdvisory(s, key) ? Optional.empty() : Optional.of(RETRY_SOON);
    }

    private static boolean tryAdvisory(Session s, long key) throws SQLException {
        try (PreparedStatement ps = s.connection.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
            ps.setLong(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /** Waits up to a second on the server for a terminated session to let go of the advisory lock. */
    private static boolean waitForAdvisory(Session s, long key) throws SQLException {
        Connection c = s.connection;
        c.setAutoCommit(false);
        try (Statement st = c.createStatement();
                PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_lock(?)")) {
            st.execute("SET LOCAL lock_timeout = '500ms'");
            ps.setLong(1, key);
            ps.executeQuery().close();
            c.commit(); // a session-level advisory lock outlives the transaction
            return true;
        } catch (SQLException e) {
            if ("55P03".equals(e.getSQLState())) { // lock_not_available
                c.rollback();
                return false;
            }
            throw e;
        } finally {
            if (!c.isClosed()) {
                c.setAutoCommit(true);
            }
        }
    }

    private static void terminate(Session s, int pid, Object backendStart) throws SQLException {
        // Only that very session: a pid the server has since given to another connection is left alone.
        try (PreparedStatement ps = s.connection.prepareStatement(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ? AND backend_start = ?")) {
            ps.setInt(1, pid);
            ps.setObject(2, backendStart);
            ps.executeQuery().close();
        }
    }

    private static OptionalLong takeRow(Session s, String name, long key, String owner, Duration leaseTime)
            throws SQLException {
        try (PreparedStatement ps = s.connection.prepareStatement(TAKE_ROW)) {
            ps.setString(1, name);
            ps.setLong(2, key);
            ps.setString(3, owner);
            ps.setLong(4, leaseTime.toMillis());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? OptionalLong.of(rs.getLong(1)) : OptionalLong.empty();
            }
        }
    }

    private static boolean updateRow(Session s, Handle h, Duration leaseTime) throws SQLException {
        try (PreparedStatement ps = s.connection.prepareStatement(EXTEND_ROW)) {
            ps.setLong(1, leaseTime.toMillis());
            ps.setString(2, h.name);
            ps.setString(3, h.ownerToken);
            return ps.executeUpdate() == 1;
        }
    }

    private static boolean deleteRow(Session s, String name, String owner) throws SQLException {
        try (PreparedStatement ps = s.connection.prepareStatement(
                "DELETE FROM lockstep_lease WHERE name = ? AND owner = ? RETURNING expires_at > clock_timestamp()")) {
            ps.setString(1, name);
            ps.setString(2, owner);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    private static void unlockAdvisory(Session s, long key) {
        try (PreparedStatement ps = s.connection.prepareStatement("SELECT pg_advisory_unlock(?)")) {
            ps.setLong(1, key);
            ps.executeQuery().close();
        } catch (SQLException ignored) {
            // the session ends in dispose anyway, which frees it
        }
    }

    private static Duration rowTimeLeft(Session s, String name) throws SQLException {
        try (PreparedStatement ps = s.connection.prepareStatement(
                "SELECT greatest(0, extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint"
                        + " FROM lockstep_lease WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                Duration left = rs.next() ? Duration.ofMillis(rs.getLong(1)) : Duration.ZERO;
                return left.compareTo(RETRY_SOON) < 0 ? RETRY_SOON : left;
            }
        }
    }

    // ---------------------------------------------------------------- connections

    private Session connect() {
        Connection c;
        try {
            c = new org.postgresql.Driver().connect(url, connectionProperties);
            if (c == null) {
                throw new BackendUnavailableException(where + " refused the URL", null, false);
            }
        } catch (SQLException e) {
            throw unavailable("connect", e);
        }
        try {
            c.setAutoCommit(true);
            if (!SCHEMA_READY.contains(url)) {
                createSchema(c);
            }
            // The server sent its process id at startup: no round trip.
            Session s = new Session(c, c.unwrap(org.postgresql.PGConnection.class).getBackendPID());
            open.add(s);
            if (closed) {
                end(s);
                throw new IllegalStateException("the backend for " + where + " is closed");
            }
            return s;
        } catch (SQLException e) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // already failing
            }
            throw unavailable("connect", e);
        }
    }

    private void createSchema(Connection c) throws SQLException {
        // One round trip: the statements are sent together and run as one implicit transaction.
        // Concurrent CREATE ... IF NOT EXISTS can still collide in the catalog, so they are serialized.
        try (Statement st = c.createStatement()) {
            st.execute("SELECT pg_advisory_xact_lock(7217873465218342915);\n" + SCHEMA);
        }
        SCHEMA_READY.add(url);
    }

    private void end(Session s) {
        open.remove(s);
        s.close();
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the backend for " + where + " is closed");
        }
    }

    private BackendUnavailableException unavailable(String operation, SQLException e) {
        // SQLState class 08 (connection) and 57P (operator intervention) are the server being away;
        // a statement timeout or lock timeout is transient too. Messages name the address, never a password.
        return new BackendUnavailableException(
                where + ": " + operation + " failed (" + e.getSQLState() + "): " + e.getMessage(), e, true);
    }

    /** The advisory key: the first 64 bits of the SHA-256 of the name's UTF-8 bytes. */
    static long keyOf(String name) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
            return ByteBuffer.wrap(digest).getLong();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
