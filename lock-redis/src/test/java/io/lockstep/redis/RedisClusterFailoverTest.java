package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.tck.servers.RedisClusterSetup;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * SIGKILLs the cluster primary holding some locks and counts, with the history checker, how often a
 * second holder gets in after its replica takes over: the {@link FailoverProcedure} that {@link
 * RedisSentinelFailoverTest} runs on Sentinel, here with the shard's one replica. One cluster for the
 * class: after each failover the killed node is restarted and rejoins as the new primary's replica.
 * Nothing tells a cluster client of a failover, so the holder learns of a lost lock only when it next
 * extends. The figures are printed as {@code CLUSTER-FAILOVER-FIGURES} lines and reported in the module
 * README.
 */
@DisplayName("A Redis Cluster failover while locks are held")
class RedisClusterFailoverTest {

    private static final int LOCKS = FailoverProcedure.LOCKS;
    private static final Duration DEADLINE = FailoverProcedure.DEADLINE;

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

    @Test
    @DisplayName("without waitReplicas, locks taken while the replica lags get a second holder and repeated"
            + " fences; the holder learns it only when it next extends")
    void withoutReplicaAcknowledgementLaggingLocksAreLost() {
        FailoverProcedure.Figures f = failover(0);
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
        assertThat(f.lossesReported())
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
        FailoverProcedure.Figures f = failover(1);
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
        assertThat(f.lossesReported()).isZero();
        assertThat(f.extendsRefused()).isZero();
        assertThat(f.leasesExtendedAfterFailover()).isEqualTo(LOCKS);
    }

    private FailoverProcedure.Figures failover(int waitReplicas) {
        RedisServer victim = cluster.primaryFor("lockstep:{fo" + waitReplicas + "}");
        RedisServer replica = cluster.replicaOf(victim);
        return FailoverProcedure.run(
                new FailoverProcedure.Topology(
                        cluster.uri(),
                        victim,
                        List.of(replica),
                        namesOn(victim, "fo" + waitReplicas + "-in-sync"),
                        namesOn(victim, "fo" + waitReplicas + "-lagging"),
                        () -> cluster.awaitPromoted(replica, DEADLINE),
                        held -> {
                            // Nothing tells a cluster client of the failover: count what it learned before
                            // extending. The killed node comes back as the promoted replica's replica, so
                            // WAIT 1 can be answered again.
                            int lossesBeforeExtend = held.losses().get();
                            victim.restart();
                            cluster.awaitHealthy(DEADLINE);
                            return FailoverProcedure.extendAll(held.leases().values(), lossesBeforeExtend);
                        }),
                waitReplicas);
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
}
