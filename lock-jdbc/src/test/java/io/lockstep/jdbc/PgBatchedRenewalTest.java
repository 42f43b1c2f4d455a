package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

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
import io.lockstep.tck.servers.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Lease mode on PostgreSQL renews many rows with one statement ({@code LeaseBackend.extendAll}), and a
 * batch still reports loss per lease. Statements are counted exactly by a statement-level trigger on a
 * table of the test's own.
 */
@ResourceLock(SharedServers.POSTGRES)
class PgBatchedRenewalTest {

    private static final Duration LONG = Duration.ofMinutes(5);

    @Test
    @DisplayName("a batch of five renewals where one row was taken over and one released loses exactly those two")
    void oneStatementReportsLossPerLease() throws Exception {
        PostgresServer pg = SharedServers.postgres();
        String table = table("batch_loss");
        createSchema(pg, table);
        LeaseBackend backend = new LeaseBackend(
                Jdbi.create(pg.jdbcUrl()),
                new Connections(
                        new PGSimpleDataSource() {
                            {
                                setURL(pg.jdbcUrl());
                            }
                        },
                        0),
                Dialect.forProduct("PostgreSQL", table),
                "test",
                null,
                null,
                ClockDrift.DEFAULT_FACTOR);
        List<Extension<LeaseBackend.Handle>> batch = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Attempt<LeaseBackend.Handle> a =
                    backend.tryLock("batch/" + i, UUID.randomUUID().toString(), LONG);
            assertThat(a.isGranted()).isTrue();
            batch.add(new Extension<>(a.grant().handle(), Duration.ofMinutes(10 + i)));
        }
        // Row 1: the lease ran out and another owner took it over; row 3: released by its owner.
        sql(pg, "UPDATE " + table + " SET expires_at = 'epoch' WHERE name = 'batch/1'");
        assertThat(backend.tryLock("batch/1", "someone-else", LONG).isGranted()).isTrue();
        assertThat(backend.release(batch.get(3).handle())).isTrue();
        resetCount(pg, table);

        List<Optional<Duration>> results = backend.extendAll(batch);

        assertThat(statements(pg, table)).as("UPDATE statements for the batch").isEqualTo(1);
        // Each held lease is valid for its lease time less the drift allowance; its row gets the whole lease time.
        assertThat(results)
                .containsExactly(
                        Optional.of(validity(Duration.ofMinutes(10))),
                        Optional.empty(),
                        Optional.of(validity(Duration.ofMinutes(12))),
                        Optional.empty(),
                        Optional.of(validity(Duration.ofMinutes(14))));
        // Each held row's expiry was set from the database's clock to its own lease time; the others were
        // left alone.
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT name, owner,"
                        + " round(extract(epoch FROM expires_at - clock_timestamp()))::bigint FROM " + table
                        + " ORDER BY name")) {
            List<String> rows = new ArrayList<>();
            while (rs.next()) {
                long minutes = Math.round(rs.getLong(3) / 60.0);
                rows.add(rs.getString(1) + " " + (rs.getString(2).equals("someone-else") ? "other " : "")
                        + (minutes > 0 ? minutes + "min" : "expired"));
            }
            assertThat(rows)
                    .containsExactly(
                            "batch/0 10min", "batch/1 other 5min", "batch/2 12min", "batch/3 expired", "batch/4 14min");
        }
        backend.close();
    }

    @Test
    @DisplayName("200 auto-renewed leases are renewed with a few statements, and the one taken over is lost alone")
    void manyLeasesRenewWithFewStatements() throws Exception {
        PostgresServer pg = SharedServers.postgres();
        String table = table("batch_many");
        createSchema(pg, table);
        int leases = 200;
        Duration leaseTime = Duration.ofMillis(1500); // renewed every 500 ms
        try (LockProvider locks = Locks.open(SharedServers.pgUri(pg.host(), pg.port(), "lease", "&table=" + table))) {
            List<Lease> held = new ArrayList<>();
            for (int i = 0; i < leases; i++) {
                held.add(
                        locks.tryAcquire("many/" + i, LeaseOptions.of(leaseTime).withAutoRenew())
                                .orElseThrow());
            }
            resetCount(pg, table);
            CompletableFuture<?> lost = held.get(7).lost().toCompletableFuture();
            // Someone else takes over row 7, as if its lease had run out.
            sql(pg, "UPDATE " + table + " SET owner = 'someone-else' WHERE name = 'many/7'");
            // Wait (bounded) until every other row was renewed more than a lease time after the counting
            // began (its expiry is then more than two lease times past that moment): two rounds at least.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (renewedRows(pg, table, leaseTime) < leases - 1) {
                assertThat(System.nanoTime()).as("all rows renewed within 20 s").isLessThan(deadline);
                Thread.onSpinWait();
            }
            assertThat(lost.get(5, TimeUnit.SECONDS)).isEqualTo(LossReason.NOT_HELD);
            long statements = statements(pg, table);
            long rows = rowsUpdated(pg, table);
            assertThat(rows).as("rows renewed").isGreaterThanOrEqualTo(2L * (leases - 1));
            assertThat(statements)
                    .as("UPDATE statements for %d renewed rows", rows)
                    .isLessThanOrEqualTo(rows / 10);
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

    private static void createSchema(PostgresServer pg, String table) throws SQLException {
        sql(pg, "CREATE SEQUENCE " + table + "_fence");
        sql(
                pg,
                "CREATE TABLE " + table + " (name text PRIMARY KEY, owner text NOT NULL, fence bigint NOT NULL,"
                        + " expires_at timestamptz NOT NULL)");
        sql(
                pg,
                "CREATE TABLE " + table
                        + "_count (statements bigint NOT NULL, updated_rows bigint NOT NULL, counted_from timestamptz NOT NULL)");
        sql(pg, "INSERT INTO " + table + "_count VALUES (0, 0, clock_timestamp())");
        sql(
                pg,
                "CREATE FUNCTION " + table + "_counted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN" + " UPDATE "
                        + table + "_count SET statements = statements + 1; RETURN NULL; END $$");
        sql(
                pg,
                "CREATE TRIGGER " + table + "_counter AFTER UPDATE ON " + table
                        + " FOR EACH STATEMENT EXECUTE FUNCTION " + table + "_counted()");
        sql(
                pg,
                "CREATE FUNCTION " + table + "_rows() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN" + " UPDATE " + table
                        + "_count SET updated_rows = updated_rows + 1; RETURN NULL; END $$");
        sql(
                pg,
                "CREATE TRIGGER " + table + "_row_counter AFTER UPDATE ON " + table + " FOR EACH ROW EXECUTE FUNCTION "
                        + table + "_rows()");
    }

    private static void resetCount(PostgresServer pg, String table) throws SQLException {
        sql(pg, "UPDATE " + table + "_count SET statements = 0, updated_rows = 0, counted_from = clock_timestamp()");
    }

    private static long statements(PostgresServer pg, String table) throws SQLException {
        return query(pg, "SELECT statements FROM " + table + "_count");
    }

    private static long rowsUpdated(PostgresServer pg, String table) throws SQLException {
        return query(pg, "SELECT updated_rows FROM " + table + "_count");
    }

    private static long renewedRows(PostgresServer pg, String table, Duration leaseTime) throws SQLException {
        return query(
                pg,
                "SELECT count(*) FROM " + table + " l, " + table + "_count c WHERE l.expires_at > c.counted_from"
                        + " + " + (2 * leaseTime.toMillis()) + " * interval '1 millisecond'");
    }

    private static long query(PostgresServer pg, String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
                PreparedStatement ps = c.prepareStatement(sql);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void sql(PostgresServer pg, String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
                Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    /** What an extension by {@code leaseTime} is valid for: the lease time less the default drift allowance. */
    private static Duration validity(Duration leaseTime) {
        return ClockDrift.validity(leaseTime, ClockDrift.DEFAULT_FACTOR);
    }
}
