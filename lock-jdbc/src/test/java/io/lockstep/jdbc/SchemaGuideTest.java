package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.MariaDbServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/** SCHEMA.md's MariaDB and H2 blocks, applied by hand, pass the build-time check and hold locks. */
@ResourceLock(SharedServers.MARIADB)
class SchemaGuideTest {

    private static final LeaseOptions MINUTE = LeaseOptions.of(Duration.ofMinutes(1));

    @Test
    @DisplayName("a MariaDB table made from the schema guide is accepted and excludes a second holder")
    void mariaDbGuide() throws SQLException {
        MariaDbServer db = SharedServers.mariadb();
        try (Connection c = DriverManager.getConnection(db.jdbcUrl());
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS guide_lease");
            st.execute("DROP SEQUENCE IF EXISTS guide_lease_fence");
            for (String ddl : SchemaGuide.statements("mariadb", "guide_lease")) {
                st.execute(ddl);
            }
        }
        String uri = SharedServers.mariaDbUri(db.host(), db.port(), "lease", "&table=guide_lease&createSchema=false");
        holdsAndExcludes(uri);
    }

    @Test
    @DisplayName("an H2 table made from the schema guide is accepted and excludes a second holder")
    void h2Guide() throws SQLException {
        String url = "jdbc:h2:mem:guide;DB_CLOSE_DELAY=-1";
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement()) {
            for (String ddl : SchemaGuide.statements("h2", "guide_lease")) {
                st.execute(ddl);
            }
        }
        holdsAndExcludes(url + "?table=guide_lease");
    }

    private static void holdsAndExcludes(String uri) {
        try (LockProvider a = Locks.open(uri);
                LockProvider b = Locks.open(uri)) {
            String name = "guide-" + System.nanoTime();
            Lease lease = a.tryAcquire(name, MINUTE).orElseThrow();
            assertThat(b.tryAcquire(name, MINUTE)).isEmpty();
            assertThat(lease.release()).isTrue();
            Lease next = b.tryAcquire(name, MINUTE).orElseThrow();
            assertThat(next.fencingToken().orElseThrow())
                    .isGreaterThan(lease.fencingToken().orElseThrow());
            next.release();
        }
    }
}
