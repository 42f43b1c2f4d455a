package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.LockConfigurationException;
import io.lockstep.Locks;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Bad settings (issue 9 item 6) that apply to H2 in memory, as {@link PgConfigurationTest} does on
 * PostgreSQL: a table name that is not an identifier and a missing table without the schema creator,
 * each a clear exception naming the setting, with no session left open and nothing created. (H2 in
 * memory has no server to be unreachable or read-only, and this module does not check H2 privileges.)
 */
class H2ConfigurationTest {

    private static final String SECRET = "s3cr3t-Pa55";
    private static final String DB = "jdbc:h2:mem:lockstep-cfg;DB_CLOSE_DELAY=-1";
    private static Connection keeper;

    @BeforeAll
    static void open() throws SQLException {
        keeper = DriverManager.getConnection(DB, "sa", SECRET);
    }

    @AfterAll
    static void close() throws SQLException {
        keeper.close();
    }

    @Test
    @DisplayName("a table name that is not an identifier is refused, naming the setting and the value")
    void tableNameMustBeAnIdentifier() throws SQLException {
        assertThatThrownBy(() -> Locks.open(DB + "?user=sa&password=" + SECRET + "&table=locks;drop%20table%20x"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("table")
                .hasMessageContaining("locks;drop table x")
                .hasMessageNotContaining(SECRET);
        assertThat(otherSessions()).as("sessions left open").isZero();
    }

    @Test
    @DisplayName("a missing table without createSchema is refused, naming the table and the way out")
    void missingTableWithoutSchemaCreator() throws SQLException {
        assertThatThrownBy(() -> Locks.open(DB + "?user=sa&password=" + SECRET + "&table=no_such_locks"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("no_such_locks")
                .hasMessageContaining("createSchema")
                .hasMessageNotContaining(SECRET);
        assertThat(otherSessions()).as("sessions left open").isZero();
        try (Statement st = keeper.createStatement();
                ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES"
                        + " WHERE UPPER(TABLE_NAME) LIKE 'NO_SUCH_LOCKS%'")) {
            rs.next();
            assertThat(rs.getInt(1)).as("tables created").isZero();
        }
    }

    /** Sessions on the database besides this test's own. */
    private static int otherSessions() throws SQLException {
        try (Statement st = keeper.createStatement();
                ResultSet rs = st.executeQuery(
                        "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS" + " WHERE SESSION_ID <> SESSION_ID()")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
