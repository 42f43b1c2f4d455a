package io.lockstep.examples.booking;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.PostgresServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class DatabaseDoubleBookingTest {

    @Test
    @DisplayName("on PostgreSQL the lock alone lets a paused holder double-book, and FencedWrites rejects its late"
            + " write so exactly one booking remains")
    void fencedWritesKeepOneBooking() throws Exception {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        try (PostgresServer pg = PostgresServer.start();
                LockProvider charlie = Locks.open(DatabaseDoubleBooking.lockUri(pg.jdbcUrl()));
                LockProvider diana = Locks.open(DatabaseDoubleBooking.lockUri(pg.jdbcUrl()))) {
            boolean ok = new DatabaseDoubleBooking(
                            pg.jdbcUrl(), charlie, diana, new PrintStream(buffer, true, StandardCharsets.UTF_8))
                    .run();
            String output = buffer.toString(StandardCharsets.UTF_8);
            assertThat(ok).as(output).isTrue();
            assertThat(output)
                    .contains("the lock alone DOUBLE-BOOKED (2 bookings)")
                    .contains("with FencedWrites 1 booking, the stale write rejected by the fence");
            // The database itself, not the program's account of it: one booking, Diana's, with the newer token.
            try (Connection db = DriverManager.getConnection(pg.jdbcUrl())) {
                List<String> fenced = guests(db, "restaurant/table-12/2026-11-22T19:00");
                assertThat(fenced).as(output).hasSize(1);
                assertThat(fenced.get(0)).startsWith("Diana ");
                assertThat(guests(db, "restaurant/table-12/2026-11-22T19:00/unfenced"))
                        .as(output)
                        .hasSize(2);
            }
        }
    }

    @Test
    @DisplayName("the program exits with status 0 and says what happened when the invariant holds")
    void mainExitsZero() throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(
                        java, "-cp", System.getProperty("java.class.path"), DatabaseDoubleBooking.class.getName())
                .redirectErrorStream(true)
                .start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(output).isZero();
        assertThat(output).contains("Started PostgreSQL on").contains("rejected by the fence");
    }

    private static List<String> guests(Connection db, String slot) throws Exception {
        try (PreparedStatement ps =
                db.prepareStatement("SELECT guest || ' ' || fence FROM demo_booking WHERE slot = ? ORDER BY id")) {
            ps.setString(1, slot);
            try (ResultSet rs = ps.executeQuery()) {
                List<String> out = new ArrayList<>();
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
                return out;
            }
        }
    }
}
