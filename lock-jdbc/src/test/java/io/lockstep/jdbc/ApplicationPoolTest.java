package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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
}
