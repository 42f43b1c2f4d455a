package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.Holder;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockState;
import io.lockstep.Locks;
import io.lockstep.tck.servers.MariaDbServer;
import io.lockstep.tck.servers.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Lease mode keeps the holder (host, pid, label) in the optional {@code holder} column, written by the
 * claim itself: another client's {@code inspect} names it. A table made before the column existed keeps
 * working (no holder), and one {@code ALTER TABLE ... ADD holder} turns it on.
 */
@DisplayName("lease-mode holder identity on PostgreSQL, MariaDB and H2")
class LeaseHolderTest {

    private static final LeaseOptions LABELLED =
            LeaseOptions.of(Duration.ofSeconds(30)).withLabel("nightly-report");

    @Test
    @ResourceLock(SharedServers.POSTGRES)
    @DisplayName(
            "PostgreSQL: another client sees host, pid and label; an old table works without; ADD holder turns it on")
    void postgres() throws SQLException {
        PostgresServer db = SharedServers.postgres();
        String uri = SharedServers.pgUri(db.host(), db.port(), "lease", "");
        keepsTheHolder(uri + "&table=holder_lease");
        oldTableWorksAndMigrates(
                db.jdbcUrl(),
                uri + "&table=legacy_lease&createSchema=false",
                List.of(
                        "DROP TABLE IF EXISTS legacy_lease",
                        "DROP SEQUENCE IF EXISTS legacy_lease_fence",
                        "CREATE SEQUENCE legacy_lease_fence CACHE 1",
                        "CREATE TABLE legacy_lease (name text PRIMARY KEY, owner text NOT NULL, fence bigint NOT NULL,"
                                + " expires_at timestamptz NOT NULL)"),
                "ALTER TABLE legacy_lease ADD COLUMN holder text");
    }

    @Test
    @ResourceLock(SharedServers.MARIADB)
    @DisplayName("MariaDB: another client sees host, pid and label; an old table works without; ADD holder turns it on")
    void mariaDb() throws SQLException {
        MariaDbServer db = SharedServers.mariadb();
        String uri = SharedServers.mariaDbUri(db.host(), db.port(), "lease", "");
        keepsTheHolder(uri + "&table=holder_lease");
        oldTableWorksAndMigrates(
                db.jdbcUrl(),
                uri + "&table=legacy_lease&createSchema=false",
                List.of(
                        "DROP TABLE IF EXISTS legacy_lease",
                        "DROP SEQUENCE IF EXISTS legacy_lease_fence",
                        "CREATE SEQUENCE legacy_lease_fence INCREMENT BY 1 NOCYCLE",
                        "CREATE TABLE legacy_lease (name VARBINARY(256) NOT NULL PRIMARY KEY, owner VARCHAR(64)"
                                + " CHARACTER SET ascii NOT NULL, fence BIGINT NOT NULL, expires_at DATETIME(6) NOT NULL)"
                                + " ENGINE=InnoDB"),
                "ALTER TABLE legacy_lease ADD COLUMN holder VARCHAR(340) CHARACTER SET ascii NULL");
    }

    @Test
    @DisplayName("H2: another client sees host, pid and label; an old table works without; ADD holder turns it on")
    void h2() throws SQLException {
        String url = "jdbc:h2:mem:lockstep-holder;DB_CLOSE_DELAY=-1";
        keepsTheHolder(url + "?mode=lease&createSchema=true&table=holder_lease");
        oldTableWorksAndMigrates(
                url,
                url + "?mode=lease&table=legacy_lease",
                List.of(
                        "DROP TABLE IF EXISTS legacy_lease",
                        "DROP SEQUENCE IF EXISTS legacy_lease_fence",
                        "CREATE SEQUENCE legacy_lease_fence",
                        "CREATE TABLE legacy_lease (name VARCHAR(256) PRIMARY KEY, owner VARCHAR(64) NOT NULL,"
                                + " fence BIGINT NOT NULL, expires_at TIMESTAMP WITH TIME ZONE NOT NULL)"),
                "ALTER TABLE legacy_lease ADD COLUMN holder VARCHAR(340)");
    }

    private static void keepsTheHolder(String uri) {
        String name = "holder/" + System.nanoTime();
        try (LockProvider holder = Locks.open(uri);
                LockProvider operator = Locks.open(uri)) {
            assertThatThrownBy(() -> holder.acquire(name, LABELLED.withLabel("two words")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("label 'two words' has ' ' at index 3");
            assertThat(operator.inspect(name).orElseThrow().held())
                    .as("nothing taken")
                    .isFalse();

            Lease lease = holder.acquire(name, LABELLED);
            LockState seen = operator.inspect(name).orElseThrow();
            assertThat(seen.held()).isTrue();
            assertThat(seen.fencingToken()).isEqualTo(lease.fencingToken());
            assertThat(seen.holder()).contains(Holder.thisProcess("nightly-report"));
            assertThat(seen.toString()).doesNotContain(lease.ownerToken());
            assertThat(lease.extend(Duration.ofSeconds(30))).isTrue();
            assertThat(lease.release()).isTrue();
            assertThat(operator.inspect(name).orElseThrow().holder())
                    .as("free: no holder")
                    .isEmpty();

            try (Lease plain = holder.acquire(name, LeaseOptions.of(Duration.ofSeconds(30)))) {
                assertThat(operator.inspect(name).orElseThrow().holder()).contains(Holder.thisProcess(null));
            }
        }
    }

    private static void oldTableWorksAndMigrates(String adminUrl, String uri, List<String> oldDdl, String addColumn)
            throws SQLException {
        try (Connection c = DriverManager.getConnection(adminUrl);
                Statement st = c.createStatement()) {
            for (String ddl : oldDdl) {
                st.execute(ddl);
            }
        }
        String name = "legacy/" + System.nanoTime();
        try (LockProvider a = Locks.open(uri);
                LockProvider b = Locks.open(uri)) {
            Lease lease = a.acquire(name, LABELLED);
            assertThat(b.tryAcquire(name, LABELLED)).as("still a lock").isEmpty();
            LockState seen = b.inspect(name).orElseThrow();
            assertThat(seen.held()).isTrue();
            assertThat(seen.holder()).as("no column, no holder").isEmpty();
            assertThat(lease.release()).isTrue();
        }
        try (Connection c = DriverManager.getConnection(adminUrl);
                Statement st = c.createStatement()) {
            st.execute(addColumn);
        }
        try (LockProvider a = Locks.open(uri);
                LockProvider b = Locks.open(uri);
                Lease lease = a.acquire(name, LABELLED)) {
            assertThat(b.inspect(name).orElseThrow().holder()).contains(Holder.thisProcess("nightly-report"));
        }
    }
}
