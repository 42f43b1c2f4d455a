package io.lockstep.jdbc;

import io.lockstep.tck.GroupsRunElsewhere;
import io.lockstep.tck.LockProviderCompatibilityKit;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The kit in lease mode on PostgreSQL over a table made by hand from SCHEMA.md's PostgreSQL block
 * (createSchema off), faults included.
 */
@DisplayName("jdbc lease mode passes the compatibility kit on PostgreSQL over the schema guide's DDL")
@ResourceLock(SharedServers.POSTGRES)
class PgSchemaGuideCompatibilityTest extends ServerCompatibilityKit {

    private static final String TABLE = "guide_lease";
    private static final String SETTINGS = "&table=" + TABLE + "&createSchema=false";

    PgSchemaGuideCompatibilityTest() {
        super(Database.POSTGRES, "lease", SETTINGS, SETTINGS);
    }

    @BeforeAll
    static void applyTheGuide() throws SQLException {
        try (Connection c = DriverManager.getConnection(SharedServers.postgres().jdbcUrl());
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + TABLE);
            st.execute("DROP SEQUENCE IF EXISTS " + TABLE + "_fence");
            for (String ddl : SchemaGuide.statements("postgresql", TABLE)) {
                st.execute(ddl);
            }
        }
    }

    /**
     * The clock group runs in {@link PgLeaseCompatibilityTest}: the same lease-mode SQL on the same
     * PostgreSQL server, whose clock counts {@code expires_at}; only the table was made by hand.
     */
    @Override
    protected Optional<Class<? extends LockProviderCompatibilityKit>> clockGroupRunsIn() {
        return Optional.of(PgLeaseCompatibilityTest.class);
    }

    /**
     * The fault groups run in {@link PgLeaseCompatibilityTest}: they pause, kill and partition the same
     * PostgreSQL server under the same lease-mode SQL, and check what the provider does when its calls fail
     * or stall; the table only decides what those calls answer when they succeed, which every other group
     * checks here (Expiry, Renewal and Inspect, which mix in a few fault checks, included).
     */
    @Override
    protected Optional<GroupsRunElsewhere> groupsRunElsewhere() {
        return Optional.of(GroupsRunElsewhere.faults(PgLeaseCompatibilityTest.class));
    }
}
