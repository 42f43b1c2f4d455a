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
        // The holder is given seconds per node so that a busy machine cannot fail its grant outright.
        try (RedisNodes.Client a = nodes.client(RedlockOptions.defaults().withNodeTimeout(Duration.ofSeconds(2)));
                RedisNodes.Client w = nodes.client(options())) {
            Lease held = a.provider().tryAcquire("bare", LeaseOptions.of(LONG)).orElseThrow();
            // The grant returns once a quorum has it; the third write may still be on its way, or may have
            // missed its node timeout and never land. Either way, leave exactly a bare quorum of two: if
            // every node has the key, delete it on one; if one never got it, that one is the missed node.
            List<Integer> holding = nodesHolding("bare");
            assertThat(holding).as("nodes holding the grant's key").hasSizeGreaterThanOrEqualTo(2);
            int missed = holding.size() == nodes.size() ? nodes.size() - 1 : missingFrom(holding);
            try (Jedis node = nodes.jedis(missed)) {
                node.del("bare"); // this node missed the grant: the holder keeps a bare quorum of two
            }
            long scriptsBefore = scripts(missed);
            long fenceBefore = fence(missed, "bare");
            Duration wait = Duration.ofSeconds(3);
            Optional<Lease> got =
                    w.provider().tryAcquire("bare", LeaseOptions.of(LONG).withWaitTime(wait));
            assertThat(got).as("the lock is held all along").isEmpty();
            long scripts = scripts(missed) - scriptsBefore;
            long fences = fence(missed, "bare") - fenceBefore;
            System.out.printf(
                    "bare quorum, waiter for %s: %d scripts on the missed node %d, fence +%d%n",
                    wait, scripts, missed, fences);
            // At the default retry delay (50–100 ms between rounds), a round is an acquire and a cleanup.
            assertThat(scripts).as("scripts run on the missed node in %s", wait).isLessThan(300);
            assertThat(fences).as("fence counter growth on the missed node").isLessThan(150);
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

    /** The nodes that hold {@code key}, waiting (up to 5 s) for writes still on their way to every node. */
    private static List<Integer> nodesHolding(String key) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        List<Integer> holding = new ArrayList<>();
        do {
            holding.clear();
            for (int i = 0; i < nodes.size(); i++) {
                try (Jedis jedis = nodes.jedis(i)) {
                    if (jedis.exists(key)) {
                        holding.add(i);
                    }
                }
            }
            if (holding.size() == nodes.size()) {
                break;
            }
            Thread.sleep(10);
        } while (System.nanoTime() < deadline);
        return holding;
    }

    private static int missingFrom(List<Integer> holding) {
        for (int i = 0; i < nodes.size(); i++) {
            if (!holding.contains(i)) {
                return i;
            }
        }
        throw new IllegalArgumentException("every node holds the key: " + holding);
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
