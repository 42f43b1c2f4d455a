package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LossReason;
import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.servers.PostgresServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Session mode's validity (review 2026-11-26, findings 13 and 6): a lease is valid for its lease time
 * from the last confirmed grant or renewal, the server keeps the transaction at least that long, and a
 * lease not renewed frees its row when its validity ends.
 */
@ResourceLock(SharedServers.POSTGRES)
class PgSessionValidityTest {

    private static String uri(String host, int port, String extra) {
        return SharedServers.pgUri(host, port, "session", "&table=validity_session&notifications=false" + extra)
                .replace("&callTimeout=1s", "");
    }

    @Test
    @DisplayName("a session lease without auto-renew frees its row when its validity ends, not one lease time later")
    void unrenewedSessionLeaseFreesItsRowWhenItExpires() throws Exception {
        PostgresServer pg = SharedServers.postgres();
        Duration leaseTime = Duration.ofSeconds(12);
        try (LockProvider holder = KitRuntimes.open(this, uri(pg.host(), pg.port(), "&sessionTimeout=60s"));
                LockProvider contender = KitRuntimes.open(this, uri(pg.host(), pg.port(), "&sessionTimeout=60s"))) {
            String name = "job-" + System.nanoTime();
            Lease lease = holder.tryAcquire(name, LeaseOptions.of(leaseTime)).orElseThrow();
            LossReason reason = lease.lost().toCompletableFuture().get(60, TimeUnit.SECONDS);
            assertThat(reason).isEqualTo(LossReason.EXPIRED);
            // The old code kept the row locked (and heartbeats going) for one more lease time (12 s).
            Lease next = contender
                    .tryAcquire(name, LeaseOptions.of(leaseTime).withWaitTime(Duration.ofSeconds(8)))
                    .orElseThrow(() -> new AssertionError("the expired lease's row was still locked 8 s after expiry"));
            next.release();
        }
    }

    @Test
    @DisplayName("a partitioned session holder is never valid while the server has ended its session and another holds")
    void partitionedHolderIsNotValidWhileAnotherHolds() throws Exception {
        PostgresServer pg = SharedServers.postgres();
        TcpProxy proxy = SharedServers.postgresProxy();
        try (LockProvider holder = KitRuntimes.open(this, uri(proxy.host(), proxy.port(), "&sessionTimeout=2s"));
                LockProvider contender = KitRuntimes.open(this, uri(pg.host(), pg.port(), "&sessionTimeout=2s"))) {
            String name = "job-" + System.nanoTime();
            Lease lease = holder.tryAcquire(name, LeaseOptions.of(Duration.ofSeconds(6)))
                    .orElseThrow();
            proxy.stall();
            try {
                Lease next = contender
                        .tryAcquire(name, LeaseOptions.of(Duration.ofSeconds(6)).withWaitTime(Duration.ofSeconds(60)))
                        .orElseThrow();
                assertThat(lease.isValid())
                        .as("the partitioned holder once another client holds the lock")
                        .isFalse();
                assertThat(next.fencingToken().orElseThrow())
                        .isGreaterThan(lease.fencingToken().orElseThrow());
                next.release();
            } finally {
                proxy.heal();
            }
        }
    }
}
