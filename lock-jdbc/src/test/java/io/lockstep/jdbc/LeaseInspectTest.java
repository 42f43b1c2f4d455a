package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockState;
import io.lockstep.Locks;
import io.lockstep.tck.servers.MariaDbServer;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * {@code inspect} in lease mode on the dialects lock-cli's test does not reach (it covers PostgreSQL):
 * MariaDB and H2 each run their own {@code leftMillisSql()}. A free lock is free, a held one shows exactly
 * the holder's fence and a remaining time within its lease, and after release it is free again.
 */
@DisplayName("lease-mode inspect on MariaDB and H2")
class LeaseInspectTest {

    private static final Duration LEASE = Duration.ofSeconds(5);

    @Test
    @ResourceLock(SharedServers.MARIADB)
    @DisplayName("MariaDB: free, then the holder's fence and remaining time, then free")
    void mariaDb() {
        MariaDbServer db = SharedServers.mariadb();
        inspectsOneLease(SharedServers.mariaDbUri(db.host(), db.port(), "lease", ""));
    }

    @Test
    @DisplayName("H2: free, then the holder's fence and remaining time, then free")
    void h2() {
        inspectsOneLease("jdbc:h2:mem:lockstep-inspect;DB_CLOSE_DELAY=-1?mode=lease&createSchema=true");
    }

    private static void inspectsOneLease(String uri) {
        String name = "inspect/" + System.nanoTime();
        try (LockProvider provider = Locks.open(uri)) {
            assertThat(provider.inspect(name))
                    .as("a lock never taken")
                    .hasValueSatisfying(state -> assertThat(state.held()).isFalse());

            Lease lease = provider.acquire(name, LeaseOptions.of(LEASE).withWaitTime(Duration.ofSeconds(5)));
            long fence = lease.fencingToken().orElseThrow();
            LockState held = provider.inspect(name).orElseThrow();
            assertThat(held.held()).as("held: %s", held).isTrue();
            assertThat(held.fencingToken()).as("the holder's fence").hasValue(fence);
            assertThat(held.remaining())
                    .as("remaining time of a %s lease", LEASE)
                    .hasValueSatisfying(left -> assertThat(left).isPositive().isLessThanOrEqualTo(LEASE));

            assertThat(lease.release()).isTrue();
            LockState after = provider.inspect(name).orElseThrow();
            assertThat(after.held()).as("after release: %s", after).isFalse();
        }
    }
}
