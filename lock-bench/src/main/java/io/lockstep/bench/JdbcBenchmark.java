package io.lockstep.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.PostgresServer;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * lock-jdbc on PostgreSQL against plain JDBC issuing the same statements, and against ShedLock's JDBC
 * provider, on a PostgreSQL the benchmark starts on loopback (lock-tck's {@link PostgresServer}: {@code
 * initdb} + {@code postgres}, one per trial).
 *
 * <ul>
 *   <li>{@code acquireRelease}, one uncontended {@code tryAcquire} + {@code release} of the same name:
 *       <ul>
 *         <li>{@code lease}: lock-jdbc in lease mode; {@code floor-lease}: one plain JDBC connection in
 *             auto-commit running lease mode's claim and release statements (copied from {@code
 *             PostgresDialect}), a fresh 128-bit owner token each time;
 *         <li>{@code session}: lock-jdbc in session mode; {@code floor-session}: one plain JDBC connection
 *             running session mode's transaction (the row locked {@code FOR UPDATE NOWAIT} with its fence,
 *             then {@code COMMIT} and the release's {@code pg_notify} in one round trip);
 *         <li>{@code shedlock-jdbc}: ShedLock's {@code JdbcTemplateLockProvider} over a HikariCP pool of 4, with
 *             the database's time, {@code lock} + {@code unlock}.
 *       </ul>
 *   <li>{@code handoff}: a waiter on another provider already waiting behind the holder; the time from the
 *       holder's {@code release()} until the waiter holds the lock (release statement, {@code NOTIFY},
 *       the waiter's claim).
 * </ul>
 *
 * <p><b>Each trial proves what it ran.</b> PostgreSQL has no statement counter without the {@code
 * pg_stat_statements} extension, so a trial reads, before and after, the database's committed and
 * rolled-back transactions ({@code pg_stat_database}), the lock table's inserted, updated and deleted
 * rows ({@code pg_stat_user_tables}) and the fence sequence's {@code last_value} (fences drawn), after
 * every client backend has exited (so their statistics are flushed). It fails unless a floor and its
 * lock-jdbc mode show the same counts per operation and those counts are what the mode's statements
 * must cause.
 */
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class JdbcBenchmark {

    private static final String NAME = "bench/same";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final LeaseOptions LEASE = LeaseOptions.of(Duration.ofSeconds(30));

    // lease mode's statements, as PostgresDialect builds them for the table lockstep_lease
    static final String CLAIM =
            """
            WITH ins AS (
                INSERT INTO lockstep_lease AS l (name, owner, fence, expires_at)
                VALUES (?, ?, nextval('lockstep_lease_fence'), clock_timestamp() + ? * interval '1 millisecond')
                ON CONFLICT (name) DO UPDATE SET
                    owner = excluded.owner,
                    fence = CASE WHEN l.owner = excluded.owner THEN l.fence ELSE nextval('lockstep_lease_fence') END,
                    expires_at = clock_timestamp() + ? * interval '1 millisecond'
                WHERE l.expires_at <= clock_timestamp() OR l.owner = excluded.owner
                RETURNING fence)
            SELECT (SELECT fence FROM ins) AS fence,
                   (SELECT greatest(0, ceil(extract(epoch FROM expires_at - clock_timestamp()) * 1000))::bigint
                      FROM lockstep_lease WHERE name = ?) AS left_ms
            """;
    static final String RELEASE = "WITH d AS (UPDATE lockstep_lease AS l SET owner = '', expires_at = 'epoch'"
            + " FROM lockstep_lease AS o WHERE l.name = ? AND l.owner = ? AND o.name = l.name"
            + " RETURNING o.expires_at > clock_timestamp() AS live)"
            + " SELECT d.live, pg_notify(?, ?) IS NULL, set_config('synchronous_commit', 'off', true) FROM d";
    // session mode's statements for the table lockstep_session
    static final String LOCK_ROW = "SELECT nextval('lockstep_session_fence') AS fence, pg_backend_pid() AS pid,"
            + " set_config('idle_in_transaction_session_timeout', ?, true) AS idle,"
            + " set_config('application_name', 'lockstep fence ' || currval('lockstep_session_fence'), true) AS app"
            + " FROM (SELECT name FROM lockstep_session WHERE name = ? FOR UPDATE NOWAIT) AS locked";
    // the release: COMMIT and the notice in a transaction of its own (asynchronous commit), one round trip
    static final String COMMIT_RELEASE =
            "COMMIT; SELECT pg_notify(?, ?) IS NULL, set_config('synchronous_commit', 'off', true)";

    /** What a trial's counters must show per operation. */
    record Expected(double commits, double rollbacks, double inserts, double updates, double fences) {}

    /** The uncontended trial: one server, one contender. */
    @State(Scope.Benchmark)
    public static class Uncontended {
        /** Which lock to measure. */
        @Param({"floor-lease", "lease", "floor-session", "session", "shedlock-jdbc"})
        public String lock = "lease";

        private @Nullable PostgresServer pg;
        private @Nullable LockProvider provider;
        private @Nullable Connection floor;
        private @Nullable HikariDataSource shedPool;
        private @Nullable JdbcTemplateLockProvider shedlock;
        private long ops;
        private Map<String, Long> atStart = Map.of();

        /** Starts PostgreSQL and the contender, runs one operation to create the row, reads the counters. */
        @Setup(Level.Trial)
        public void start() throws Exception {
            pg = PostgresServer.start();
            String uri = pg.jdbcUrl() + "&createSchema=true&mode=";
            switch (lock) {
                case "lease", "floor-lease" -> provider = Locks.open(uri + "lease");
                case "session", "floor-session" -> provider = Locks.open(uri + "session");
                case "shedlock-jdbc" -> {
                    try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
                            Statement st = c.createStatement()) {
                        st.execute("CREATE TABLE shedlock (name varchar(64) NOT NULL PRIMARY KEY,"
                                + " lock_until timestamp NOT NULL, locked_at timestamp NOT NULL,"
                                + " locked_by varchar(255) NOT NULL)");
                    }
                    HikariConfig config = new HikariConfig();
                    config.setJdbcUrl(pg.jdbcUrl());
                    config.setMaximumPoolSize(4);
                    shedPool = new HikariDataSource(config);
                    shedlock = new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
                            .withJdbcTemplate(new JdbcTemplate(shedPool))
                            .usingDbTime()
                            .build());
                }
                default -> throw new IllegalArgumentException("lock " + lock);
            }
            if (lock.startsWith("floor-")) {
                // The floor's table and sequence are the ones lock-jdbc created; it needs nothing else of it.
                provider.tryAcquire(NAME, LEASE).orElseThrow().release(); // creates the row
                provider.close();
                provider = null;
                floor = DriverManager.getConnection(pg.jdbcUrl());
            }
            run(this); // the name's row exists from here on; the first connections are open
            atStart = counters(pg, table(), false);
        }

        String table() {
            return switch (lock) {
                case "lease", "floor-lease" -> "lockstep_lease";
                case "session", "floor-session" -> "lockstep_session";
                default -> "shedlock";
            };
        }

        Expected expected() {
            return switch (lock) {
                // claim: an upsert that takes the conflicting row (1 update, a fence in VALUES and one in DO
                // UPDATE), release: 1 update; each its own auto-commit transaction
                case "lease", "floor-lease" -> new Expected(2, 0, 0, 2, 2);
                // the lock's transaction (the row locked, no row written, one fence), then the notice's
                case "session", "floor-session" -> new Expected(2, 0, 0, 0, 1);
                // ShedLock: UPDATE to lock, UPDATE to unlock, each in a transaction of its own; no fences
                default -> new Expected(2, 0, 0, 2, 0);
            };
        }

        /** Stops the contender, checks the counters per operation, stops PostgreSQL. */
        @TearDown(Level.Trial)
        public void stop(BenchmarkParams params) throws Exception {
            try {
                closeClients();
                if (pg == null || ops == 0) {
                    return;
                }
                Map<String, Long> atEnd = counters(pg, table(), true);
                long measured = ops - 1; // the setup's operation ran before the counters started
                Map<String, Double> perOp = new LinkedHashMap<>();
                atEnd.forEach((k, v) -> perOp.put(k, (v - atStart.get(k)) / (double) measured));
                System.out.printf(
                        "%nPostgreSQL counters per operation, %s over %d operations: %s%n",
                        lock, measured, format(perOp));
                Expected e = expected();
                check(perOp, "xact_commit", e.commits());
                check(perOp, "xact_rollback", e.rollbacks());
                check(perOp, "n_tup_ins", e.inserts());
                check(perOp, "n_tup_upd", e.updates());
                check(perOp, "n_tup_del", 0);
                check(perOp, "fences", e.fences());
                CommandMix.record(new CommandMix.MixRecord(
                        params.getBenchmark(),
                        paramsOf(params),
                        params.getThreads(),
                        measured,
                        serverVersion(pg),
                        List.of(perOp),
                        format(perOp)));
            } finally {
                if (pg != null) {
                    pg.close();
                }
            }
        }

        private void check(Map<String, Double> perOp, String counter, double expected) {
            double seen = perOp.get(counter);
            // A few transactions per trial that are not operations (the counters' own reads, the pool's
            // start) are below 0.01 per operation at these rates.
            if (Math.abs(seen - expected) > 0.01) {
                throw new IllegalStateException(String.format(
                        "%s: %s was %.4f per operation, expected %.0f: the trial did not run what its name says",
                        lock, counter, seen, expected));
            }
        }

        private void closeClients() throws SQLException {
            if (provider != null) {
                provider.close();
            }
            if (floor != null) {
                floor.close();
            }
            if (shedPool != null) {
                shedPool.close();
            }
        }
    }

    /** One uncontended acquire and release of the same name. */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Object acquireRelease(Uncontended s) throws Exception {
        return run(s);
    }

    static Object run(Uncontended s) throws Exception {
        s.ops++;
        switch (s.lock) {
            case "lease", "session" -> {
                Lease lease = s.provider.tryAcquire(NAME, LEASE).orElseThrow();
                return lease.release();
            }
            case "floor-lease" -> {
                return floorLease(s.floor, NAME);
            }
            case "floor-session" -> {
                return floorSession(s.floor, NAME);
            }
            case "shedlock-jdbc" -> {
                Optional<SimpleLock> held = s.shedlock.lock(
                        new LockConfiguration(Instant.now(), NAME, Duration.ofSeconds(30), Duration.ZERO));
                held.orElseThrow(() -> new IllegalStateException("ShedLock: the lock was not free"))
                        .unlock();
                return held;
            }
            default -> throw new IllegalArgumentException("lock " + s.lock);
        }
    }

    /** lease mode's claim and release on one auto-commit connection. */
    static boolean floorLease(Connection c, String name) throws SQLException {
        String owner = token();
        try (PreparedStatement ps = c.prepareStatement(CLAIM)) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.setLong(3, 30_000);
            ps.setLong(4, 30_000);
            ps.setString(5, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                rs.getLong(1);
                if (rs.wasNull()) {
                    throw new IllegalStateException("floor-lease: the lock was not free");
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement(RELEASE)) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.setString(3, "lockstep_lockstep_lease");
            ps.setString(4, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /** session mode's transaction on one connection: lock the row with its fence; commit and notify. */
    static boolean floorSession(Connection c, String name) throws SQLException {
        c.setAutoCommit(false);
        try {
            try (PreparedStatement ps = c.prepareStatement(LOCK_ROW)) {
                ps.setString(1, "10000");
                ps.setString(2, name);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw new IllegalStateException("floor-session: the row is missing");
                    }
                }
            }
            try (PreparedStatement ps = c.prepareStatement(COMMIT_RELEASE)) {
                ps.setString(1, "lockstep_lockstep_session");
                ps.setString(2, name);
                ps.execute();
            }
            return true;
        } finally {
            c.setAutoCommit(true);
        }
    }

    private static String token() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** A holder and a waiter on two providers; each invocation hands the lock over once. */
    @State(Scope.Benchmark)
    public static class Handoff {
        /** Which mode to measure (lock-jdbc on both sides). */
        @Param({"lease", "session"})
        public String lock = "lease";

        private final String name = "bench/handoff";
        private final ExecutorService waiterThread = Executors.newSingleThreadExecutor();
        private @Nullable PostgresServer pg;
        private @Nullable LockProvider holder;
        private @Nullable LockProvider waiter;
        private @Nullable Connection stats;
        private @Nullable Lease held;
        private @Nullable Future<Lease> waiting;
        private @Nullable Lease handedOver;
        private long handoffs;
        private long slowestNanos;
        private long fencesAtStart;

        /** Starts PostgreSQL and two providers (each with its LISTEN connection). */
        @Setup(Level.Trial)
        public void start() throws Exception {
            pg = PostgresServer.start();
            String uri = pg.jdbcUrl() + "&createSchema=true&mode=" + lock;
            holder = Locks.open(uri);
            waiter = Locks.open(uri);
            holder.tryAcquire(name, LEASE).orElseThrow().release();
            stats = DriverManager.getConnection(pg.jdbcUrl());
            fencesAtStart = fences();
        }

        private long fences() throws SQLException {
            try (Statement st = stats.createStatement();
                    ResultSet rs = st.executeQuery("SELECT last_value FROM lockstep_" + lock + "_fence")) {
                rs.next();
                return rs.getLong(1);
            }
        }

        /**
         * Fences drawn per handoff prove how many attempts the waiter made. Lease mode: the holder's
         * take-over draws 2 (VALUES and DO UPDATE), the waiter's refused first attempt 1 (VALUES), its
         * granted attempt 2: 5 when the waiter tried once, waited and was woken once (6 when a stale
         * notification woke it once more in between). The waiter polls once a second when no
         * notification comes, so every handoff under 500 ms was woken by the release's NOTIFY.
         * Session mode draws a fence only for a granted lock: 2 per handoff (attempts are not counted).
         */
        private void checkAttempts(BenchmarkParams params) throws SQLException {
            if (handoffs == 0) {
                return;
            }
            double perHandoff = (fences() - fencesAtStart) / (double) handoffs;
            double expected = lock.equals("lease") ? 5 : 2;
            // A waiter may also be woken once by a stale notification (the previous invocation's release of
            // the same name arriving after its new watch was registered): one refused attempt more, 1 fence.
            double most = lock.equals("lease") ? expected + 1 : expected;
            System.out.printf(
                    "%nPostgreSQL fences per handoff, %s over %d handoffs: %.3f (expected %.0f to %.0f);"
                            + " slowest handoff %.1f ms (a polling waiter would take about 1,000 ms)%n",
                    lock, handoffs, perHandoff, expected, most, slowestNanos / 1e6);
            if (perHandoff < expected - 0.01 || perHandoff > most + 0.01) {
                throw new IllegalStateException(String.format(
                        "%s handoff: %.4f fences per handoff, expected %.0f to %.0f: the waiter did not try once"
                                + " before the release and once (or, after a stale notification, twice) after",
                        lock, perHandoff, expected, most));
            }
            if (slowestNanos >= TimeUnit.MILLISECONDS.toNanos(500)) {
                throw new IllegalStateException(String.format(
                        "%s handoff: the slowest handoff took %.1f ms: a waiter polls every 1,000 ms when no"
                                + " notification wakes it, so a handoff over 500 ms was not notified",
                        lock, slowestNanos / 1e6));
            }
            Map<String, Double> perOp = new LinkedHashMap<>();
            perOp.put("fences", perHandoff);
            CommandMix.record(new CommandMix.MixRecord(
                    params.getBenchmark(),
                    paramsOf(params),
                    params.getThreads(),
                    handoffs,
                    serverVersion(pg),
                    List.of(perOp),
                    format(perOp)));
        }

        /** Before each handoff: the holder holds and the waiter has tried once and is waiting. */
        @Setup(Level.Invocation)
        public void queueAWaiter() throws Exception {
            held = holder.tryAcquire(name, LEASE).orElseThrow();
            long before = attempts();
            waiting = waiterThread.submit(() -> waiter.acquire(name, LEASE.withWaitTime(Duration.ofSeconds(10))));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (attempts() == before) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the waiter never tried");
                }
                Thread.onSpinWait();
            }
            // The waiter's failed attempt is in the database; give it the moment to go back to waiting on
            // its release watch, so the figure is a handoff to a waiter already waiting.
            Thread.sleep(5);
        }

        /**
         * A value that changes when the waiter has made an attempt: lease mode draws a fence for every
         * claim (the VALUES row's {@code nextval}); in session mode a refused lock aborts the attempt's
         * transaction and the waiter rolls it back, which {@code pg_stat_activity} shows at once as the
         * last statement of the waiter's backend (statistics counters are flushed only every second).
         */
        private long attempts() throws SQLException {
            String sql = lock.equals("lease")
                    ? "SELECT last_value FROM lockstep_lease_fence"
                    : "SELECT coalesce(max((extract(epoch FROM state_change) * 1000000)::bigint), 0)"
                            + " FROM pg_stat_activity WHERE query = 'ROLLBACK'";
            try (Statement st = stats.createStatement()) {
                st.execute("SELECT pg_stat_clear_snapshot()");
                try (ResultSet rs = st.executeQuery(sql)) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        }

        /** After each handoff: the waiter lets go. */
        @TearDown(Level.Invocation)
        public void releaseTheWaiter() {
            if (handedOver != null) {
                handedOver.release();
                handedOver = null;
            }
        }

        /** Checks the waiter's attempts, stops everything. */
        @TearDown(Level.Trial)
        public void stop(BenchmarkParams params) throws SQLException {
            try {
                if (stats != null) {
                    checkAttempts(params);
                }
            } finally {
                stopAll();
            }
        }

        private void stopAll() throws SQLException {
            waiterThread.shutdownNow();
            if (stats != null) {
                stats.close();
            }
            if (holder != null) {
                holder.close();
            }
            if (waiter != null) {
                waiter.close();
            }
            if (pg != null) {
                pg.close();
            }
        }
    }

    /** Release by one provider until the waiter on another holds the lock. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Object handoff(Handoff h) throws Exception {
        long start = System.nanoTime();
        h.held.release();
        h.handedOver = h.waiting.get(10, TimeUnit.SECONDS);
        h.slowestNanos = Math.max(h.slowestNanos, System.nanoTime() - start);
        h.handoffs++;
        return h.handedOver;
    }

    /**
     * The counters: transactions, the table's row changes, and the fences the table's sequence has drawn.
     * With {@code awaitIdle}, once every other client backend has exited (a backend flushes its statistics
     * when it ends); without, what the backends have flushed so far (at the start of a trial the one
     * operation of the setup may be counted with the trial's: below 0.001 per operation).
     */
    static Map<String, Long> counters(PostgresServer pg, String table, boolean awaitIdle) throws SQLException {
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
                Statement st = c.createStatement()) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (awaitIdle) {
                try (ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_stat_activity"
                        + " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")) {
                    rs.next();
                    if (rs.getLong(1) == 0) {
                        break;
                    }
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("client backends still running 20 s after the clients closed");
                    }
                }
                Thread.onSpinWait();
            }
            st.execute("SELECT pg_stat_force_next_flush()");
            st.execute("SELECT pg_stat_clear_snapshot()");
            Map<String, Long> out = new LinkedHashMap<>();
            try (ResultSet rs = st.executeQuery("SELECT xact_commit, xact_rollback FROM pg_stat_database"
                    + " WHERE datname = current_database()")) {
                rs.next();
                out.put("xact_commit", rs.getLong(1));
                out.put("xact_rollback", rs.getLong(2));
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT coalesce(n_tup_ins, 0), coalesce(n_tup_upd, 0),"
                    + " coalesce(n_tup_del, 0) FROM pg_stat_user_tables WHERE relname = ?")) {
                ps.setString(1, table);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw new IllegalStateException("no statistics for table " + table);
                    }
                    out.put("n_tup_ins", rs.getLong(1));
                    out.put("n_tup_upd", rs.getLong(2));
                    out.put("n_tup_del", rs.getLong(3));
                }
            }
            if (table.equals("shedlock")) {
                out.put("fences", 0L);
            } else {
                try (ResultSet rs = st.executeQuery("SELECT last_value FROM " + table + "_fence")) {
                    rs.next();
                    out.put("fences", rs.getLong(1));
                }
            }
            return out;
        }
    }

    static Map<String, String> paramsOf(BenchmarkParams params) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String key : params.getParamsKeys()) {
            out.put(key, params.getParam(key));
        }
        return out;
    }

    static String serverVersion(@Nullable PostgresServer pg) {
        if (pg == null) {
            return "unknown";
        }
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SHOW server_version")) {
            rs.next();
            return "PostgreSQL " + rs.getString(1);
        } catch (SQLException e) {
            return "unknown";
        }
    }

    private static String format(Map<String, Double> perOp) {
        StringBuilder b = new StringBuilder();
        perOp.forEach((k, v) ->
                b.append(b.length() == 0 ? "" : ", ").append(k).append(' ').append(String.format("%.3f", v)));
        return b.toString();
    }
}
