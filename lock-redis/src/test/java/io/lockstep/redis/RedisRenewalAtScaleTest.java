package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.Locks;
import io.lockstep.LossReason;
import io.lockstep.tck.CountingMetrics;
import io.lockstep.tck.Timing;
import io.lockstep.tck.servers.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * Issue 12: 10,000 auto-renewed leases on one real redis-server. Renewals due together go to the
 * server as one script, counted at the server ({@code INFO commandstats}); the renewal threads stay
 * bounded, counted by name while the leases renew.
 */
@DisplayName("lock-redis: renewal of 10,000 leases")
class RedisRenewalAtScaleTest {

    private static final int LEASES = 10_000;

    private final Timing timing = Timing.fromSystemProperty();
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

    @Test
    @DisplayName(
            "10,000 leases are renewed in batches: one script call per at least 20 renewals, at most 16 renewal threads")
    void tenThousandLeasesRenewInBatchesOnBoundedThreads() throws Exception {
        RedisServer server = RedisServer.start();
        toClose.add(server);
        CountingMetrics counts = new CountingMetrics();
        LockRuntime runtime = LockRuntime.builder().metrics(counts).build();
        LockProvider provider = Locks.open(LockConfig.of(server.uri()).withRuntime(runtime));
        toClose.add(provider);
        Jedis admin = new Jedis(server.host(), server.port());
        toClose.add(admin);

        ThreadCounter threads = new ThreadCounter();
        toClose.add(threads);
        threads.start();

        LeaseOptions options = LeaseOptions.of(timing.millis(3_000)).withAutoRenew();
        List<Lease> leases = new ArrayList<>(LEASES);
        for (int i = 0; i < LEASES; i++) {
            leases.add(provider.tryAcquire("renewed-" + i, options).orElseThrow());
        }

        long scriptsBefore = scriptCalls(admin);
        long renewedBefore = counts.renewals();
        // Every lease renews at a third of its lease time: wait for two rounds of all of them.
        long deadline = System.nanoTime() + timing.millis(30_000).toNanos();
        while (counts.renewals() - renewedBefore < 2L * LEASES && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
        }
        long renewals = counts.renewals() - renewedBefore;
        long scripts = scriptCalls(admin) - scriptsBefore;

        System.out.printf(
                "%d leases: %d renewals in %d script calls at the server; peak %d renewal threads, %d lockstep threads%n",
                LEASES, renewals, scripts, threads.peakRenewalThreads(), threads.peakLockstepThreads());
        assertThat(renewals).as("renewals within the deadline").isGreaterThanOrEqualTo(2L * LEASES);
        assertThat(scripts)
                .as("script calls at the server for %d renewals", renewals)
                .isPositive();
        assertThat(scripts * 20).as("script calls × 20 (%d renewals)", renewals).isLessThanOrEqualTo(renewals);
        assertThat(counts.losses()).as("leases lost").isZero();
        assertThat(counts.renewalFailures()).as("renewals failed").isZero();
        assertThat(leases).allMatch(Lease::isValid, "valid");
        assertThat(threads.peakRenewalThreads())
                .as("renewal threads alive at once")
                .isBetween(1, LockRuntime.DEFAULT_RENEWAL_THREADS);
        assertThat(threads.peakLockstepThreads())
                .as("Lockstep threads alive at once")
                .isLessThanOrEqualTo(LockRuntime.DEFAULT_RENEWAL_THREADS + LockRuntime.DEFAULT_CALLBACK_THREADS + 8);

        for (Lease lease : leases) {
            assertThat(lease.release()).isTrue();
        }
        assertThat(admin.dbSize()).as("keys left: only the fence counters").isEqualTo(LEASES);
    }

    @Test
    @DisplayName(
            "a batched renewal loses exactly the lease whose key was taken over, with NOT_HELD; the others stay held")
    void aBatchLosesOnlyTheLeaseWhoseKeyWasTaken() throws Exception {
        RedisServer server = RedisServer.start();
        toClose.add(server);
        CountingMetrics counts = new CountingMetrics();
        LockProvider provider = Locks.open(LockConfig.of(server.uri())
                .withRuntime(LockRuntime.builder().metrics(counts).build()));
        toClose.add(provider);
        Jedis admin = new Jedis(server.host(), server.port());
        toClose.add(admin);
        LeaseOptions options = LeaseOptions.of(timing.millis(1_500)).withAutoRenew();
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            leases.add(provider.tryAcquire("batch-" + i, options).orElseThrow());
        }
        long scriptsBefore = scriptCalls(admin);
        // Another owner holds lease 17's key now, as after an expiry on the server and a new grant.
        admin.set("lockstep:{batch-17}", "someone-else");
        Lease taken = leases.get(17);
        assertThat(taken.lost().toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo(LossReason.NOT_HELD);
        long deadline = System.nanoTime() + timing.millis(10_000).toNanos();
        while (counts.renewals() < 2L * 49 && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
        }
        assertThat(counts.renewals()).as("renewals of the other leases").isGreaterThanOrEqualTo(2L * 49);
        assertThat(scriptCalls(admin) - scriptsBefore)
                .as("script calls for %d renewals", counts.renewals())
                .isLessThan(counts.renewals());
        assertThat(admin.get("lockstep:{batch-17}")).as("the new owner's key").isEqualTo("someone-else");
        for (Lease lease : leases) {
            if (lease != taken) {
                assertThat(lease.lost().toCompletableFuture()).as(lease.name()).isNotDone();
                assertThat(lease.isValid()).as(lease.name()).isTrue();
            }
        }
        assertThat(counts.losses()).as("leases lost").isEqualTo(1);
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

    /** Samples the threads named {@code lockstep-*} every 10 ms and keeps the peaks. */
    private static final class ThreadCounter extends Thread implements AutoCloseable {
        private final AtomicInteger peakRenewal = new AtomicInteger();
        private final AtomicInteger peakLockstep = new AtomicInteger();
        private volatile boolean stop;

        ThreadCounter() {
            super("thread-counter");
            setDaemon(true);
        }

        @Override
        public void run() {
            while (!stop) {
                int renewal = 0;
                int lockstep = 0;
                for (Thread thread : Thread.getAllStackTraces().keySet()) {
                    String name = thread.getName();
                    if (name.startsWith("lockstep-renewal-")) {
                        renewal++;
                    }
                    if (name.startsWith("lockstep-")) {
                        lockstep++;
                    }
                }
                peakRenewal.accumulateAndGet(renewal, Math::max);
                peakLockstep.accumulateAndGet(lockstep, Math::max);
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        int peakRenewalThreads() {
            return peakRenewal.get();
        }

        int peakLockstepThreads() {
            return peakLockstep.get();
        }

        @Override
        public void close() throws InterruptedException {
            stop = true;
            interrupt();
            join(1_000);
        }
    }
}
