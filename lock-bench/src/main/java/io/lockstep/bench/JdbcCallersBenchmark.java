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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
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
 * lock-jdbc on PostgreSQL as users run it: the server fsyncs ({@code fsync=on}, PostgreSQL's default; {@code
 * off} is the labelled comparison), several callers (run with {@code -t 1}, {@code -t 4}, {@code -t 16}),
 * each on a lock name of its own (uncontended), over pools of an application's size; the floors and
 * ShedLock's JDBC provider in the same run. Every operation is timed (JMH {@code SampleTime}: p50 and p99).
 *
 * <ul>
 *   <li>{@code floor-lease}: plain JDBC running lock-jdbc's lease-mode claim and release statements ({@link
 *       JdbcBenchmark#CLAIM}, {@link JdbcBenchmark#RELEASE}) over a HikariCP pool of {@link #LEASE_POOL}, the
 *       size {@code lease} runs with: with more callers than connections both queue for one alike;
 *   <li>{@code floor-lease-sync}: the same with the release lock-jdbc ran before issue 27 (its {@code
 *       pg_notify} committed synchronously), to show what that cost;
 *   <li>{@code lease}: lock-jdbc lease mode, {@code poolSize=10} (HikariCP's default size);
 *   <li>{@code floor-session}: plain JDBC running session mode's transaction over a HikariCP pool of {@link
 *       #SESSION_POOL}, session mode's default size;
 *   <li>{@code floor-session-sync}: the same as cdfe1e5 left it (the notice queued by the lock statement, sent
 *       by a synchronous bare {@code COMMIT});
 *   <li>{@code session}: lock-jdbc session mode, its default pool of 16 (one connection per held lock);
 *   <li>{@code shedlock-jdbc}: ShedLock's {@code JdbcTemplateLockProvider} with the database's time over a
 *       HikariCP pool of 10.
 * </ul>
 *
 * <p>Each trial proves what it ran as {@link JdbcBenchmark}'s do: the server's committed and rolled-back
 * transactions, the table's row changes and the fences drawn, per operation, read at the server before and
 * after; the trial fails unless they are what the contender's statements must cause (a floor and its mode
 * the same). The statements the server ran ({@code pg_stat_statements}, utility statements such as {@code
 * BEGIN} included as that extension counts them) are recorded beside them, not checked.
 */
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 2)
public class JdbcCallersBenchmark {

    private static final LeaseOptions LEASE = LeaseOptions.of(Duration.ofSeconds(30));
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int MOST_CALLERS = 64;

    /** The pool lease mode runs with here, and its floors: HikariCP's default size. */
    static final int LEASE_POOL = 10;

    /** The pool session mode runs with (its default), and its floors. */
    static final int SESSION_POOL = 16;

    /** The release lock-jdbc sent before issue 27: the same, its commit synchronous. */
    static final String RELEASE_SYNC = "WITH d AS (UPDATE lockstep_lease AS l SET owner = '', expires_at = 'epoch'"
            + " FROM lockstep_lease AS o WHERE l.name = ? AND l.owner = ? AND o.name = l.name"
            + " RETURNING o.expires_at > clock_timestamp() AS live)"
            + " SELECT d.live, pg_notify(?, ?) IS NULL FROM d";

    /** Session mode's lock statement as cdfe1e5 left it: the release's notice queued in it. */
    static final String LOCK_ROW_NOTIFY = "SELECT nextval('lockstep_session_fence') AS fence, pg_backend_pid() AS pid,"
            + " pg_notify(?, ?) IS NULL AS queued,"
            + " set_config('idle_in_transaction_session_timeout', ?, true) AS idle,"
            + " set_config('application_name', 'lockstep fence ' || currval('lockstep_session_fence'), true) AS app"
            + " FROM (SELECT name FROM lockstep_session WHERE name = ? FOR UPDATE NOWAIT) AS locked";

    /** One server and one contender shared by the callers. */
    @State(Scope.Benchmark)
    public static class Server {
        /** Which lock to measure. */
        @Param({
            "floor-lease",
            "floor-lease-sync",
            "lease",
            "floor-session",
            "floor-session-sync",
            "session",
            "shedlock-jdbc"
        })
        public String lock = "lease";

        /** The server's {@code fsync}: {@code on} is what users run. */
        @Param({"on", "off"})
        public String fsync = "on";

        private @Nullable PostgresServer pg;
        private @Nullable LockProvider provider;
        private @Nullable HikariDataSource shedPool;
        private @Nullable JdbcTemplateLockProvider shedlock;
        private final AtomicInteger callers = new AtomicInteger();
        private final LongAdder ops = new LongAdder();
        /** A floor's connections: a pool of its mode's size, so a floor and its mode queue alike. */
        private @Nullable HikariDataSource floorPool;

        private Map<String, Long> atStart = Map.of();

        /** Starts PostgreSQL and the contender; every caller's row is made before the counters are read. */
        @Setup(Level.Trial)
        public void start() throws Exception {
            pg = PostgresServer.start(Map.of("fsync", fsync, "shared_preload_libraries", "pg_stat_statements"));
            try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
                    Statement st = c.createStatement()) {
                st.execute("CREATE EXTENSION pg_stat_statements");
            }

            String uri = pg.jdbcUrl() + "&createSchema=true&mode=";
            switch (lock) {
                case "lease", "floor-lease", "floor-lease-sync" ->
                    provider = Locks.open(uri + "lease&poolSize=" + LEASE_POOL);
                case "session", "floor-session", "floor-session-sync" ->
                    provider = Locks.open(uri + "session&poolSize=" + SESSION_POOL);
                case "shedlock-jdbc" -> {
                    try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
                            Statement st = c.createStatement()) {
                        st.execute("CREATE TABLE shedlock (name varchar(64) NOT NULL PRIMARY KEY,"
                                + " lock_until timestamp NOT NULL, locked_at timestamp NOT NULL,"
                                + " locked_by varchar(255) NOT NULL)");
                    }
                    HikariConfig config = new HikariConfig();
                    config.setJdbcUrl(pg.jdbcUrl());
                    config.setMaximumPoolSize(10);
                    shedPool = new HikariDataSource(config);
                    shedlock = new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
                            .withJdbcTemplate(new JdbcTemplate(shedPool))
                            .usingDbTime()
                            .build());
                }
                default -> throw new IllegalArgumentException("lock " + lock);
            }
            // Read before the setup's operations, which are counted as operations (a backend flushes its
            // statistics up to 10 s late, so counters read after them could still count part in the trial).
            atStart = counters(false);
            for (int i = 1; i <= MOST_CALLERS; i++) { // each name's row, so no measured claim inserts one
                ops.increment();
                if (shedlock != null) {
                    shedlock.lock(new LockConfiguration(Instant.now(), name(i), Duration.ofSeconds(30), Duration.ZERO))
                            .orElseThrow()
                            .unlock();
                } else {
                    provider.tryAcquire(name(i), LEASE).orElseThrow().release();
                }
            }
            if (lock.startsWith("floor-")) {
                provider.close();
                provider = null;
                HikariConfig config = new HikariConfig();
                config.setJdbcUrl(pg.jdbcUrl());
                config.setMaximumPoolSize(lock.startsWith("floor-lease") ? LEASE_POOL : SESSION_POOL);
                floorPool = new HikariDataSource(config);
            }
        }

        /** {@link JdbcBenchmark#counters} and the statements the server ran (the counters' own left out). */
        private Map<String, Long> counters(boolean awaitIdle) throws SQLException {
            Map<String, Long> out = new LinkedHashMap<>(JdbcBenchmark.counters(pg, table(), awaitIdle));
            try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
                    Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements"
                            + " WHERE query NOT LIKE '%pg_stat%' AND query NOT LIKE '%last_value%'"
                            + " AND query NOT LIKE 'SHOW %' AND query NOT LIKE 'CREATE %'")) {
                rs.next();
                out.put("statements", rs.getLong(1));
            }
            return out;
        }

        static String name(int caller) {
            return "bench/caller-" + caller;
        }

        String table() {
            return switch (lock) {
                case "session", "floor-session", "floor-session-sync" -> "lockstep_session";
                case "shedlock-jdbc" -> "shedlock";
                default -> "lockstep_lease";
            };
        }

        JdbcBenchmark.Expected expected() {
            return switch (lock) {
                case "session", "floor-session" -> new JdbcBenchmark.Expected(2, 0, 0, 0, 1);
                case "floor-session-sync" -> new JdbcBenchmark.Expected(1, 0, 0, 0, 1);
                case "shedlock-jdbc" -> new JdbcBenchmark.Expected(2, 0, 0, 2, 0);
                default -> new JdbcBenchmark.Expected(2, 0, 0, 2, 2);
            };
        }

        /** Stops the contender, checks the counters per operation, stops PostgreSQL. */
        @TearDown(Level.Trial)
        public void stop(BenchmarkParams params) throws Exception {
            try {
                if (provider != null) {
                    provider.close();
                }
                if (shedPool != null) {
                    shedPool.close();
                }
                if (floorPool != null) { // the counters wait for every backend to end
                    floorPool.close();
                }
                long measured = ops.sum();
                if (pg == null || measured == 0) {
                    return;
                }
                Map<String, Long> atEnd = counters(true);
                Map<String, Double> perOp = new LinkedHashMap<>();
                atEnd.forEach((k, v) -> perOp.put(k, (v - atStart.get(k)) / (double) measured));
                String seen = format(perOp);
                System.out.printf(
                        "%nPostgreSQL (fsync=%s) counters per operation, %s, %d callers, over %d operations: %s%n",
                        fsync, lock, params.getThreads(), measured, seen);
                JdbcBenchmark.Expected e = expected();
                check(perOp, "xact_commit", e.commits(), measured);
                check(perOp, "xact_rollback", e.rollbacks(), measured);
                check(perOp, "n_tup_ins", e.inserts(), measured);
                check(perOp, "n_tup_upd", e.updates(), measured);
                check(perOp, "n_tup_del", 0, measured);
                check(perOp, "fences", e.fences(), measured);
                CommandMix.record(new CommandMix.MixRecord(
                        params.getBenchmark(),
                        JdbcBenchmark.paramsOf(params),
                        params.getThreads(),
                        measured,
                        JdbcBenchmark.serverVersion(pg) + ", fsync=" + fsync,
                        List.of(perOp),
                        seen));
            } finally {
                if (pg != null) {
                    pg.close();
                }
            }
        }

        /** What a trial's setup and counting add to each counter, whatever its length (see {@link #check}). */
        private static final double SETUP_ALLOWANCE = 256;

        private void check(Map<String, Double> perOp, String counter, double expected, long measured) {
            double seen = perOp.get(counter);
            // Besides 0.01 per operation, a fixed number per trial: the setup's first claim of each of the
            // 16 names (inserts; in session mode rollbacks too), the pools' connections and the counters'
            // own reads: 64 inserts and 30 to 165 transactions in 1 s trials at 1 and 4 callers. Spread over a
            // documented run's tens of thousands of operations it is a few thousandths; over a --quick
            // run's 1 s it is not.
            double allowed = 0.01 + SETUP_ALLOWANCE / measured;
            if (Math.abs(seen - expected) > allowed) {
                throw new IllegalStateException(String.format(
                        "%s: %s was %.4f per operation, expected %.0f ± %.4f: the trial did not run what its name"
                                + " says",
                        lock, counter, seen, expected, allowed));
            }
        }
    }

    /** One benchmark thread: its own lock name. */
    @State(Scope.Thread)
    public static class OwnName {
        private String name = "";

        /** Picks this thread's name. */
        @Setup(Level.Trial)
        public void start(Server server) {
            int index = server.callers.incrementAndGet();
            if (index > MOST_CALLERS) {
                throw new IllegalStateException("at most " + MOST_CALLERS + " callers");
            }
            name = Server.name(index);
        }
    }

    /** One uncontended acquire and release of the caller's own name. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Object acquireRelease(Server s, OwnName c) throws Exception {
        s.ops.increment();
        switch (s.lock) {
            case "lease", "session" -> {
                Lease lease = s.provider.tryAcquire(c.name, LEASE).orElseThrow();
                return lease.release();
            }
            case "floor-lease" -> {
                try (Connection floor = s.floorPool.getConnection()) {
                    return JdbcBenchmark.floorLease(floor, c.name);
                }
            }
            case "floor-lease-sync" -> {
                try (Connection floor = s.floorPool.getConnection()) {
                    return floorLeaseSync(floor, c.name);
                }
            }
            case "floor-session" -> {
                try (Connection floor = s.floorPool.getConnection()) {
                    return JdbcBenchmark.floorSession(floor, c.name);
                }
            }
            case "floor-session-sync" -> {
                try (Connection floor = s.floorPool.getConnection()) {
                    return floorSessionSync(floor, c.name);
                }
            }
            case "shedlock-jdbc" -> {
                Optional<SimpleLock> held = s.shedlock.lock(
                        new LockConfiguration(Instant.now(), c.name, Duration.ofSeconds(30), Duration.ZERO));
                held.orElseThrow(() -> new IllegalStateException("ShedLock: the lock was not free"))
                        .unlock();
                return held;
            }
            default -> throw new IllegalArgumentException("lock " + s.lock);
        }
    }

    /** lease mode's claim and the release as it was before issue 27 (synchronous commit). */
    static boolean floorLeaseSync(Connection c, String name) throws SQLException {
        String owner = token();
        try (PreparedStatement ps = c.prepareStatement(JdbcBenchmark.CLAIM)) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.setLong(3, 30_000);
            ps.setLong(4, 30_000);
            ps.setString(5, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                rs.getLong(1);
                if (rs.wasNull()) {
                    throw new IllegalStateException("floor-lease-sync: the lock was not free");
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement(RELEASE_SYNC)) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.setString(3, "lockstep_lockstep_lease");
            ps.setString(4, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /** session mode as cdfe1e5 left it: the notice queued by the lock statement, a bare COMMIT. */
    static boolean floorSessionSync(Connection c, String name) throws SQLException {
        c.setAutoCommit(false);
        try {
            try (PreparedStatement ps = c.prepareStatement(LOCK_ROW_NOTIFY)) {
                ps.setString(1, "lockstep_lockstep_session");
                ps.setString(2, name);
                ps.setString(3, "10000");
                ps.setString(4, name);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw new IllegalStateException("floor-session-sync: the row is missing");
                    }
                }
            }
            c.commit();
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

    private static String format(Map<String, Double> perOp) {
        StringBuilder b = new StringBuilder();
        perOp.forEach((k, v) ->
                b.append(b.length() == 0 ? "" : ", ").append(k).append(' ').append(String.format("%.3f", v)));
        return b.toString();
    }
}
