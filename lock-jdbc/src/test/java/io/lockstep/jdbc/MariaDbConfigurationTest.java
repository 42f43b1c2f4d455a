package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.MariaDbServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Bad settings (issue 9 item 6) on MariaDB, as {@link PgConfigurationTest} does on PostgreSQL: each a
 * clear exception naming the setting, no connection left open, nothing created, no password shown.
 */
@ResourceLock(SharedServers.MARIADB)
class MariaDbConfigurationTest {

    private static final String SECRET = "s3cr3t-Pa55";
    private static MariaDbServer db;

    @BeforeAll
    static void users() throws SQLException {
        db = SharedServers.mariadb();
        try (Connection c = DriverManager.getConnection(db.jdbcUrl());
                Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE IF NOT EXISTS cfg");
            st.execute("CREATE SEQUENCE IF NOT EXISTS cfg.cfg_locks_fence");
            st.execute("CREATE TABLE IF NOT EXISTS cfg.cfg_locks (name VARBINARY(256) NOT NULL PRIMARY KEY,"
                    + " owner VARCHAR(64) CHARACTER SET ascii NOT NULL, fence BIGINT NOT NULL,"
                    + " expires_at DATETIME(6) NOT NULL) ENGINE=InnoDB");
            st.execute("CREATE TABLE IF NOT EXISTS cfg.other (id INT)");
            for (String user : new String[] {"cfgadmin", "noprivs", "selectonly"}) {
                st.execute("CREATE USER IF NOT EXISTS '" + user + "'@'%' IDENTIFIED BY '" + SECRET + "'");
            }
            st.execute("GRANT ALL ON cfg.* TO 'cfgadmin'@'%'");
            st.execute("GRANT SELECT ON cfg.other TO 'noprivs'@'%'");
            st.execute("GRANT SELECT ON cfg.cfg_locks TO 'selectonly'@'%'");
            st.execute("GRANT SELECT ON cfg.cfg_locks_fence TO 'selectonly'@'%'");
        }
    }

    private static String uri(String user, String extra) {
        return "jdbc:mariadb://" + db.host() + ":" + db.port() + "/cfg?user=" + user + "&password=" + SECRET
                + "&callTimeout=1s" + extra;
    }

    @Test
    @DisplayName("a table name that is not an identifier is refused, naming the setting and the value")
    void tableNameMustBeAnIdentifier() throws SQLException {
        assertThatThrownBy(() -> Locks.open(uri("cfgadmin", "&table=locks;drop%20table%20x")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("table")
                .hasMessageContaining("locks;drop table x")
                .hasMessageNotContaining(SECRET);
        assertThat(openConnections("cfgadmin")).as("connections left open").isZero();
    }

    @Test
    @DisplayName("a missing table without createSchema is refused, naming the table and the way out")
    void missingTableWithoutSchemaCreator() throws SQLException {
        assertThatThrownBy(() -> Locks.open(uri("cfgadmin", "&table=no_such_locks")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("no_such_locks")
                .hasMessageContaining("createSchema")
                .hasMessageNotContaining(SECRET);
        assertThat(openConnections("cfgadmin")).as("connections left open").isZero();
        assertThat(count("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'cfg'"
                        + " AND TABLE_NAME LIKE 'no_such_locks%'"))
                .as("tables or sequences created")
                .isZero();
    }

    @Test
    @DisplayName("a user who cannot see the table is refused, naming the table")
    void userWithoutPrivileges() throws SQLException {
        assertThatThrownBy(() -> Locks.open(uri("noprivs", "&table=cfg_locks")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("table")
                .hasMessageContaining("cfg_locks")
                .hasMessageNotContaining(SECRET);
        assertThat(openConnections("noprivs")).as("connections left open").isZero();
    }

    @Test
    @DisplayName("a user who may read but not write the table is refused, naming what to grant")
    void userWhoMayOnlyRead() throws SQLException {
        assertThatThrownBy(
                        () -> Locks.open(uri("selectonly", "&table=cfg_locks")).close())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("user")
                .hasMessageContaining("cfg_locks")
                .hasMessageContaining("INSERT on cfg_locks")
                .hasMessageContaining("UPDATE on cfg_locks")
                .hasMessageContaining("DELETE on cfg_locks")
                .hasMessageContaining("INSERT on cfg_locks_fence")
                .hasMessageNotContaining("SELECT on")
                .hasMessageNotContaining(SECRET);
        assertThat(openConnections("selectonly")).as("connections left open").isZero();
    }

    @Test
    @DisplayName("a read-only server (read_only) is refused, pointing at the primary")
    void readOnlyServer() throws SQLException {
        try (Connection c = DriverManager.getConnection(db.jdbcUrl());
                Statement st = c.createStatement()) {
            st.execute("SET GLOBAL read_only = 1");
            try {
                assertThatThrownBy(() -> Locks.open(uri("cfgadmin", "&table=cfg_locks")))
                        .isInstanceOf(LockConfigurationException.class)
                        .hasMessageContaining("read-only")
                        .hasMessageNotContaining(SECRET);
            } finally {
                st.execute("SET GLOBAL read_only = 0");
            }
        }
        assertThat(openConnections("cfgadmin")).as("connections left open").isZero();
        try (LockProvider writable = Locks.open(uri("cfgadmin", "&table=cfg_locks"))) {
            assertThat(writable.info().name()).isNotBlank(); // the same settings work on a writable server
        }
    }

    @Test
    @DisplayName("an unreachable server fails closed, naming where it is and never the password")
    void unreachableServer() {
        int port = LocalServer.freePort();
        assertThatThrownBy(() ->
                        Locks.open("jdbc:mariadb://root:" + SECRET + "@127.0.0.1:" + port + "/cfg?callTimeout=1s"))
                .isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("127.0.0.1:" + port)
                .hasMessageNotContaining(SECRET);
    }

    /** Connections of {@code user} still open, once the server had time to end them. */
    private static int openConnections(String user) throws SQLException {
        String sql = "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = '" + user + "'";
        long deadline = System.nanoTime() + 5_000_000_000L;
        int open = count(sql);
        while (open > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20); // polling the server's own view, bounded by the deadline
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            open = count(sql);
        }
        return open;
    }

    private static int count(String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(db.jdbcUrl());
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
