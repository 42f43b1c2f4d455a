package io.lockstep.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Issue 12: the fan-out's threads are bounded by the nodes' in-flight slots plus two retry threads and
 * a timer, whatever the load and however many nodes are slow; counted by name while 8 callers work
 * against three nodes, one of them paused.
 */
@DisplayName("Redlock fan-out threads stay bounded with a paused node")
class RedlockThreadBoundsTest {

    private static final int MAX_IN_FLIGHT = 4;
    private static final int NODES = 3;
    /** Workers (one per slot), two retry threads and the timer; release subscribers are not counted. */
    private static final int BOUND = NODES * MAX_IN_FLIGHT + 2 + 1;
    /**
     * A zero wait: one attempt each, so every one of the 400 must reach a quorum of the two healthy nodes
     * the first time. A caller in line for the paused node's slots holds none of the healthy nodes' slots
     * meanwhile (see {@link RedlockSlotLineTest}).
     */
    private static final LeaseOptions ACQUIRE = LeaseOptions.of(Duration.ofSeconds(30));

    @Test
    @DisplayName(
            "8 callers acquiring and releasing 400 locks with one of three nodes paused use at most slots + 3 fan-out threads")
    void aPausedNodeDoesNotGrowFanOutThreads() throws Exception {
        try (RedisNodes nodes = RedisNodes.start(NODES);
                RedisNodes.Client client = nodes.client(RedlockOptions.defaults()
                        // Seconds: the healthy nodes must answer every call in time on a busy machine (100 ms
                        // failed a release there); the paused node's calls hold its slots either way.
                        .withNodeTimeout(Duration.ofSeconds(1))
                        .withMaxInFlight(MAX_IN_FLIGHT))) {
            client.provider()
                    .tryAcquire("warm", LeaseOptions.of(Duration.ofSeconds(30)))
                    .orElseThrow()
                    .release();
            nodes.pause(2);
            AtomicBoolean sampling = new AtomicBoolean(true);
            AtomicInteger peak = new AtomicInteger();
            Thread sampler = new Thread(() -> {
                while (sampling.get()) {
                    peak.accumulateAndGet(fanOutThreads(), Math::max);
                    try {
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            sampler.start();
            ExecutorService callers = Executors.newFixedThreadPool(8);
            AtomicInteger granted = new AtomicInteger();
            try {
                List<Future<?>> work = new ArrayList<>();
                for (int c = 0; c < 8; c++) {
                    int caller = c;
                    work.add(callers.submit(() -> {
                        for (int i = 0; i < 50; i++) {
                            Lease lease = client.provider()
                                    .tryAcquire("t-" + caller + "-" + i, ACQUIRE)
                                    .orElseThrow();
                            granted.incrementAndGet();
                            lease.release();
                        }
                        return null;
                    }));
                }
                for (Future<?> f : work) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                callers.shutdownNow();
                sampling.set(false);
                sampler.join(1_000);
                nodes.resume(2);
            }
            assertThat(granted.get()).isEqualTo(400);
            assertThat(peak.get()).as("fan-out threads alive at once").isBetween(1, BOUND);
        }
    }

    private static int fanOutThreads() {
        int count = 0;
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            String name = thread.getName();
            if (name.startsWith("lockstep-redlock-") && !name.startsWith("lockstep-redlock-notify-")) {
                count++;
            }
        }
        return count;
    }
}
