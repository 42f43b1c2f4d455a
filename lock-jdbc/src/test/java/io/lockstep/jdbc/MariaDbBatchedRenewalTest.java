package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.LossReason;
import io.lockstep.jdbc.internal.Connections;
import io.lockstep.jdbc.internal.Dialect;
import io.lockstep.jdbc.internal.LeaseBackend;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.Extension;
import io.lockstep.tck.servers.MariaDbServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Lease mode on MariaDB renews a batch of rows with two statements (an {@code UPDATE} joined to the
 * batch, then a {@code SELECT} of the rows held) instead of one per lease, and still reports loss per
 * lease. Statements are counted with the server's own counters ({@code Com_update},
 * {@code Com_update_multi}, {@code Com_select}); the class holds the shared MariaDB's resource lock, so
 * no other test class talks to the server meanwhile.
 */
@ResourceLock(SharedServers.MARIADB)
class MariaDbBatchedRenewalTest {

    private static final Duration LONG = Duration.ofMinutes(5);

    @Test
    @DisplayName("a batch of five renewals where one row was taken over and one released loses exactly those two")
    void twoStatementsReportLossPerLease() throws Exception {
        MariaDbServer db = SharedServers.mariadb();
        String table = table("batch_loss");
        Dialect dialect = Dialect.forProduct("MariaDB", table);
        for (String ddl : dialect.ddl()) {
            sql(db, ddl);
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(db.jdbcUrl());
        config.setMaximumPoolSize(1);
        try (HikariDataSource pool = new HikariDataSource(config);
                Connection status = DriverManager.getConnection(db.jdbcUrl())) {
            LeaseBackend backend = new LeaseBackend(
                    Jdbi.create(pool),
                    new Connections(pool, 0),
                    dialect,
                    "test",
                    null,
                    null,
                    ClockDrift.DEFAULT_FACTOR);
            assertThat(backend.maxRenewalBatch()).isGreaterThan(1);
            List<Extension<LeaseBackend.Handle>> batch = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                Attempt<LeaseBackend.Handle> a =
                        backend.tryLock("batch/" + i, UUID.randomUUID().toString(), LONG);
                assertThat(a.isGranted()).isTrue();
                batch.add(new Extension<>(a.grant().handle(), Duration.ofMinutes(10 + i)));
            }
            // Row 1: the lease ran out and another owner took it over; row 3: released by its owner.
            sql(db, "UPDATE " + table + " SET expires_at = '1970-01-01 00:00:00' WHERE name = 'batch/1'");
            assertThat(backend.tryLock("batch/1", "someone-else", LONG).isGranted())
                    .isTrue();
            assertThat(backend.release(batch.get(3).handle())).isTrue();
            Map<String, Long> before = counters(status);

            List<Optional<Duration>> results = backend.extendAll(batch);

            Map<String, Long> spent = since(before, counters(status));
            assertThat(spent)
                    .as("statements the server ran for the batch")
                    .containsEntry("Com_update_multi", 1L)
                    .containsEntry("Com_update", 0L)
                    .containsEntry("Com_select", 1L);
            // Each held lease is valid for its lease time less the drift allowance; its row gets the whole lease time.
            assertThat(results)
                    .containsExactly(
                            Optional.of(validity(Duration.ofMinutes(10))),
                            Optional.empty(),
                            Optional.of(validity(Duration.ofMinutes(12))),
                            Optional.empty(),
                            Optional.of(validity(Duration.ofMinutes(14))));
            // Each held row's expiry was set from the database's clock to its own lease time; the others
            // were left alone.
            List<String> rows = new ArrayList<>();
            try (Statement st = status.createStatement();
                    ResultSet rs = st.executeQuery("SELECT CAST(name AS CHAR), owner,"
                            + " ROUND(TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6), expires_at) / 60) FROM " + table
                            + " ORDER BY name")) {
                while (rs.next()) {
                    long minutes = rs.getLong(3);
                    rows.add(rs.getString(1) + " " + (rs.getString(2).equals("someone-else") ? "other " : "")
                            + (minutes > 0 ? minutes + "min" : "expired"));
                }
            }
            assertThat(rows)
                    .containsExactly(
                            "batch/0 10min", "batch/1 other 5min", "batch/2 12min", "batch/3 expired", "batch/4 14min");
            backend.close();
        }
    }

    @Test
    @DisplayName("200 auto-renewed leases are renewed with a few statements, and the one taken over is lost alone")
    void manyLeasesRenewWithFewStatements() throws Exception {
        MariaDbServer db = SharedServers.mariadb();
        String table = table("batch_many");
        int leases = 200;
        Duration leaseTime = Duration.ofMillis(1500); // renewed every 500 ms
        try (LockProvider locks =
                        Locks.open(SharedServers.mariaDbUri(db.host(), db.port(), "lease", "&table=" + table));
                Connection status = DriverManager.getConnection(db.jdbcUrl())) {
            List<Lease> held = new ArrayList<>();
            for (int i = 0; i < leases; i++) {
                held.add(
                        locks.tryAcquire("many/" + i, LeaseOptions.of(leaseTime).withAutoRenew())
                                .orElseThrow());
            }
            CompletableFuture<?> lost = held.get(7).lost().toCompletableFuture();
            // Someone else takes over row 7, as if its lease had run out.
            sql(db, "UPDATE " + table + " SET owner = 'someone-else' WHERE name = 'many/7'");
            Map<String, Long> before = counters(status);
            long countingFrom = epochMicros(status);
            // Wait (bounded) until every other row was renewed more than a lease time after the counting
            // began (its expiry is then more than two lease times past that moment): two rounds at least.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (renewedRows(status, table, countingFrom + 2 * leaseTime.toMillis() * 1000) < leases - 1) {
                assertThat(System.nanoTime()).as("all rows renewed within 20 s").isLessThan(deadline);
                Thread.onSpinWait();
            }
            Map<String, Long> spent = since(before, counters(status));
            assertThat(lost.get(5, TimeUnit.SECONDS)).isEqualTo(LossReason.NOT_HELD);
            long updates = spent.get("Com_update") + spent.get("Com_update_multi");
            System.out.printf("MariaDB renewal of %d leases, two rounds or more: %s%n", leases - 1, spent);
            // At least two renewals of 199 rows: one statement each would be 398 or more.
            assertThat(updates)
                    .as("UPDATE statements for at least %d renewals (%s)", 2 * (leases - 1), spent)
                    .isLessThanOrEqualTo(2L * (leases - 1) / 10);
            for (int i = 0; i < leases; i++) {
                assertThat(held.get(i).isValid()).as("lease %d", i).isEqualTo(i != 7);
            }
            for (Lease l : held) {
                l.release();
            }
        }
    }

    private static String table(String prefix) {
        return prefix + "_" + Long.toHexString(System.nanoTime());
    }

    /** The server's statement counters of interest (global: this class is alone on the server). */
    private static Map<String, Long> counters(Connection status) throws SQLException {
        Map<String, Long> out = new TreeMap<>();
        try (Statement st = status.createStatement();
                ResultSet rs = st.executeQuery("SHOW GLOBAL STATUS WHERE Variable_name IN"
                        + " ('Com_update', 'Com_update_multi', 'Com_select')")) {
            while (rs.next()) {
                out.put(rs.getString(1), rs.getLong(2));
            }
        }
        assertThat(out).hasSize(3);
        return out;
    }

    private static Map<String, Long> since(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> out = new TreeMap<>();
        after.forEach((k, v) -> out.put(k, v - before.get(k)));
        return out;
    }

    private static long epochMicros(Connection status) throws SQLException {
        try (Statement st = status.createStatement();
                ResultSet rs = st.executeQuery("SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6))")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Rows whose expiry lies more than {@code micros} after the epoch (UTC, the table's clock). */
    private static long renewedRows(Connection status, String table, long micros) throws SQLException {
        try (Statement st = status.createStatement();
                ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table
                        + " WHERE TIMESTAMPDIFF(MICROSECOND, '1970-01-01', expires_at) > " + micros)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void sql(MariaDbServer db, String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(db.jdbcUrl());
                Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    /** What an extension by {@code leaseTime} is valid for: the lease time less the default drift allowance. */
    private static Duration validity(Duration leaseTime) {
        return ClockDrift.validity(leaseTime, ClockDrift.DEFAULT_FACTOR);
    }
}
