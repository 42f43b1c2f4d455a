package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.FencedRegister;
import io.lockstep.tck.history.History;
import io.lockstep.tck.history.HistoryChecker;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * Issue 12, and issue 27's handoff: waiters on one name queue on the server (each thread of a process
 * too) and a release grants the lock to the first and wakes only it, so 8 threads contending for one
 * lock cost about one acquire attempt per grant at the server (counted by {@code INFO commandstats}): the
 * attempt that queues; the grant itself needs none.
 */
@DisplayName("lock-redis: a release wakes one waiter")
class RedisWakeOneWaiterTest {

    private static final int THREADS = 8;
    private static final int GRANTS_EACH = 50;

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            try {
                toClose.get(i).close();
            } catch (Exception ignored) {
                // keep closing the rest
            }
        }
    }

    private RedisServer server() {
        RedisServer server = RedisServer.start();
        toClose.add(server);
        return server;
    }

    private LockProvider open(RedisServer server) {
        LockProvider provider = Locks.open(LockConfig.of(server.uri()));
        toClose.add(provider);
        return provider;
    }

    @Test
    @DisplayName(
            "8 threads on one name: at most 1.5 acquire attempts per grant at the server, exclusive, fences increasing")
    void eightWaitersCostAboutOneAttemptPerGrant() throws Exception {
        RedisServer server = server();
        LockProvider provider = open(server);
        Jedis admin = new Jedis(server.host(), server.port());
        toClose.add(admin);
        String lock = "contended";
        LeaseOptions options = LeaseOptions.of(Duration.ofSeconds(30)).withWaitTime(Duration.ofSeconds(30));
        provider.tryAcquire(lock, options).orElseThrow().release(); // scripts loaded, subscription up
        History history = new History();
        FencedRegister register = new FencedRegister(lock, history);
        int[] counter = {0}; // protected by the lock only
        long scriptsBefore = scriptCalls(admin);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                History.Recorder me = history.client("worker-" + t);
                workers.add(pool.submit(() -> {
                    for (int i = 0; i < GRANTS_EACH; i++) {
                        me.invoke(Op.ACQUIRE, lock);
                        Lease lease = provider.acquire(lock, options);
                        me.acquired(lease);
                        register.write(me.name(), lease.fencingToken().getAsLong());
                        me.invoke(Op.INCREMENT, "count");
                        counter[0]++;
                        me.ok(Op.INCREMENT, "count");
                        me.invoke(Op.RELEASE, lock);
                        if (lease.release()) {
                            me.ok(Op.RELEASE, lock);
                        } else {
                            me.fail(Op.RELEASE, lock);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> worker : workers) {
                worker.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        long scripts = scriptCalls(admin) - scriptsBefore;
        int grants = THREADS * GRANTS_EACH;
        long attempts = scripts - grants; // every grant was released by one script call
        System.out.printf(
                "%d threads, %d grants: %d script calls, %d acquire attempts, %.2f attempts per grant%n",
                THREADS, grants, scripts, attempts, (double) attempts / grants);
        history.client("checker").read("count", counter[0]);
        HistoryChecker.strict().check(history).assertValid();
        assertThat(register.rejected()).as("stale writes").isZero();
        assertThat(counter[0]).isEqualTo(grants);
        assertThat(attempts).as("acquire attempts at the server").isGreaterThanOrEqualTo(grants);
        assertThat(attempts * 2)
                .as("acquire attempts × 2 for %d grants", grants)
                .isLessThanOrEqualTo(3L * grants);
    }

    @Test
    @DisplayName("waiters of one process are granted in the order they started waiting")
    void localWaitersAreServedFirstComeFirstServed() throws Exception {
        LockProvider provider = open(server());
        LeaseOptions options = LeaseOptions.of(Duration.ofSeconds(30)).withWaitTime(Duration.ofSeconds(30));
        Lease holder = provider.acquire("fifo", options);
        List<Integer> order = new CopyOnWriteArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> waiters = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                int id = i;
                CountDownLatch started = new CountDownLatch(1);
                waiters.add(pool.submit(() -> {
                    started.countDown();
                    Lease lease = provider.acquire("fifo", options);
                    order.add(id);
                    lease.release();
                    return null;
                }));
                started.await();
                // The next waiter starts only once this one is queued: poll the thread dump for it.
                awaitWaitingThreads(pool, i + 1);
            }
            holder.release();
            for (Future<?> waiter : waiters) {
                waiter.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(order).containsExactly(0, 1, 2, 3);
    }

    @Test
    @DisplayName("a first waiter that times out leaves the queue; the one behind it takes the lock at the release")
    void aTimedOutFirstWaiterHandsItsPlaceOn() throws Exception {
        LockProvider provider = open(server());
        LeaseOptions longWait = LeaseOptions.of(Duration.ofSeconds(30)).withWaitTime(Duration.ofSeconds(30));
        Lease holder = provider.acquire("leave", longWait);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<java.util.Optional<Lease>> first = pool.submit(() -> provider.tryAcquire(
                    "leave", LeaseOptions.of(Duration.ofSeconds(30)).withWaitTime(Duration.ofMillis(1_000))));
            awaitWaitingThreads(pool, 1);
            Future<Lease> second = pool.submit(() -> provider.acquire("leave", longWait));
            awaitWaitingThreads(pool, 2);
            assertThat(first.get(10, TimeUnit.SECONDS))
                    .as("the first waiter, timed out")
                    .isEmpty();
            assertThat(second).as("the second waiter while the lock is held").isNotDone();
            holder.release();
            Lease next = second.get(10, TimeUnit.SECONDS);
            assertThat(next.isValid()).isTrue();
            assertThat(next.fencingToken().getAsLong())
                    .isGreaterThan(holder.fencingToken().getAsLong());
            assertThat(next.release()).isTrue();
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Waits until {@code n} threads are in an acquire's wait, after their queueing attempt: parked, or
     * (the provider's oldest waiter) blocked on its inbox, which a thread dump shows as running.
     */
    private static void awaitWaitingThreads(ExecutorService pool, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() - deadline < 0) {
            int parked = 0;
            for (var entry : Thread.getAllStackTraces().entrySet()) {
                for (StackTraceElement frame : entry.getValue()) {
                    if (frame.getClassName().endsWith(".RedisWaiter")
                            && frame.getMethodName().equals("await")) {
                        parked++;
                        break;
                    }
                }
            }
            if (parked >= n) {
                return;
            }
            Thread.sleep(2);
        }
        throw new AssertionError("fewer than " + n + " waiters queued within 10 s");
    }

    /** Calls of EVALSHA and EVAL the server has counted. */
    private static long scriptCalls(Jedis admin) {
        long calls = 0;
        for (String line : admin.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                String field = line.substring(line.indexOf("calls=") + 6);
                calls += Long.parseLong(field.substring(0, field.indexOf(',')));
            }
        }
        return calls;
    }
}
