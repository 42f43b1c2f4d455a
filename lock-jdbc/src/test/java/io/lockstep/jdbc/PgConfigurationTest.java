package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.LockConfigurationException;
import io.lockstep.Locks;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/** Bad settings (issue 9 item 6): each a clear exception naming the setting, nothing left open, no secret. */
@ResourceLock(SharedServers.POSTGRES)
class PgConfigurationTest {

    private static final String SECRET = "s3cr3t-Pa55";
    private static PostgresServer pg;

    @BeforeAll
    static void roles() throws SQLException {
        pg = SharedServers.postgres();
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
                Statement st = c.createStatement()) {
            st.execute("CREATE SEQUENCE IF NOT EXISTS cfg_locks_fence");
            st.execute("CREATE TABLE IF NOT EXISTS cfg_locks (name text PRIMARY KEY, owner text NOT NULL,"
                    + " fence bigint NOT NULL, expires_at timestamptz NOT NULL)");
            st.execute("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'noprivs') THEN"
                    + " CREATE ROLE noprivs LOGIN; END IF; END $$");
            st.execute("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'readonly') THEN"
                    + " CREATE ROLE readonly LOGIN; END IF; END $$");
            st.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON cfg_locks TO readonly");
            st.execute("GRANT USAGE, UPDATE ON SEQUENCE cfg_locks_fence TO readonly");
            st.execute("ALTER ROLE readonly SET default_transaction_read_only = on");
        }
    }

    private static String uri(String user, String extra) {
        return "jdbc:postgresql://" + pg.host() + ":" + pg.port() + "/postgres?user=" + user + "&password=" + SECRET
                + "&ApplicationName=cfgtest" + extra;
    }

    @Test
    @DisplayName("a table name that is not an identifier is refused, naming the setting and the value")
    void tableNameMustBeAnIdentifier() {
        assertThatThrownBy(() -> Locks.open(uri("postgres", "&table=locks;drop%20table%20x")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("table")
                .hasMessageContaining("locks;drop table x")
                .hasMessageNotContaining(SECRET);
    }

    @Test
    @DisplayName("a missing table without createSchema is refused, naming the table and the way out")
    void missingTableWithoutSchemaCreator() throws SQLException {
        assertThatThrownBy(() -> Locks.open(uri("postgres", "&table=no_such_locks")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("no_such_locks")
                .hasMessageContaining("createSchema")
                .hasMessageNotContaining(SECRET);
        assertThat(openConnections()).as("connections left open").isZero();
        assertThat(tableExists("no_such_locks")).isFalse();
    }

    @Test
    @DisplayName("a user without the needed privileges is refused, naming what to grant")
    void userWithoutPrivileges() throws SQLException {
        assertThatThrownBy(() -> Locks.open(uri("noprivs", "&table=cfg_locks")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("user")
                .hasMessageContaining("INSERT on cfg_locks")
                .hasMessageContaining("USAGE on cfg_locks_fence")
                .hasMessageNotContaining(SECRET);
        assertThat(openConnections()).as("connections left open").isZero();
    }

    @Test
    @DisplayName("a read-only database is refused, pointing at the primary")
    void readOnlyDatabase() throws SQLException {
        assertThatThrownBy(() -> Locks.open(uri("readonly", "&table=cfg_locks")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("read-only")
                .hasMessageNotContaining(SECRET);
        assertThat(openConnections()).as("connections left open").isZero();
    }

    @Test
    @DisplayName("an unreachable database fails closed, naming where it is and never the password")
    void unreachableDatabase() {
        int port = LocalServer.freePort();
        assertThatThrownBy(() -> Locks.open(
                        "jdbc:postgresql://postgres:" + SECRET + "@127.0.0.1:" + port + "/postgres?callTimeout=1s"))
                .isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("127.0.0.1:" + port)
                .hasMessageNotContaining(SECRET);
    }

    @Test
    @DisplayName("a bad mode or pool size is refused, naming the setting and the value")
    void badSettings() {
        assertThatThrownBy(() -> Locks.open(uri("postgres", "&mode=sessions")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("mode")
                .hasMessageContaining("sessions");
        assertThatThrownBy(() -> Locks.open(uri("postgres", "&poolSize=0")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("poolSize")
                .hasMessageContaining("'0'");
    }

    @Test
    @DisplayName("a misspelt or wrongly cased setting is refused, naming the setting meant")
    void misspeltSettingsAreRefused() {
        assertThatThrownBy(() -> Locks.open(uri("postgres", "&table=cfg_locks&mdoe=session")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("mdoe")
                .hasMessageContaining("did you mean mode");
        assertThatThrownBy(() -> Locks.open(uri("postgres", "&table=cfg_locks&createschema=true")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("did you mean createSchema");
        assertThatThrownBy(() -> Locks.open(uri("postgres", "&table=cfg_locks&poolsize=1")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("did you mean poolSize");
    }

    @Test
    @DisplayName("a reserved word as table name is refused as a configuration error naming the table")
    void reservedWordAsTableName() {
        assertThatThrownBy(() -> Locks.open(uri("postgres", "&table=user&createSchema=true")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("table")
                .hasMessageContaining("'user'")
                .hasMessageNotContaining(SECRET);
    }

    @Test
    @DisplayName("a password with a raw '/', '#' or '?' never shows in a message")
    void rawCharactersInThePasswordNeverShow() {
        int port = LocalServer.freePort();
        for (String password : new String[] {"s3cr/tPw", "s3cr#tPw", "s3cr?tPw"}) {
            assertThatThrownBy(() -> Locks.open(
                            "jdbc:postgresql://app:" + password + "@127.0.0.1:" + port + "/db?callTimeout=1s"))
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("percent-encode")
                    .hasMessageNotContaining("s3cr")
                    .hasMessageNotContaining("tPw");
        }
    }

    /** Connections of the failed provider still open, once their server processes had time to exit. */
    private static int openConnections() throws SQLException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        int open = countConnections();
        while (open > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            open = countConnections();
        }
        return open;
    }

    private static int countConnections() throws SQLException {
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
                Statement st = c.createStatement();
                ResultSet rs =
                        st.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'cfgtest'")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static boolean tableExists(String table) throws SQLException {
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT to_regclass('" + table + "') IS NOT NULL")) {
            rs.next();
            return rs.getBoolean(1);
        }
    }
}
