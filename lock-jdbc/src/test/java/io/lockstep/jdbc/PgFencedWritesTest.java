package io.lockstep.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/** {@link FencedWrites}: a former holder that paused past its lease cannot write after the next holder. */
@ResourceLock(SharedServers.POSTGRES)
class PgFencedWritesTest {

    @Test
    @DisplayName("a paused former holder's late write is rejected and leaves the newer holder's write in place")
    void lateWriteOfAPausedHolderIsRejected() throws Exception {
        PostgresServer pg = SharedServers.postgres();
        String uri = SharedServers.pgUri(pg.host(), pg.port(), "lease", "");
        FencedWrites fences = FencedWrites.on("booking_fence");
        try (LockProvider a = Locks.open(uri);
                LockProvider b = Locks.open(uri);
                Connection db = DriverManager.getConnection(pg.jdbcUrl())) {
            try (Statement st = db.createStatement()) {
                for (String ddl : fences.ddl(db)) {
                    st.execute(ddl);
                }
                st.execute("CREATE TABLE IF NOT EXISTS booking (room text PRIMARY KEY, guest text NOT NULL)");
            }
            String room = "room-" + System.nanoTime();
            Lease first =
                    a.tryAcquire(room, LeaseOptions.of(Duration.ofMillis(300))).orElseThrow();
            // The first holder "pauses": it does nothing until its lease has run out.
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (first.isValid() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(first.isValid()).isFalse();
            Lease second =
                    b.acquire(room, LeaseOptions.of(Duration.ofMinutes(1)).withWaitTime(Duration.ofSeconds(10)));
            assertThat(second.fencingToken().orElseThrow())
                    .isGreaterThan(first.fencingToken().orElseThrow());

            assertThat(book(db, fences, room, "second", second.fencingToken().orElseThrow()))
                    .isTrue();
            // The former holder wakes up and writes with its old fence: rejected, nothing changed.
            assertThat(book(db, fences, room, "first", first.fencingToken().orElseThrow()))
                    .isFalse();
            assertThat(guestOf(db, room)).isEqualTo("second");
            // The current holder can write again with the same fence.
            assertThat(book(
                            db,
                            fences,
                            room,
                            "second-again",
                            second.fencingToken().orElseThrow()))
                    .isTrue();
            assertThat(guestOf(db, room)).isEqualTo("second-again");
            second.release();
        }
    }

    @Test
    @DisplayName("admit on a connection in auto-commit is refused: there it would protect nothing")
    void admitRefusesAnAutoCommitConnection() throws SQLException {
        PostgresServer pg = SharedServers.postgres();
        FencedWrites fences = FencedWrites.on("booking_fence");
        try (Connection db = DriverManager.getConnection(pg.jdbcUrl())) {
            try (Statement st = db.createStatement()) {
                for (String ddl : fences.ddl(db)) {
                    st.execute(ddl);
                }
            }
            String room = "room-" + System.nanoTime();
            assertThat(db.getAutoCommit()).isTrue();
            assertThatThrownBy(() -> fences.admit(db, room, 5))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("setAutoCommit(false)");
            try (PreparedStatement ps = db.prepareStatement("SELECT count(*) FROM booking_fence WHERE resource = ?")) {
                ps.setString(1, room);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertThat(rs.getInt(1)).as("fence rows written").isZero();
                }
            }
        }
    }

    private static boolean book(Connection db, FencedWrites fences, String room, String guest, long fence)
            throws SQLException {
        db.setAutoCommit(false);
        try {
            if (!fences.admit(db, room, fence)) {
                db.rollback();
                return false;
            }
            try (PreparedStatement ps = db.prepareStatement("INSERT INTO booking (room, guest) VALUES (?, ?)"
                    + " ON CONFLICT (room) DO UPDATE SET guest = excluded.guest")) {
                ps.setString(1, room);
                ps.setString(2, guest);
                ps.executeUpdate();
            }
            db.commit();
            return true;
        } finally {
            db.setAutoCommit(true);
        }
    }

    private static String guestOf(Connection db, String room) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement("SELECT guest FROM booking WHERE room = ?")) {
            ps.setString(1, room);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }
}
