package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/** Lease mode holds no connection per lock: many held leases share a pool of two connections. */
@ResourceLock(SharedServers.POSTGRES)
class PgManyLeasesTest {

    private static final int LEASES = 10_000;

    @Test
    @DisplayName("10,000 leases are held at once through a pool of two connections, and all are released")
    void tenThousandLeasesOnTwoConnections() throws Exception {
        PostgresServer pg = SharedServers.postgres();
        String app = "lockstep-many-" + System.nanoTime();
        String uri = SharedServers.pgUri(pg.host(), pg.port(), "lease", "&poolSize=2&ApplicationName=" + app);
        List<Lease> held = new ArrayList<>(LEASES);
        try (LockProvider locks = Locks.open(uri);
                LockProvider other = Locks.open(uri)) {
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<Lease>> futures = new ArrayList<>(LEASES);
                for (int i = 0; i < LEASES; i++) {
                    String name = "many/" + app + "/" + i;
                    futures.add(pool.submit(() -> locks.tryAcquire(name, LeaseOptions.of(Duration.ofMinutes(5)))
                            .orElseThrow(() -> new AssertionError("free lock " + name + " was not granted"))));
                }
                for (Future<Lease> f : futures) {
                    held.add(f.get());
                }
            } finally {
                pool.shutdown();
            }
            assertThat(held).allMatch(Lease::isValid);
            Set<Long> fences = new HashSet<>();
            held.forEach(l -> fences.add(l.fencingToken().orElseThrow()));
            assertThat(fences).as("distinct fences").hasSize(LEASES);
            // Every one of them is really held in the database.
            assertThat(other.tryAcquire(held.get(0).name(), LeaseOptions.of(Duration.ofSeconds(5))))
                    .isEmpty();
            assertThat(other.tryAcquire(held.get(LEASES - 1).name(), LeaseOptions.of(Duration.ofSeconds(5))))
                    .isEmpty();
            // The pool stayed at its bound, plus the release listener of each provider at most.
            assertThat(connectionsNamed(pg, app)).isLessThanOrEqualTo(2 + 2 + 2);
            for (Lease l : held) {
                assertThat(l.release()).isTrue();
            }
            assertThat(other.tryAcquire(held.get(0).name(), LeaseOptions.of(Duration.ofSeconds(5))))
                    .hasValueSatisfying(Lease::release);
        }
    }

    private static int connectionsNamed(PostgresServer pg, String app) throws SQLException {
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + app + "'")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
