package io.lockstep.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.History;
import io.lockstep.tck.history.HistoryChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * Waiters pace themselves: a failed round's cleanup wakes nobody, and a lock found held is asked again
 * only after the retry delay. The scripts each node ran are counted from its {@code INFO commandstats}.
 * (The finding: a waiter against a holder on a bare quorum was granted by the third node every
 * round; the round's cleanup published a release notice; the waiter's own subscriber woke it at once:
 * about 3,900 rounds a second, and fence counters jumping by thousands.)
 */
@DisplayName("Redlock waiters against a held lock")
class RedlockWaiterTest {

    private static final Duration LONG = Duration.ofSeconds(30);
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

    @AfterEach
    void heal() {
        nodes.heal();
    }

    private static RedlockOptions options() {
        return RedlockOptions.defaults().withNodeTimeout(Duration.ofMillis(100));
    }

    @Test
    @DisplayName("a waiter against a holder on a bare quorum (the third node missed) does not spin")
    void waiterAgainstABareQuorumDoesNotSpin() throws Exception {
        try (RedisNodes.Client a = nodes.client(options());
                RedisNodes.Client w = nodes.client(options())) {
            Lease held = a.provider().tryAcquire("bare", LeaseOptions.of(LONG)).orElseThrow();
            // The grant returns once a quorum has it; the third write may still be on its way. Only once
            // every node has the key does deleting it on the third leave exactly a bare quorum.
            for (int i = 0; i < nodes.size(); i++) {
                assertThat(awaitKey(i, "bare"))
                        .as("the grant's key on node %d", i)
                        .isTrue();
            }
            try (Jedis third = nodes.jedis(2)) {
                third.del("bare"); // node 3 missed the grant: the holder keeps a bare quorum of two
            }
            long scriptsBefore = scripts(2);
            long fenceBefore = fence(2, "bare");
            Duration wait = Duration.ofSeconds(3);
            Optional<Lease> got =
                    w.provider().tryAcquire("bare", LeaseOptions.of(LONG).withWaitTime(wait));
            assertThat(got).as("the lock is held all along").isEmpty();
            long scripts = scripts(2) - scriptsBefore;
            long fences = fence(2, "bare") - fenceBefore;
            System.out.printf(
                    "bare quorum, waiter for %s: %d scripts on the third node, fence +%d%n", wait, scripts, fences);
            // At the default retry delay (50–100 ms between rounds), a round is an acquire and a cleanup.
            assertThat(scripts).as("scripts run on the third node in %s", wait).isLessThan(300);
            assertThat(fences).as("fence counter growth on the third node").isLessThan(150);
            assertThat(held.release()).isTrue();
        }
    }

    @Test
    @DisplayName("ten handovers among four waiters: fences nearly contiguous, scripts bounded, history valid")
    void handoversStayCalm() throws Exception {
        History history = new History();
        AtomicInteger handovers = new AtomicInteger();
        List<Long> fences = new java.util.concurrent.CopyOnWriteArrayList<>();
        long[] scriptsBefore = new long[nodes.size()];
        for (int i = 0; i < nodes.size(); i++) {
            scriptsBefore[i] = scripts(i);
        }
        List<RedisNodes.Client> clients = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> waiters = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                RedisNodes.Client client = nodes.client(options());
                clients.add(client);
                History.Recorder me = history.client("waiter-" + t);
                waiters.add(pool.submit(() -> {
                    while (handovers.get() < 10) {
                        me.invoke(Op.ACQUIRE, "handover");
                        Optional<Lease> got = client.provider()
                                .tryAcquire("handover", LeaseOptions.of(LONG).withWaitTime(Duration.ofSeconds(10)));
                        if (got.isEmpty()) {
                            me.fail(Op.ACQUIRE, "handover");
                            continue;
                        }
                        Lease lease = got.get();
                        me.acquired(lease);
                        fences.add(lease.fencingToken().getAsLong());
                        handovers.incrementAndGet();
                        Thread.sleep(50);
                        me.invoke(Op.RELEASE, "handover");
                        if (lease.release()) {
                            me.ok(Op.RELEASE, "handover");
                        } else {
                            me.fail(Op.RELEASE, "handover");
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> waiter : waiters) {
                waiter.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            clients.forEach(RedisNodes.Client::close);
        }
        HistoryChecker.strict().check(history).assertValid();
        List<Long> sorted = fences.stream().sorted().toList();
        long[] scriptsAfter = new long[nodes.size()];
        for (int i = 0; i < nodes.size(); i++) {
            scriptsAfter[i] = scripts(i) - scriptsBefore[i];
        }
        System.out.printf(
                "%d handovers among 4 waiters: fences %s, scripts per node %s%n",
                sorted.size(), sorted, java.util.Arrays.toString(scriptsAfter));
        assertThat(sorted.get(sorted.size() - 1) - sorted.get(0))
                .as("fence spread over %d handovers: %s", sorted.size(), sorted)
                .isLessThan(20L * sorted.size());
        for (int i = 0; i < nodes.size(); i++) {
            assertThat(scripts(i) - scriptsBefore[i])
                    .as("scripts on node %d for %d handovers", i, sorted.size())
                    .isLessThan(1_500);
        }
    }

    private static boolean awaitKey(int node, String key) throws InterruptedException {
        try (Jedis jedis = nodes.jedis(node)) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (!jedis.exists(key) && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            return jedis.exists(key);
        }
    }

    /** The scripts node {@code i} has run: EVALSHA and EVAL calls from its command statistics. */
    private static long scripts(int i) {
        try (Jedis jedis = nodes.jedis(i)) {
            long calls = 0;
            for (String line : jedis.info("commandstats").split("\r?\n")) {
                if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                    String stats = line.substring(line.indexOf(':') + 1);
                    for (String field : stats.split(",")) {
                        if (field.startsWith("calls=")) {
                            calls += Long.parseLong(field.substring("calls=".length()));
                        }
                    }
                }
            }
            return calls;
        }
    }

    private static long fence(int i, String name) {
        try (Jedis jedis = nodes.jedis(i)) {
            String value = jedis.get(name + "\u0000fence");
            return value == null ? 0 : Long.parseLong(value);
        }
    }
}
