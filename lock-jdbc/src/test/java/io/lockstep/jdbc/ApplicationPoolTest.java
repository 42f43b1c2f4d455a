package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.lockstep.Capability;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.LossReason;
import io.lockstep.tck.faults.TcpProxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * lock-jdbc over an application's own pool (review 2026-11-26): whatever the pool's defaults, a claim
 * is committed, and the connections go back as they were found.
 */
@ResourceLock(SharedServers.POSTGRES)
@ResourceLock(SharedServers.MARIADB)
class ApplicationPoolTest {

    private static final LeaseOptions THIRTY_SECONDS = LeaseOptions.of(Duration.ofSeconds(30));

    /** An application pool over {@code database} (pg, mariadb, h2), configured by the application. */
    static HikariDataSource appPool(String database, boolean autoCommit, int size) {
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(
                switch (database) {
                    case "pg" -> SharedServers.postgres().jdbcUrl();
                    case "mariadb" -> SharedServers.mariadb().jdbcUrl();
                    default -> "jdbc:h2:mem:apppool;DB_CLOSE_DELAY=-1";
                });
        hc.setAutoCommit(autoCommit);
        hc.setMaximumPoolSize(size);
        hc.setPoolName("app-" + database);
        return new HikariDataSource(hc);
    }

    static Connection direct(String database) throws SQLException {
        return DriverManager.getConnection(
                database.equals("pg")
                        ? SharedServers.postgres().jdbcUrl()
                        : SharedServers.mariadb().jdbcUrl());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"pg", "mariadb", "h2"})
    @DisplayName("over a pool whose connections are not in auto-commit, a held lease is not granted to a second client")
    void leaseClaimsCommitOverAPoolWithoutAutoCommit(String database) {
        try (HikariDataSource app = appPool(database, false, 4);
                JdbcLockProvider a = JdbcLockProvider.builder(app)
                        .table("app_nac_lease")
                        .createSchema(true)
                        .notifications(false)
                        .build();
                JdbcLockProvider b = JdbcLockProvider.builder(app)
                        .table("app_nac_lease")
                        .notifications(false)
                        .build()) {
            String name = "invoice-run-" + System.nanoTime();
            Optional<Lease> first = a.tryAcquire(name, THIRTY_SECONDS);
            assertThat(first).as("first claim").isPresent();
            assertThat(b.tryAcquire(name, THIRTY_SECONDS))
                    .as("a second client while the first holds a 30 s lease")
                    .isEmpty();
            assertThat(first.get().release()).as("release of the first").isTrue();
            Optional<Lease> second = b.tryAcquire(name, THIRTY_SECONDS);
            assertThat(second).as("the second client after the release").isPresent();
            assertThat(second.get().fencingToken().orElseThrow())
                    .isGreaterThan(first.get().fencingToken().orElseThrow());
            second.get().release();
        }
    }

    @Test
    @DisplayName("createSchema over a pool without auto-commit leaves the table for the next provider (PostgreSQL)")
    void createSchemaIsCommittedOverAPoolWithoutAutoCommit() throws SQLException {
        String table = "app_nac_created_" + Long.toHexString(System.nanoTime());
        try (HikariDataSource app = appPool("pg", false, 2);
                JdbcLockProvider ignored = JdbcLockProvider.builder(app)
                        .table(table)
                        .createSchema(true)
                        .notifications(false)
                        .build();
                Connection other = direct("pg");
                Statement st = other.createStatement();
                ResultSet rs = st.executeQuery("SELECT to_regclass('" + table + "') IS NOT NULL")) {
            rs.next();
            assertThat(rs.getBoolean(1))
                    .as("table seen from another connection")
                    .isTrue();
        }
    }

    @Test
    @DisplayName("MariaDB session mode gives the connection back with the application's idle_transaction_timeout")
    void mariaDbSessionModeRestoresTheIdleTimeout() throws SQLException {
        try (HikariDataSource app = appPool("mariadb", true, 1);
                JdbcLockProvider locks = JdbcLockProvider.builder(app)
                        .mode(JdbcMode.SESSION)
                        .table("app_idle_session")
                        .createSchema(true)
                        .sessionTimeout(Duration.ofSeconds(2))
                        .build()) {
            long before = idleTransactionTimeout(app);
            Lease lease =
                    locks.tryAcquire("job-" + System.nanoTime(), THIRTY_SECONDS).orElseThrow();
            assertThat(lease.release()).isTrue();
            assertThat(idleTransactionTimeout(app))
                    .as("@@session.idle_transaction_timeout of the pool's only connection after the lock")
                    .isEqualTo(before);
        }
    }

    private static long idleTransactionTimeout(HikariDataSource app) throws SQLException {
        try (Connection c = app.getConnection();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT @@session.idle_transaction_timeout")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    @DisplayName("over the application's pool, waiting never takes a LISTEN connection from it unless asked")
    void waitingTakesNoConnectionFromTheApplicationPool() throws Exception {
        try (HikariDataSource app = appPool("pg", true, 2);
                JdbcLockProvider locks = JdbcLockProvider.builder(app)
                        .table("app_listen_lease")
                        .createSchema(true)
                        .build()) {
            assertThat(locks.info().capabilities()).doesNotContain(Capability.NOTIFIED_WAIT);
            String name = "job-" + System.nanoTime();
            Lease held = locks.tryAcquire(name, THIRTY_SECONDS).orElseThrow();
            assertThat(locks.tryAcquire(name, THIRTY_SECONDS.withWaitTime(Duration.ofMillis(500))))
                    .isEmpty();
            assertThat(activeAfterSettling(app))
                    .as("application connections still taken")
                    .isZero();
            assertThat(held.release()).isTrue();
        }
        PGSimpleDataSource listen = new PGSimpleDataSource();
        listen.setURL(SharedServers.postgres().jdbcUrl());
        try (HikariDataSource app = appPool("pg", true, 1);
                JdbcLockProvider locks = JdbcLockProvider.builder(app)
                        .table("app_listen_lease")
                        .notifications(listen)
                        .build()) {
            assertThat(locks.info().capabilities()).contains(Capability.NOTIFIED_WAIT);
            String name = "job-" + System.nanoTime();
            Lease held = locks.tryAcquire(name, THIRTY_SECONDS).orElseThrow();
            CompletableFuture<Optional<Lease>> waiter = CompletableFuture.supplyAsync(
                    () -> locks.tryAcquire(name, THIRTY_SECONDS.withWaitTime(Duration.ofSeconds(30))));
            assertThat(held.release())
                    .as("the holder's release over a pool of one")
                    .isTrue();
            Lease next = waiter.get(60, TimeUnit.SECONDS).orElseThrow();
            assertThat(next.release()).isTrue();
            assertThat(activeAfterSettling(app))
                    .as("application connections still taken")
                    .isZero();
        }
    }

    /** The pool's connections in use, once every call that took one has had time to give it back. */
    private static int activeAfterSettling(HikariDataSource app) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int active = app.getHikariPoolMXBean().getActiveConnections();
        while (active > 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
            active = app.getHikariPoolMXBean().getActiveConnections();
        }
        return active;
    }

    @Test
    @DisplayName("over the application's pool, an auto-renewed session lock is reported lost in a silent partition")
    void silentPartitionEndsASessionLockOverTheApplicationPool() throws Exception {
        TcpProxy proxy = SharedServers.postgresProxy();
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl("jdbc:postgresql://" + proxy.host() + ":" + proxy.port() + "/postgres?user=postgres");
        hc.setMaximumPoolSize(2);
        hc.setPoolName("app-partitioned");
        try (HikariDataSource app = new HikariDataSource(hc);
                JdbcLockProvider holder = JdbcLockProvider.builder(app)
                        .mode(JdbcMode.SESSION)
                        .table("app_stall_session")
                        .createSchema(true)
                        .sessionTimeout(Duration.ofSeconds(3))
                        .callTimeout(Duration.ofSeconds(1))
                        .build();
                LockProvider contender = Locks.open(SharedServers.pgUri(
                        SharedServers.postgres().host(),
                        SharedServers.postgres().port(),
                        "session",
                        "&table=app_stall_session&sessionTimeout=3s&notifications=false"))) {
            String name = "leader-" + System.nanoTime();
            Lease lease = holder.tryAcquire(
                            name, LeaseOptions.of(Duration.ofSeconds(3)).withAutoRenew())
                    .orElseThrow();
            // Past the first renewals (a 3 s lease is renewed well before 2.5 s), so the partition meets a
            // renewed lease: what a leader holds.
            Thread.sleep(2500);
            proxy.stall();
            try {
                LossReason reason = lease.lost().toCompletableFuture().get(30, TimeUnit.SECONDS);
                assertThat(reason).isNotNull();
                Lease taken = contender
                        .tryAcquire(
                                name, LeaseOptions.of(Duration.ofSeconds(10)).withWaitTime(Duration.ofSeconds(30)))
                        .orElseThrow();
                assertThat(lease.isValid())
                        .as("the partitioned holder while another holds")
                        .isFalse();
                taken.release();
            } finally {
                proxy.heal();
            }
        }
    }
}
