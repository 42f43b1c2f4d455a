package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.LossReason;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.FencedRegister;
import io.lockstep.tck.history.History;
import io.lockstep.tck.history.HistoryChecker;
import io.lockstep.tck.servers.RedisClusterSetup;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Protocol;

/**
 * SIGKILLs the cluster primary holding some locks and counts, with the history checker, how often a
 * second holder gets in after its replica takes over, as {@link RedisSentinelFailoverTest} does for
 * Sentinel: {@link #LOCKS} locks taken while the shard's replica was in sync, and {@link #LOCKS} while it
 * lagged (paused, its link dropped: the writes lived on the primary only). One cluster for the class: after
 * each failover the killed node is restarted and rejoins as the new primary's replica. The figures are
 * printed as {@code CLUSTER-FAILOVER-FIGURES} lines and reported in the module README.
 */
@DisplayName("A Redis Cluster failover while locks are held")
class RedisClusterFailoverTest {

    private static final int LOCKS = 5;
    private static final Duration LEASE = Duration.ofSeconds(60);
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private static RedisClusterSetup cluster;

    @BeforeAll
    static void startCluster() {
        cluster = RedisClusterSetup.start();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** What one failover did. */
    record Figures(
            int waitReplicas,
            int grantedInSync,
            int grantedLagging,
            int failedClosed,
            int secondHoldersInSync,
            int secondHoldersLagging,
            long overlapsSeen,
            long fencesNotIncreasing,
            long staleWritesAccepted,
            int lateWritesAccepted,
            int lossesReportedBeforeExtend,
            int extendsRefused,
            int leasesExtendedAfterFailover) {}

    @Test
    @DisplayName("without waitReplicas, locks taken while the replica lags get a second holder and repeated"
            + " fences; the holder learns it only when it next extends")
    void withoutReplicaAcknowledgementLaggingLocksAreLost() {
        Figures f = failover(0);
        System.out.println("CLUSTER-FAILOVER-FIGURES " + f);
        assertThat(f.grantedInSync()).isEqualTo(LOCKS);
        assertThat(f.grantedLagging()).isEqualTo(LOCKS);
        assertThat(f.secondHoldersInSync())
                .as("replicated locks survive the failover")
                .isZero();
        assertThat(f.secondHoldersLagging())
                .as("a lock that lived only on the lost primary is free on the promoted replica")
                .isEqualTo(LOCKS);
        assertThat(f.overlapsSeen()).isEqualTo(LOCKS);
        assertThat(f.fencesNotIncreasing())
                .as("the fence counter lived only on the lost primary")
                .isEqualTo(LOCKS);
        assertThat(f.lateWritesAccepted()).isEqualTo(LOCKS);
        assertThat(f.lossesReportedBeforeExtend())
                .as("a cluster has no failover signal: nothing tells the holder before its next extend")
                .isZero();
        assertThat(f.extendsRefused()).as("the next extend finds the lock gone").isEqualTo(LOCKS);
        assertThat(f.leasesExtendedAfterFailover())
                .as("replicated leases live on")
                .isEqualTo(LOCKS);
    }

    @Test
    @DisplayName("with waitReplicas=1, locks are granted only when the replica has them: no second holder,"
            + " fences keep increasing, and the leases live on once the shard has a replica again")
    void withReplicaAcknowledgementNoSecondHolderGetsIn() {
        Figures f = failover(1);
        System.out.println("CLUSTER-FAILOVER-FIGURES " + f);
        assertThat(f.grantedInSync()).isEqualTo(LOCKS);
        assertThat(f.grantedLagging())
                .as("no replica could acknowledge: fail closed")
                .isZero();
        assertThat(f.failedClosed()).isEqualTo(LOCKS);
        assertThat(f.overlapsSeen()).isZero();
        assertThat(f.fencesNotIncreasing()).isZero();
        assertThat(f.staleWritesAccepted()).isZero();
        assertThat(f.lateWritesAccepted()).isZero();
        assertThat(f.lossesReportedBeforeExtend()).isZero();
        assertThat(f.extendsRefused()).isZero();
        assertThat(f.leasesExtendedAfterFailover()).isEqualTo(LOCKS);
    }

    private Figures failover(int waitReplicas) {
        History history = new History();
        History.Recorder holder = history.client("holder");
        History.Recorder second = history.client("second");
        Map<String, FencedRegister> registers = new HashMap<>();
        Map<String, Lease> held = new HashMap<>();
        AtomicInteger losses = new AtomicInteger();
        int failedClosed = 0;
        String options =
                waitReplicas == 0 ? "?timeout=1s" : "?timeout=1s&waitReplicas=" + waitReplicas + "&waitTimeout=200ms";
        try (LockProvider holderLocks = Locks.open(cluster.uri() + options);
                LockProvider secondLocks = Locks.open(cluster.uri() + "?timeout=1s")) {
            RedisServer victim = cluster.primaryFor("lockstep:{fo" + waitReplicas + "}");
            RedisServer replica = cluster.replicaOf(victim);
            List<String> inSync = namesOn(victim, "fo" + waitReplicas + "-in-sync");
            List<String> lagging = namesOn(victim, "fo" + waitReplicas + "-lagging");
            for (String name : inSync) {
                take(holderLocks, holder, name, held, registers, history, losses);
            }
            awaitReplicated(victim, replica);
            replica.pause();
            try (Jedis primary = new Jedis(victim.host(), victim.port())) {
                // The replica cannot reconnect while stopped: what follows reaches the primary only.
                primary.sendCommand(Protocol.Command.CLIENT, "KILL", "TYPE", "replica");
                for (String name : lagging) {
                    if (!take(holderLocks, holder, name, held, registers, history, losses)) {
                        failedClosed++;
                        assertThat(primary.exists("lockstep:{" + name + "}"))
                                .as("a write no replica acknowledged is taken back")
                                .isFalse();
                    }
                }
            }
            victim.kill();
            replica.resume();
            cluster.awaitPromoted(replica, DEADLINE);

            Set<String> secondHolders = new HashSet<>();
            int secondInSync = 0;
            int secondLagging = 0;
            for (String name : concat(inSync, lagging)) {
                second.invoke(Op.ACQUIRE, name);
                Optional<Lease> lease = retrying(() -> secondLocks.tryAcquire(name, LeaseOptions.of(LEASE)));
                if (lease.isEmpty()) {
                    second.fail(Op.ACQUIRE, name);
                    continue;
                }
                second.acquired(lease.get());
                registers.get(name).write("second", lease.get().fencingToken().getAsLong());
                secondHolders.add(name);
                if (inSync.contains(name)) {
                    secondInSync++;
                } else {
                    secondLagging++;
                }
            }
            // The first holder, unaware, writes late with its fence; with a repeated fence the register cannot
            // tell it from the second holder.
            int lateAccepted = 0;
            for (Map.Entry<String, Lease> e : held.entrySet()) {
                boolean secondWrote = secondHolders.contains(e.getKey());
                if (registers
                                .get(e.getKey())
                                .write("holder", e.getValue().fencingToken().getAsLong())
                        && secondWrote) {
                    lateAccepted++;
                }
            }
            int lossesBeforeExtend = losses.get();
            // The killed node comes back as the promoted replica's replica, so WAIT 1 can be answered again.
            victim.restart();
            cluster.awaitHealthy(DEADLINE);
            int extended = 0;
            int refused = 0;
            for (Map.Entry<String, Lease> e : held.entrySet()) {
                if (retrying(() -> e.getValue().extend(LEASE))) {
                    extended++;
                } else {
                    refused++;
                }
            }
            HistoryChecker.Report report = HistoryChecker.strict().check(history);
            return new Figures(
                    waitReplicas,
                    (int) inSync.stream().filter(held::containsKey).count(),
                    (int) lagging.stream().filter(held::containsKey).count(),
                    failedClosed,
                    secondInSync,
                    secondLagging,
                    count(report, HistoryChecker.Rule.OVERLAPPING_HOLDS),
                    count(report, HistoryChecker.Rule.FENCE_NOT_INCREASING),
                    count(report, HistoryChecker.Rule.STALE_WRITE_ACCEPTED),
                    lateAccepted,
                    lossesBeforeExtend,
                    refused,
                    extended);
        }
    }

    /** {@link #LOCKS} names {@code prefix-<i>} whose slots {@code primary} serves. */
    private static List<String> namesOn(RedisServer primary, String prefix) {
        List<String> names = new ArrayList<>();
        for (int i = 0; names.size() < LOCKS; i++) {
            String name = prefix + "-" + i;
            if (cluster.primaryFor("lockstep:{" + name + "}") == primary) {
                names.add(name);
            }
        }
        return names;
    }

    /** Polls until the replica's offset reached the primary's: the in-sync locks are on both. */
    private static void awaitReplicated(RedisServer primary, RedisServer replica) {
        try (Jedis p = new Jedis(primary.host(), primary.port());
                Jedis r = new Jedis(replica.host(), replica.port())) {
            long target = offset(p.info("replication"), "master_repl_offset");
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (offset(r.info("replication"), "slave_repl_offset") < target) {
                assertThat(System.nanoTime() - deadline)
                        .as("the replica catching up")
                        .isNegative();
                pause();
            }
        }
    }

    private static long offset(String info, String field) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.substring(field.length() + 1).strip());
            }
        }
        return -1;
    }

    private static boolean take(
            LockProvider locks,
            History.Recorder client,
            String name,
            Map<String, Lease> held,
            Map<String, FencedRegister> registers,
            History history,
            AtomicInteger losses) {
        registers.computeIfAbsent(name, n -> new FencedRegister(n, history));
        client.invoke(Op.ACQUIRE, name);
        try {
            Lease lease = locks.tryAcquire(name, LeaseOptions.of(LEASE)).orElseThrow();
            client.acquired(lease);
            held.put(name, lease);
            lease.lost().thenAccept(reason -> {
                if (reason == LossReason.NOT_HELD) {
                    losses.incrementAndGet();
                }
            });
            registers.get(name).write(client.name(), lease.fencingToken().getAsLong());
            return true;
        } catch (BackendUnavailableException e) {
            client.unknown(Op.ACQUIRE, name);
            assertThat(e).hasMessageContaining("waitReplicas");
            return false;
        }
    }

    private static long count(HistoryChecker.Report report, HistoryChecker.Rule rule) {
        return report.violations().stream().filter(v -> v.rule() == rule).count();
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    /** Retries a call that fails while the client still looks for the new primary, within the deadline. */
    private static <T> T retrying(Supplier<T> call) {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (true) {
            try {
                return call.get();
            } catch (BackendUnavailableException e) {
                if (System.nanoTime() - deadline > 0) {
                    throw e;
                }
                pause();
            }
        }
    }

    private static void pause() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
