package io.lockstep.examples.booking;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.jdbc.FencedWrites;
import io.lockstep.tck.servers.PostgresServer;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The seed scenario with the bookings in PostgreSQL and the lock in the same database (lock-jdbc, lease
 * mode). Charlie takes the lock for table 12 at 19:00, sees the table free, and freezes (a long GC pause)
 * past his 1 s lease; Diana takes the lock with a newer fencing token and books; Charlie wakes up and
 * writes his booking too. Two acts:
 *
 * <ol>
 *   <li>the lock alone: Charlie's late insert goes through and the table has two bookings;
 *   <li>the lock and {@link FencedWrites}: each booking is written in a transaction that first admits the
 *       writer's fencing token; Charlie's token is older than Diana's, so his transaction is rolled back
 *       and the table has exactly one booking, Diana's.
 * </ol>
 *
 * <p>The bookings table has no unique key on the slot on purpose: the fence is the only thing that can
 * keep a paused holder's write out. Run with no arguments to start a PostgreSQL ({@code initdb} + {@code
 * postgres}) on a free loopback port, or pass a PostgreSQL JDBC URL ({@code
 * jdbc:postgresql://host:5432/app?user=app&password=...}) to use an existing database; the tables {@code
 * demo_booking}, {@code demo_booking_fence} and lock-jdbc's {@code lockstep_lease} are created there if
 * missing. Exits with status 1 if the fenced act ends with anything but one booking and a rejected stale
 * write.
 */
public final class DatabaseDoubleBooking {

    private static final String SLOT = "restaurant/table-12/2026-11-22T19:00";
    private static final Duration LEASE = Duration.ofSeconds(1);

    private final String jdbcUrl;
    private final LockProvider charlieLocks;
    private final LockProvider dianaLocks;
    private final FencedWrites fences = FencedWrites.on("demo_booking_fence");
    private final PrintStream out;

    /**
     * @param jdbcUrl the driver's URL of the bookings' database
     * @param charlieLocks Charlie's lock provider (in real life another process than Diana's)
     * @param dianaLocks Diana's
     */
    DatabaseDoubleBooking(String jdbcUrl, LockProvider charlieLocks, LockProvider dianaLocks, PrintStream out) {
        this.jdbcUrl = jdbcUrl;
        this.charlieLocks = charlieLocks;
        this.dianaLocks = dianaLocks;
        this.out = out;
    }

    /** The lock URI for a PostgreSQL JDBC URL: the same database, lease mode, schema created if missing. */
    static String lockUri(String jdbcUrl) {
        return jdbcUrl + (jdbcUrl.contains("?") ? "&" : "?") + "mode=lease&createSchema=true";
    }

    /** Runs both acts; returns true if the fenced act kept the promise (one booking, stale write rejected). */
    boolean run() throws Exception {
        try (Connection db = connect();
                Statement st = db.createStatement()) {
            for (String ddl : fences.ddl(db)) {
                st.execute(ddl);
            }
            st.execute("CREATE TABLE IF NOT EXISTS demo_booking (id bigserial PRIMARY KEY, slot text NOT NULL,"
                    + " guest text NOT NULL, fence bigint NOT NULL)");
        }
        long unfencedBookings = act("Act 1: the lock alone.", SLOT + "/unfenced", false)
                .bookings()
                .size();
        Outcome fenced = act("Act 2: the lock and a fenced write.", SLOT, true);
        boolean ok = fenced.bookings().size() == 1
                && fenced.bookings().get(0).startsWith("Diana")
                && !fenced.staleAccepted();
        out.println();
        out.println("Summary: the lock alone " + (unfencedBookings > 1 ? "DOUBLE-BOOKED" : "got lucky")
                + " (" + unfencedBookings + " bookings); with FencedWrites "
                + fenced.bookings().size()
                + (fenced.bookings().size() == 1 ? " booking" : " bookings") + ", the stale write "
                + (fenced.staleAccepted() ? "ACCEPTED" : "rejected by the fence") + (ok ? "" : ": INVARIANT BROKEN"));
        return ok;
    }

    /** The bookings of a slot at the end of an act, and whether the paused holder's write went through. */
    private record Outcome(List<String> bookings, boolean staleAccepted) {}

    private Outcome act(String title, String slot, boolean fenced) throws Exception {
        out.println(title);
        try (Connection charlieDb = connect();
                Connection dianaDb = connect()) {
            clear(charlieDb, slot);
            Lease charlie = charlieLocks.acquire(slot, LeaseOptions.of(LEASE).withWaitTime(Duration.ofSeconds(5)));
            long charlieFence = charlie.fencingToken().orElseThrow();
            boolean charlieSawFree = bookingsOf(charlieDb, slot).isEmpty();
            out.println("  Charlie holds the lock (fencing token " + charlieFence + "), sees the table "
                    + (charlieSawFree ? "free" : "taken") + ", and freezes ...");
            awaitExpiry(charlie);

            Lease diana = dianaLocks.acquire(
                    slot, LeaseOptions.of(Duration.ofSeconds(30)).withWaitTime(Duration.ofSeconds(10)));
            long dianaFence = diana.fencingToken().orElseThrow();
            boolean dianaSawFree = bookingsOf(dianaDb, slot).isEmpty();
            boolean dianaBooked = dianaSawFree && book(dianaDb, slot, "Diana", dianaFence, fenced);
            out.println("  Charlie's lease ran out; Diana got the lock (fencing token " + dianaFence
                    + "), sees the table " + (dianaSawFree ? "free" : "taken") + " and books: "
                    + (dianaBooked ? "accepted" : "rejected"));
            diana.release();

            // Charlie wakes up. His code still believes it holds the lock and that the table was free.
            boolean charlieBooked = charlieSawFree && book(charlieDb, slot, "Charlie", charlieFence, fenced);
            out.println("  Charlie wakes and books with token " + charlieFence + ": "
                    + (charlieBooked
                            ? (fenced ? "ACCEPTED (stale write!)" : "accepted: nothing checked his token")
                            : "rejected by FencedWrites, " + charlieFence + " < " + dianaFence
                                    + "; his transaction rolled back"));
            out.println("  Charlie's lease says valid=" + charlie.isValid() + ", and its release frees nothing: "
                    + !charlie.release());
            List<String> bookings = bookingsOf(charlieDb, slot);
            out.println("  -> " + bookings.size() + (bookings.size() == 1 ? " booking: " : " bookings: ")
                    + String.join(", ", bookings));
            return new Outcome(bookings, charlieBooked);
        }
    }

    /** Charlie's pause: nothing happens on his side until his lease has run out on the monotonic clock. */
    private static void awaitExpiry(Lease lease) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (lease.isValid()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("a 1 s lease was still valid after 30 s");
            }
            Thread.sleep(10);
        }
    }

    /** One booking in its own transaction; with {@code fenced}, only if FencedWrites admits the token. */
    private boolean book(Connection db, String slot, String guest, long fence, boolean fenced) throws SQLException {
        db.setAutoCommit(false);
        try {
            if (fenced && !fences.admit(db, slot, fence)) {
                db.rollback();
                return false;
            }
            try (PreparedStatement ps =
                    db.prepareStatement("INSERT INTO demo_booking (slot, guest, fence) VALUES (?, ?, ?)")) {
                ps.setString(1, slot);
                ps.setString(2, guest);
                ps.setLong(3, fence);
                ps.executeUpdate();
            }
            db.commit();
            return true;
        } catch (SQLException | RuntimeException e) {
            db.rollback();
            throw e;
        } finally {
            db.setAutoCommit(true);
        }
    }

    private static List<String> bookingsOf(Connection db, String slot) throws SQLException {
        try (PreparedStatement ps =
                db.prepareStatement("SELECT guest, fence FROM demo_booking WHERE slot = ? ORDER BY id")) {
            ps.setString(1, slot);
            try (ResultSet rs = ps.executeQuery()) {
                List<String> bookings = new ArrayList<>();
                while (rs.next()) {
                    bookings.add(rs.getString(1) + " (token " + rs.getLong(2) + ")");
                }
                return bookings;
            }
        }
    }

    /** A rerun against the same database starts from an empty slot. */
    private void clear(Connection db, String slot) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement("DELETE FROM demo_booking WHERE slot = ?")) {
            ps.setString(1, slot);
            ps.executeUpdate();
        }
    }

    private Connection connect() throws SQLException {
        return DriverManager.getConnection(jdbcUrl);
    }

    /** Runs the scenario; see the class comment for arguments. */
    public static void main(String[] args) throws Exception {
        Optional<PostgresServer> started = Optional.empty();
        String url;
        if (args.length > 0) {
            url = args[0];
        } else {
            started = Optional.of(PostgresServer.start());
            url = started.get().jdbcUrl();
            System.out.println("Started PostgreSQL on " + started.get().host() + ":"
                    + started.get().port());
        }
        boolean ok;
        try (LockProvider charlie = Locks.open(lockUri(url));
                LockProvider diana = Locks.open(lockUri(url))) {
            ok = new DatabaseDoubleBooking(url, charlie, diana, System.out).run();
        } finally {
            started.ifPresent(PostgresServer::close);
        }
        System.exit(ok ? 0 : 1);
    }
}
