package io.lockstep.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockRuntime;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.History;
import io.lockstep.tck.history.HistoryChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.Jedis;

/**
 * Many more callers than connections, on healthy nodes: a caller waits in line for a connection slot
 * instead of failing, and no release leaves a lock behind. (The review's finding: a fixed cap of 32
 * calls in flight per node failed at once, reported healthy nodes unreachable, and left locks behind.)
 */
@DisplayName("Redlock under more concurrent callers than connections")
class RedlockLoadTest {

    private static final int THREADS = 64;
    private static final Duration RUN = Duration.ofSeconds(3);
    private static final Duration TTL = Duration.ofSeconds(10);
    private static RedisNodes nodes;

    @BeforeAll
    static void startNodes() {
        nodes = RedisNodes.start(3);
    }

    @AfterAll
    static void stopNodes() {
        if (nodes != null) {
            nodes.close();
        }
    }

    @Test
    @DisplayName("64 threads each locking its own name: never unavailable, never busy, no key left behind")
    void callersWaitForASlotAndLeaveNothingBehind() throws Exception {
        History history = new History();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger acquired = new AtomicInteger();
        AtomicInteger unavailable = new AtomicInteger();
        AtomicInteger busy = new AtomicInteger();
        AtomicInteger notReleased = new AtomicInteger();
        List<String> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        // The default pools (32 connections per node) of a provider opened from a URI. The node timeout
        // is raised from the lease-derived default (250 ms for this TTL): what is tested is that a caller
        // waits in line for a slot (that wait is not counted against the timeout) instead of failing at
        // once, and 64 busy threads on a 2-core machine beside another test fork once kept a healthy
        // node's reply unread for over 250 ms. A stuck slot or a lost reply still fails the test.
        try (RedlockLockProvider provider = RedlockLockProvider.connect(
                nodes.addresses(),
                DefaultJedisClientConfig.builder().build(),
                RedlockOptions.defaults().withNodeTimeout(Duration.ofSeconds(2)),
                LockRuntime.defaults())) {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                String name = "job-" + t;
                History.Recorder me = history.client("worker-" + t);
                workers.add(pool.submit(() -> {
                    while (!stop.get()) {
                        me.invoke(Op.ACQUIRE, name);
                        Optional<Lease> got;
                        try {
                            got = provider.tryAcquire(name, LeaseOptions.of(TTL));
                        } catch (BackendUnavailableException e) {
                            me.unknown(Op.ACQUIRE, name);
                            unavailable.incrementAndGet();
                            failures.add(e.getMessage());
                            continue;
                        }
                        if (got.isEmpty()) {
                            me.fail(Op.ACQUIRE, name);
                            busy.incrementAndGet();
                            continue;
                        }
                        Lease lease = got.get();
                        me.acquired(lease);
                        acquired.incrementAndGet();
                        me.invoke(Op.RELEASE, name);
                        try {
                            if (lease.release()) {
                                me.ok(Op.RELEASE, name);
                            } else {
                                me.fail(Op.RELEASE, name);
                                notReleased.incrementAndGet();
                            }
                        } catch (BackendUnavailableException e) {
                            me.unknown(Op.RELEASE, name);
                            unavailable.incrementAndGet();
                            failures.add(e.getMessage());
                        }
                    }
                    return null;
                }));
            }
            Thread.sleep(RUN.toMillis());
            stop.set(true);
            for (Future<?> worker : workers) {
                worker.get(30, TimeUnit.SECONDS);
            }
            // Releases that did not answer in time are retried in the background: give them a moment.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            while (lockKeysLeft() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
        System.out.printf(
                "%d threads for %s: %d acquired, %d unavailable, %d busy, %d releases found nothing%n",
                THREADS, RUN, acquired.get(), unavailable.get(), busy.get(), notReleased.get());
        assertThat(unavailable.get())
                .as(
                        "calls that threw BackendUnavailableException, e.g. %s",
                        failures.stream().limit(3).toList())
                .isZero();
        assertThat(busy.get())
                .as("attempts that found the caller's own lock held")
                .isZero();
        assertThat(notReleased.get()).as("releases that found their lock gone").isZero();
        assertThat(lockKeysLeft()).as("lock keys left on the nodes").isZero();
        assertThat(acquired.get()).as("acquisitions").isGreaterThan(THREADS);
        HistoryChecker.strict().check(history).assertValid();
    }

    private static int lockKeysLeft() {
        int left = 0;
        for (int i = 0; i < nodes.size(); i++) {
            try (Jedis jedis = nodes.jedis(i)) {
                Set<String> keys = jedis.keys("job-*");
                left += (int) keys.stream().filter(k -> !k.endsWith("fence")).count();
            }
        }
        return left;
    }
}
