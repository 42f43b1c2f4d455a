package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.LossReason;
import io.lockstep.tck.faults.ChildJvmHolder;
import io.lockstep.tck.servers.PostgresServer;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Session mode under the failures of issue 9 item 5, on the shared PostgreSQL (the test kills it): the
 * holder's connection terminated, the database killed and restarted, a frozen holder JVM, the pool bound.
 */
@ResourceLock(SharedServers.POSTGRES)
class PgSessionFailureTest {

    private static final Duration SESSION_TIMEOUT = Duration.ofMillis(1500);
    private static final Duration BOUND = Duration.ofSeconds(10);
    private static PostgresServer pg;

    @BeforeAll
    static void start() {
        pg = SharedServers.postgres();
    }

    private static String uri(String extra) {
        return SharedServers.pgUri(
                pg.host(), pg.port(), "session", "&sessionTimeout=" + SESSION_TIMEOUT.toMillis() + "ms" + extra);
    }

    @Test
    @DisplayName("pg_terminate_backend of the holder's connection completes lost() and frees the lock at once")
    void terminatedConnectionEndsTheLock() throws Exception {
        try (LockProvider holder = Locks.open(uri(""));
                LockProvider other = Locks.open(uri(""))) {
            Lease lease = holder.tryAcquire("term", LeaseOptions.of(Duration.ofMinutes(1)))
                    .orElseThrow();
            ServerCompatibilityKit.terminateHolder(pg, lease);
            LossReason reason = lease.lost().toCompletableFuture().get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(reason).isEqualTo(LossReason.SESSION_EXPIRED);
            Lease next = other.tryAcquire("term", LeaseOptions.of(Duration.ofMinutes(1)))
                    .orElseThrow();
            assertThat(next.fencingToken().orElseThrow())
                    .isGreaterThan(lease.fencingToken().orElseThrow());
            next.release();
        }
    }

    @Test
    @DisplayName("the database killed and restarted: the holder learns at once, and fences keep increasing")
    void killedDatabaseEndsTheLockAndFencesSurvive() throws Exception {
        try (LockProvider holder = Locks.open(uri(""))) {
            Lease lease = holder.tryAcquire("kill", LeaseOptions.of(Duration.ofMinutes(1)))
                    .orElseThrow();
            pg.kill();
            LossReason reason = lease.lost().toCompletableFuture().get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(reason).isNotEqualTo(LossReason.RELEASED);
            assertThatThrownBy(() -> holder.tryAcquire("kill-2", LeaseOptions.of(Duration.ofMinutes(1))))
                    .isInstanceOf(BackendUnavailableException.class);
            pg.restart();
            Optional<Lease> next = Optional.empty();
            long deadline = System.nanoTime() + BOUND.toNanos();
            while (next.isEmpty() && System.nanoTime() < deadline) {
                try {
                    next = holder.tryAcquire("kill", LeaseOptions.of(Duration.ofMinutes(1)));
                } catch (BackendUnavailableException stillRecovering) {
                    Thread.sleep(50);
                }
            }
            assertThat(next).as("lock taken again after the restart").isPresent();
            assertThat(next.get().fencingToken().orElseThrow())
                    .isGreaterThan(lease.fencingToken().orElseThrow());
            next.get().release();
        }
    }

    @Test
    @DisplayName("a database that is down is reported unreachable and transient, never as an exhausted pool")
    void downDatabaseIsNotAnExhaustedPool() throws Exception {
        String lease = SharedServers.pgUri(pg.host(), pg.port(), "lease", "");
        try (LockProvider locks = Locks.open(lease)) {
            assertThat(locks.tryAcquire("down-warm", LeaseOptions.of(Duration.ofMinutes(1))))
                    .isPresent();
            pg.kill();
            try {
                locks.tryAcquire("down", LeaseOptions.of(Duration.ofMinutes(1)));
            } catch (RuntimeException e) {
            }
            assertThatThrownBy(() -> locks.tryAcquire("down", LeaseOptions.of(Duration.ofMinutes(1))))
                    .isInstanceOfSatisfying(BackendUnavailableException.class, e -> assertThat(e.isTransient())
                            .as("transient: %s", e.getMessage())
                            .isTrue())
                    .message()
                    .doesNotContain("poolSize")
                    .doesNotContain("session mode");
        } finally {
            pg.restart();
        }
    }

    @Test
    @DisplayName("a SIGSTOPped auto-renewing holder JVM blocks others only until its lease time or session timeout")
    void frozenHolderBlocksOnlyUntilItsLeaseTimeOrSessionTimeout() {
        // The server keeps a silent holder's transaction max(session timeout, lease time), so that a
        // holder thawed later never counts valid a lock the server already ended (issue 21).
        try (ChildJvmHolder child = ChildJvmHolder.builder(uri(""), "frozen")
                        .client("frozen")
                        .leaseTime(Duration.ofSeconds(3))
                        .start();
                LockProvider other = Locks.open(uri(""))) {
            OptionalLong fence = child.awaitAcquired(Duration.ofSeconds(30));
            assertThat(fence).isPresent();
            assertThat(other.tryAcquire("frozen", LeaseOptions.of(Duration.ofMinutes(1))))
                    .isEmpty();
            child.pause();
            long frozenAt = System.nanoTime();
            Lease next = other.acquire(
                    "frozen", LeaseOptions.of(Duration.ofMinutes(1)).withWaitTime(BOUND));
            Duration blocked = Duration.ofNanos(System.nanoTime() - frozenAt);
            assertThat(next.fencingToken().orElseThrow()).isGreaterThan(fence.getAsLong());
            // Not a timing assertion on the happy path: without the timeout the wait would never end.
            assertThat(blocked).isLessThan(BOUND);
            next.release();
            child.resume();
        }
    }

    @Test
    @DisplayName("an exhausted pool is reported as such, naming the setting to change")
    void exhaustedPoolIsReportedClearly() {
        try (LockProvider locks = Locks.open(uri("&poolSize=1&notifications=false"))) {
            Lease first = locks.tryAcquire("pool-a", LeaseOptions.of(Duration.ofMinutes(1)))
                    .orElseThrow();
            assertThatThrownBy(() -> locks.tryAcquire("pool-b", LeaseOptions.of(Duration.ofMinutes(1))))
                    .isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining("every pooled connection in use")
                    .hasMessageContaining("session mode holds one connection per held lock")
                    .hasMessageContaining("poolSize");
            first.release();
            assertThat(locks.tryAcquire("pool-b", LeaseOptions.of(Duration.ofMinutes(1))))
                    .isPresent();
        }
    }
}
