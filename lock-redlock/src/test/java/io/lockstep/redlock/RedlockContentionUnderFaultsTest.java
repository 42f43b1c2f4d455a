package io.lockstep.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.FencedRegister;
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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Six threads on three clients contend for one lock while a minority of the five nodes is paused,
 * killed and restarted under them. Every event is recorded and the history checked: no overlapping
 * holds, strictly increasing fences (a restarted node is quarantined by every client that knew it), no
 * stale write accepted by a fenced register, and an exact counter.
 */
@DisplayName("Redlock contention while a minority of nodes fails")
class RedlockContentionUnderFaultsTest {

    private static RedisNodes nodes;

    @BeforeAll
    static void startNodes() {
        nodes = RedisNodes.start(5);
    }

    @AfterAll
    static void stopNodes() {
        if (nodes != null) {
            nodes.close();
        }
    }

    @Test
    @DisplayName("no overlapping holds, increasing fences, no stale write and an exact count under minority faults")
    void historyStaysValidUnderMinorityFaults() throws Exception {
        String lock = "contended";
        Duration ttl = Duration.ofMillis(1000);
        RedlockOptions options = RedlockOptions.defaults()
                .withNodeTimeout(Duration.ofMillis(50))
                .withRetryDelay(Duration.ofMillis(20))
                .withMaxLeaseTime(ttl.multipliedBy(2));
        List<RedisNodes.Client> clients = List.of(nodes.client(options), nodes.client(options), nodes.client(options));
        History history = new History();
        FencedRegister register = new FencedRegister(lock, history);
        int[] counter = {0}; // protected by the lock only
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger acquired = new AtomicInteger();
        AtomicInteger unavailable = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                RedisNodes.Client client = clients.get(t % clients.size());
                History.Recorder me = history.client("worker-" + t);
                workers.add(pool.submit(() -> {
                    while (!stop.get()) {
                        me.invoke(Op.ACQUIRE, lock);
                        Optional<Lease> got;
                        try {
                            got = client.provider()
                                    .tryAcquire(lock, LeaseOptions.of(ttl).withWaitTime(ttl.multipliedBy(3)));
                        } catch (BackendUnavailableException e) {
                            me.unknown(Op.ACQUIRE, lock);
                            unavailable.incrementAndGet();
                            continue;
                        }
                        if (got.isEmpty()) {
                            me.fail(Op.ACQUIRE, lock);
                            continue;
                        }
                        Lease lease = got.get();
                        me.acquired(lease);
                        acquired.incrementAndGet();
                        register.write(me.name(), lease.fencingToken().getAsLong());
                        me.invoke(Op.INCREMENT, "count");
                        counter[0]++;
                        me.ok(Op.INCREMENT, "count");
                        me.release(lease);
                    }
                    return null;
                }));
            }
            // Faults: never more than two nodes out at once, counting a quarantined one.
            pauseFor(0, 300);
            nodes.kill(1);
            Thread.sleep(200);
            nodes.restart(1); // quarantined for 2 s by every client that knew it
            pauseFor(3, 300);
            Thread.sleep(ttl.multipliedBy(2).toMillis());
            nodes.pause(0);
            nodes.pause(4);
            Thread.sleep(300);
            nodes.resume(0);
            nodes.resume(4);
            Thread.sleep(500);
            // The faults have run; the workers go on until the history has enough holds to judge (on an
            // idle machine it has by now), so a CPU-starved run is not failed for being slow.
            long enoughBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (acquired.get() <= 20 && System.nanoTime() - enoughBy < 0) {
                Thread.sleep(50);
            }
            stop.set(true);
            for (Future<?> worker : workers) {
                worker.get(30, TimeUnit.SECONDS);
            }
        } finally {
            stop.set(true);
            pool.shutdownNow();
            clients.forEach(RedisNodes.Client::close);
            nodes.heal();
        }
        history.client("checker").read("count", counter[0]);
        HistoryChecker.strict()
                .leftoverAllowance(ttl, ttl.plusMillis(500))
                .check(history)
                .assertValid();
        assertThat(acquired.get())
                .as("acquisitions (%d unavailable)", unavailable.get())
                .isGreaterThan(20);
        assertThat(register.rejected()).as("stale writes").isZero();
        assertThat(counter[0]).isEqualTo(acquired.get());
    }

    private static void pauseFor(int node, long millis) throws InterruptedException {
        nodes.pause(node);
        Thread.sleep(millis);
        nodes.resume(node);
    }
}
