package io.lockstep.examples.booking;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.redis.RedisFencedStore;
import io.lockstep.tck.servers.RedisServer;
import java.io.PrintStream;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import redis.clients.jedis.JedisPooled;

/**
 * The seed scenario: Charlie and Diana both want table 12 at 19:00 and click "book" at the same
 * moment. Three acts on a real Redis:
 *
 * <ol>
 *   <li>without a lock, both see the table free and both book it: a double booking;
 *   <li>with a Lockstep lock, exactly one books it and the other is told it is taken;
 *   <li>with a lock and a stop-the-world pause longer than the lease: the paused holder wakes up
 *       believing it still holds the lock, and only the fencing token stops its stale write.
 * </ol>
 *
 * <p>Run with no arguments to start a {@code redis-server} on a free loopback port, or pass a URI
 * ({@code redis://host:6379}) to use an existing server. Exits with status 1 if the locked acts
 * ever end with a double booking or an accepted stale write.
 */
public final class DoubleBooking {

    private static final String TABLE = "table 12";
    private static final String SLOT = "restaurant/table-12/2026-11-22T19:00";

    private final LockProvider locks;
    private final JedisPooled redis;
    private final RedisFencedStore bookings;
    private final PrintStream out;

    DoubleBooking(LockProvider locks, JedisPooled redis, PrintStream out) {
        this.locks = locks;
        this.redis = redis;
        this.bookings = new RedisFencedStore(redis, "demo");
        this.out = out;
    }

    /** Runs the three acts; returns true if Lockstep kept every promise. */
    boolean run() throws Exception {
        redis.del("booking:naive", "booking:locked", "booking:fenced");
        boolean naiveDoubleBooked = withoutALock();
        boolean lockedOnce = withALock();
        boolean staleRejected = withAPauseAndAFence();
        out.println();
        out.println("Summary: without a lock " + (naiveDoubleBooked ? "DOUBLE-BOOKED" : "got lucky")
                + "; with Lockstep " + (lockedOnce ? "one booking" : "DOUBLE-BOOKED")
                + "; stale write after a pause " + (staleRejected ? "rejected by the fence" : "ACCEPTED"));
        return lockedOnce && staleRejected;
    }

    private boolean withoutALock() throws Exception {
        out.println("Act 1: no lock. Charlie and Diana check table 12, both see it free, both book.");
        CyclicBarrier bothChecked = new CyclicBarrier(2);
        List<String> confirmations = race(guest -> {
            boolean free = redis.get("booking:naive") == null;
            bothChecked.await(); // both look before either writes: the race a real site hits under load
            if (free) {
                redis.set("booking:naive", guest);
                return guest + " booked " + TABLE;
            }
            return guest + " was told " + TABLE + " is taken";
        });
        confirmations.forEach(line -> out.println("  " + line));
        long booked = confirmations.stream().filter(c -> c.contains("booked")).count();
        out.println("  -> " + booked + " confirmations for one table; the table shows " + redis.get("booking:naive"));
        return booked > 1;
    }

    private boolean withALock() throws Exception {
        out.println("Act 2: Lockstep lock on '" + SLOT + "'.");
        CountDownLatch start = new CountDownLatch(1);
        List<String> confirmations = race(
                guest -> {
                    start.await();
                    try (Lease lease = locks.acquire(
                            SLOT, LeaseOptions.of(Duration.ofSeconds(10)).withWaitTime(Duration.ofSeconds(5)))) {
                        if (redis.get("booking:locked") == null) {
                            redis.set("booking:locked", guest);
                            return guest + " booked " + TABLE + " (fencing token "
                                    + lease.fencingToken().getAsLong() + ")";
                        }
                        return guest + " was told " + TABLE + " is taken by " + redis.get("booking:locked")
                                + " (fencing token " + lease.fencingToken().getAsLong() + ")";
                    }
                },
                start);
        confirmations.forEach(line -> out.println("  " + line));
        long booked = confirmations.stream().filter(c -> c.contains(" booked ")).count();
        out.println("  -> " + booked + " confirmation; the table shows " + redis.get("booking:locked"));
        return booked == 1;
    }

    private boolean withAPauseAndAFence() throws Exception {
        out.println("Act 3: Charlie holds the lock, then freezes (a long GC pause) past his 1 s lease.");
        Duration leaseTime = Duration.ofSeconds(1);
        Lease charlie = locks.acquire(SLOT, LeaseOptions.of(leaseTime));
        long charlieFence = charlie.fencingToken().getAsLong();
        out.println("  Charlie holds the lock with fencing token " + charlieFence + " and freezes ...");

        Lease diana =
                locks.acquire(SLOT, LeaseOptions.of(Duration.ofSeconds(10)).withWaitTime(Duration.ofSeconds(5)));
        long dianaFence = diana.fencingToken().getAsLong();
        boolean dianaWrote = bookings.write("booking:fenced", dianaFence, "Diana");
        out.println("  Charlie's lease expired; Diana got the lock with token " + dianaFence + " and booked: "
                + (dianaWrote ? "accepted" : "rejected"));
        diana.release();

        // Charlie wakes up. His code believes it holds the lock; the store checks the fence.
        boolean charlieWrote = bookings.write("booking:fenced", charlieFence, "Charlie");
        out.println("  Charlie wakes and writes with token " + charlieFence + ": "
                + (charlieWrote ? "ACCEPTED (stale write!)" : "rejected, " + charlieFence + " < " + dianaFence));
        out.println("  Charlie's lease says valid=" + charlie.isValid() + ", and its release frees nothing: "
                + !charlie.release());
        out.println("  -> the table shows " + bookings.read("booking:fenced").orElse("nobody"));
        return dianaWrote && !charlieWrote;
    }

    private interface Guest {
        String book(String guest) throws Exception;
    }

    private static List<String> race(Guest action, CountDownLatch... start) throws Exception {
        List<String> results = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        List<Exception> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        for (String guest : List.of("Charlie", "Diana")) {
            Thread t = new Thread(
                    () -> {
                        try {
                            results.add(action.book(guest));
                        } catch (Exception e) {
                            failures.add(e);
                        }
                    },
                    guest);
            threads.add(t);
            t.start();
        }
        for (CountDownLatch latch : start) {
            latch.countDown();
        }
        for (Thread t : threads) {
            t.join(30_000);
        }
        if (!failures.isEmpty()) {
            throw failures.get(0);
        }
        return results;
    }

    /** Runs the scenario; see the class comment for arguments. */
    public static void main(String[] args) throws Exception {
        Optional<RedisServer> started = Optional.empty();
        String uri;
        if (args.length > 0) {
            uri = args[0];
        } else {
            started = Optional.of(RedisServer.start());
            uri = started.get().uri();
            System.out.println("Started redis-server on " + uri);
        }
        boolean ok;
        URI parsed = URI.create(uri);
        try (LockProvider locks = Locks.open(uri);
                JedisPooled redis =
                        new JedisPooled(parsed.getHost(), parsed.getPort() == -1 ? 6379 : parsed.getPort())) {
            ok = new DoubleBooking(locks, redis, System.out).run();
        } finally {
            started.ifPresent(RedisServer::close);
        }
        System.exit(ok ? 0 : 1);
    }
}
