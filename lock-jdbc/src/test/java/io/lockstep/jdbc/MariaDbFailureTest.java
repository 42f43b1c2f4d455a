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
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.History;
import io.lockstep.tck.history.HistoryChecker;
import io.lockstep.tck.servers.MariaDbServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The failures of issue 9 item 5 on MariaDB, as {@link PgSessionFailureTest} does on PostgreSQL, on the
 * shared MariaDB (the test kills it): {@code KILL} of the holder's connection, the server killed and
 * restarted in both modes, a frozen holder JVM in session mode.
 */
@ResourceLock(SharedServers.MARIADB)
class MariaDbFailureTest {

    /** MariaDB's idle transaction timeout has whole seconds. */
    private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(2);

    private static final Duration BOUND = Duration.ofSeconds(15);
    private static MariaDbServer db;

    @BeforeAll
    static void start() {
        db = SharedServers.mariadb();
    }

    private static String uri(String mode) {
        return SharedServers.mariaDbUri(
                db.host(), db.port(), mode, "&sessionTimeout=" + SESSION_TIMEOUT.toMillis() + "ms");
    }

    @Test
    @DisplayName("session mode: KILL of the holder's connection completes lost() and frees the lock at once")
    void killedConnectionEndsTheLock() throws Exception {
        History history = new History();
        History.Recorder holderLog = history.client("holder");
        History.Recorder otherLog = history.client("other");
        try (LockProvider holder = Locks.open(uri("session"));
                LockProvider other = Locks.open(uri("session"))) {
            holderLog.invoke(Op.ACQUIRE, "kill-conn");
            Lease lease = holder.tryAcquire("kill-conn", LeaseOptions.of(Duration.ofMinutes(1)))
                    .orElseThrow();
            holderLog.acquired(lease);
            otherLog.invoke(Op.ACQUIRE, "kill-conn");
            assertThat(other.tryAcquire("kill-conn", LeaseOptions.of(Duration.ofMinutes(1))))
                    .isEmpty();
            otherLog.fail(Op.ACQUIRE, "kill-conn");

            killHolderConnection();
            LossReason reason = lease.lost().toCompletableFuture().get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            holderLog.lost(lease);
            assertThat(reason).isEqualTo(LossReason.SESSION_EXPIRED);

            otherLog.invoke(Op.ACQUIRE, "kill-conn");
            Lease next = other.acquire(
                    "kill-conn", LeaseOptions.of(Duration.ofMinutes(1)).withWaitTime(BOUND));
            otherLog.acquired(next);
            assertThat(next.fencingToken().orElseThrow())
                    .isGreaterThan(lease.fencingToken().orElseThrow());
            otherLog.invoke(Op.RELEASE, "kill-conn");
            assertThat(next.release()).isTrue();
            otherLog.ok(Op.RELEASE, "kill-conn");
        }
        HistoryChecker.strict().check(history).assertValid();
    }

    @Test
    @DisplayName("session mode: the server killed and restarted ends the lock, and fences keep increasing")
    void killedServerEndsASessionLock() throws Exception {
        try (LockProvider holder = Locks.open(uri("session"))) {
            Lease lease = holder.tryAcquire("kill-session", LeaseOptions.of(Duration.ofMinutes(1)))
                    .orElseThrow();
            db.kill();
            try {
                LossReason reason = lease.lost().toCompletableFuture().get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
                assertThat(reason).isNotEqualTo(LossReason.RELEASED);
                assertThatThrownBy(() -> holder.tryAcquire("kill-session-2", LeaseOptions.of(Duration.ofMinutes(1))))
                        .isInstanceOf(BackendUnavailableException.class);
            } finally {
                db.restart();
            }
            Lease next = acquireAfterRestart(holder, "kill-session");
            assertThat(next.fencingToken().orElseThrow())
                    .isGreaterThan(lease.fencingToken().orElseThrow());
            assertThat(next.release()).isTrue();
        }
    }

    @Test
    @DisplayName("lease mode: the server killed and restarted keeps the row, and fences keep increasing")
    void leaseRowSurvivesARestart() throws Exception {
        History history = new History();
        History.Recorder holderLog = history.client("holder");
        History.Recorder otherLog = history.client("other");
        try (LockProvider holder = Locks.open(uri("lease"));
                LockProvider other = Locks.open(uri("lease"))) {
            holderLog.invoke(Op.ACQUIRE, "kill-lease");
            Lease lease = holder.tryAcquire("kill-lease", LeaseOptions.of(Duration.ofMinutes(1)))
                    .orElseThrow();
            holderLog.acquired(lease);
            db.kill();
            try {
                assertThatThrownBy(() -> other.tryAcquire("kill-lease", LeaseOptions.of(Duration.ofMinutes(1))))
                        .isInstanceOf(BackendUnavailableException.class);
                otherLog.invoke(Op.ACQUIRE, "kill-lease");
                otherLog.fail(Op.ACQUIRE, "kill-lease");
            } finally {
                db.restart();
            }
            // The row came back from InnoDB's log: the lock is still held by the holder.
            otherLog.invoke(Op.ACQUIRE, "kill-lease");
            Optional<Lease> stolen = tryAfterRestart(other, "kill-lease");
            assertThat(stolen)
                    .as("the lock after the restart, while its lease runs")
                    .isEmpty();
            otherLog.fail(Op.ACQUIRE, "kill-lease");
            assertThat(lease.isValid()).isTrue();
            holderLog.invoke(Op.RELEASE, "kill-lease");
            assertThat(lease.release())
                    .as("the holder's release after the restart")
                    .isTrue();
            holderLog.ok(Op.RELEASE, "kill-lease");

            otherLog.invoke(Op.ACQUIRE, "kill-lease");
            Lease next = other.tryAcquire("kill-lease", LeaseOptions.of(Duration.ofMinutes(1)))
                    .orElseThrow();
            otherLog.acquired(next);
            assertThat(next.fencingToken().orElseThrow())
                    .isGreaterThan(lease.fencingToken().orElseThrow());
            otherLog.invoke(Op.RELEASE, "kill-lease");
            assertThat(next.release()).isTrue();
            otherLog.ok(Op.RELEASE, "kill-lease");
        }
        HistoryChecker.strict().check(history).assertValid();
    }

    @Test
    @DisplayName("session mode: a SIGSTOPped auto-renewing holder JVM blocks others only until its lease time or"
            + " session timeout")
    void frozenHolderBlocksOnlyUntilItsLeaseTimeOrSessionTimeout() {
        // The server keeps a silent holder's transaction max(session timeout, lease time), so that a
        // holder thawed later never counts valid a lock the server already ended (issue 21).
        try (ChildJvmHolder child = ChildJvmHolder.builder(uri("session"), "frozen")
                        .client("frozen")
                        .leaseTime(Duration.ofSeconds(3))
                        .start();
                LockProvider other = Locks.open(uri("session"))) {
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
            assertThat(next.release()).isTrue();
            child.resume();
        }
    }

    /** The one connection with an open transaction holding row locks is the holder's: KILL it. */
    private static void killHolderConnection() throws SQLException {
        try (Connection admin = DriverManager.getConnection(db.jdbcUrl());
                Statement st = admin.createStatement()) {
            List<Long> holders = new ArrayList<>();
            try (ResultSet rs = st.executeQuery(
                    "SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX WHERE trx_rows_locked > 0")) {
                while (rs.next()) {
                    holders.add(rs.getLong(1));
                }
            }
            assertThat(holders).as("connections holding row locks").hasSize(1);
            st.execute("KILL " + holders.get(0));
        }
    }

    private static Optional<Lease> tryAfterRestart(LockProvider client, String name) throws InterruptedException {
        long deadline = System.nanoTime() + BOUND.toNanos();
        while (true) {
            try {
                return client.tryAcquire(name, LeaseOptions.of(Duration.ofMinutes(1)));
            } catch (BackendUnavailableException stillRecovering) {
                if (System.nanoTime() > deadline) {
                    throw stillRecovering;
                }
                Thread.sleep(50); // polling the recovering server, bounded by the deadline
            }
        }
    }

    private static Lease acquireAfterRestart(LockProvider client, String name) throws InterruptedException {
        long deadline = System.nanoTime() + BOUND.toNanos();
        Optional<Lease> lease = tryAfterRestart(client, name);
        while (lease.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(50);
            lease = tryAfterRestart(client, name);
        }
        assertThat(lease).as("'%s' taken again after the restart", name).isPresent();
        return lease.get();
    }
}
