package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.lockstep.LockConfigurationException;
import io.lockstep.Locks;
import io.lockstep.tck.servers.MariaDbServer;
import io.lockstep.tck.servers.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * A lock table or fence sequence of another shape than the statements rely on (review 2026-11-26,
 * findings 2 and 3) is refused when the provider is built, naming what was found and what is needed,
 * whether lock-jdbc builds its pool (URI) or runs over the application's {@code DataSource}.
 */
@ResourceLock(SharedServers.POSTGRES)
@ResourceLock(SharedServers.MARIADB)
class SchemaShapeTest {

    private static final String PG_TABLE =
            "(name text PRIMARY KEY, owner text NOT NULL, fence bigint NOT NULL," + " expires_at %s NOT NULL)";

    private static void pg(String... sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(SharedServers.postgres().jdbcUrl());
                Statement st = c.createStatement()) {
            for (String s : sql) {
                st.execute(s);
            }
        }
    }

    private static void mariadb(String... sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(SharedServers.mariadb().jdbcUrl());
                Statement st = c.createStatement()) {
            for (String s : sql) {
                st.execute(s);
            }
        }
    }

    private static String pgUri(String table) {
        PostgresServer s = SharedServers.postgres();
        return SharedServers.pgUri(s.host(), s.port(), "lease", "&table=" + table)
                .replace("&createSchema=true", "");
    }

    @Test
    @DisplayName("a PostgreSQL fence sequence with CACHE 20 is refused, naming the cache found and CACHE 1")
    void cachedSequenceIsRefused() throws SQLException {
        pg(
                "DROP TABLE IF EXISTS shape_cache",
                "DROP SEQUENCE IF EXISTS shape_cache_fence",
                "CREATE SEQUENCE shape_cache_fence CACHE 20",
                "CREATE TABLE shape_cache " + PG_TABLE.formatted("timestamptz"));
        assertThatThrownBy(() -> Locks.open(pgUri("shape_cache")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("CACHE 20")
                .hasMessageContaining("needs CACHE 1");
        try (HikariDataSource app = ApplicationPoolTest.appPool("pg", true, 2)) {
            assertThatThrownBy(() -> JdbcLockProvider.builder(app)
                            .table("shape_cache")
                            .notifications(false)
                            .build())
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("CACHE 20")
                    .hasMessageContaining("needs CACHE 1");
        }
    }

    @Test
    @DisplayName("a PostgreSQL expires_at of type timestamp without time zone is refused, naming both types")
    void timestampWithoutTimeZoneIsRefused() throws SQLException {
        pg(
                "DROP TABLE IF EXISTS shape_notz",
                "CREATE SEQUENCE IF NOT EXISTS shape_notz_fence",
                "CREATE TABLE shape_notz " + PG_TABLE.formatted("timestamp"));
        assertThatThrownBy(() -> Locks.open(pgUri("shape_notz")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("expires_at is timestamp without time zone")
                .hasMessageContaining("needs timestamp with time zone");
        try (HikariDataSource app = ApplicationPoolTest.appPool("pg", true, 2)) {
            assertThatThrownBy(() -> JdbcLockProvider.builder(app)
                            .table("shape_notz")
                            .createSchema(true)
                            .notifications(false)
                            .build())
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("expires_at is timestamp without time zone");
        }
    }

    @Test
    @DisplayName("a PostgreSQL lock table without a key on name is refused")
    void tableWithoutKeyIsRefused() throws SQLException {
        pg(
                "DROP TABLE IF EXISTS shape_nokey",
                "CREATE SEQUENCE IF NOT EXISTS shape_nokey_fence",
                "CREATE TABLE shape_nokey (name text NOT NULL, owner text NOT NULL, fence bigint NOT NULL,"
                        + " expires_at timestamptz NOT NULL)");
        assertThatThrownBy(() -> Locks.open(pgUri("shape_nokey")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("needs PRIMARY KEY (name)");
    }

    @Test
    @DisplayName("a MariaDB expires_at of type TIMESTAMP is refused, naming both types")
    void mariaDbTimestampIsRefused() throws SQLException {
        mariadb(
                "DROP TABLE IF EXISTS shape_ts",
                "CREATE SEQUENCE IF NOT EXISTS shape_ts_fence",
                "CREATE TABLE shape_ts (name VARBINARY(256) NOT NULL PRIMARY KEY, owner VARCHAR(64) NOT NULL,"
                        + " fence BIGINT NOT NULL, expires_at TIMESTAMP(6) NOT NULL) ENGINE=InnoDB");
        MariaDbServer s = SharedServers.mariadb();
        assertThatThrownBy(() -> Locks.open(SharedServers.mariaDbUri(s.host(), s.port(), "lease", "&table=shape_ts")
                        .replace("&createSchema=true", "")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("expires_at is timestamp(6)")
                .hasMessageContaining("needs DATETIME(6)");
    }

    @Test
    @DisplayName("an H2 expires_at of type TIMESTAMP without time zone is refused")
    void h2TimestampIsRefused() {
        String url = "jdbc:h2:mem:shape;DB_CLOSE_DELAY=-1";
        assertThatThrownBy(() -> {
                    try (Connection c = DriverManager.getConnection(url);
                            Statement st = c.createStatement()) {
                        st.execute("CREATE SEQUENCE IF NOT EXISTS shape_h2_fence");
                        st.execute("CREATE TABLE IF NOT EXISTS shape_h2 (name VARCHAR(256) PRIMARY KEY,"
                                + " owner VARCHAR(64) NOT NULL, fence BIGINT NOT NULL, expires_at TIMESTAMP NOT NULL)");
                    }
                    Locks.open(url + "?table=shape_h2").close();
                })
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("expires_at is TIMESTAMP")
                .hasMessageContaining("needs TIMESTAMP WITH TIME ZONE");
    }
}
