package io.lockstep.redis;

import static io.lockstep.redis.FailoverProcedure.poll;
import static io.lockstep.redis.FailoverProcedure.retrying;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockTimeoutException;
import io.lockstep.Locks;
import io.lockstep.tck.servers.RedisSentinelSetup;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * Kills the primary of a Sentinel setup while locks are held and counts, with the history checker, how
 * often a second holder gets in after the failover ({@link FailoverProcedure}, which {@link
 * RedisClusterFailoverTest} runs on a cluster). Two kinds of lock: taken while the replicas were in
 * sync, and taken while they lagged (the replicas were stopped and the primary dropped its replica links,
 * so those writes lived on the primary only, as asynchronous replication allows). Bounded: {@link #LOCKS}
 * locks of each kind, one failover per test; the figures are printed as {@code FAILOVER-FIGURES} lines and
 * reported in the module README.
 */
@DisplayName("A Sentinel failover while locks are held")
class RedisSentinelFailoverTest {

    private static final int LOCKS = FailoverProcedure.LOCKS;
    private static final Duration DEADLINE = FailoverProcedure.DEADLINE;

    @Test
    @DisplayName("without waitReplicas, locks taken while replicas lag get a second holder and repeated fences;"
            + " every lease of the old primary is reported lost")
    void withoutReplicaAcknowledgementLaggingLocksAreLostAndReported() {
        FailoverProcedure.Figures f = failover(0);
        print(f);
        assertThat(f.grantedInSync()).isEqualTo(LOCKS);
        assertThat(f.grantedLagging()).isEqualTo(LOCKS);
        assertThat(f.secondHoldersInSync())
                .as("replicated locks survive the failover")
                .isZero();
        assertThat(f.secondHoldersLagging())
                .as("a lock that lived only on the lost primary is free on the new one")
                .isEqualTo(LOCKS);
        assertThat(f.overlapsSeen()).isEqualTo(LOCKS);
        assertThat(f.fencesNotIncreasing())
                .as("the fence counter lived only on the lost primary")
                .isEqualTo(LOCKS);
        assertThat(f.lateWritesAccepted())
                .as("with a repeated fence the register cannot tell the stale holder from the new one")
                .isEqualTo(LOCKS);
        assertThat(f.lossesReported())
                .as("the provider reports every lease granted by the old primary lost")
                .isEqualTo(2 * LOCKS);
    }

    @Test
    @DisplayName("with waitReplicas=1, locks are granted only when a replica has them: no second holder, fences"
            + " keep increasing, and the leases live on after the failover")
    void withReplicaAcknowledgementNoSecondHolderGetsIn() {
        FailoverProcedure.Figures f = failover(1);
        print(f);
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

    @Test
    @DisplayName("release notifications follow the failover: the subscription moves to the new primary and a"
            + " waiter there is handed the lock")
    void releaseNotificationsFollowTheFailover() throws Exception {
        try (RedisSentinelSetup redis = RedisSentinelSetup.start();
                LockProvider holder = Locks.open(redis.uri() + "?timeout=1s");
                LockProvider waiter = Locks.open(redis.uri() + "?timeout=1s")) {
            String name = "notice";
            try (Lease held = holder.acquire(name, LeaseOptions.of(Duration.ofSeconds(5)))) {
                // A wait that times out starts the waiter's release subscription on the first primary.
                assertThatThrownBy(() -> waiter.acquire(
                                name, LeaseOptions.of(Duration.ofSeconds(5)).withWaitTime(Duration.ofMillis(200))))
                        .isInstanceOf(LockTimeoutException.class);
                assertThat(held.isValid()).isTrue();
            }
            RedisServer old = redis.primary();
            poll("the waiter subscribed on the first primary", () -> subscribers(old) > 0);
            old.kill();
            RedisServer now = redis.awaitFailover(old, DEADLINE);
            poll("the waiter's subscription on the new primary", () -> subscribers(now) > 0);

            Lease first = retrying(() -> holder.tryAcquire(name + "-2", LeaseOptions.of(Duration.ofSeconds(30))))
                    .orElseThrow();
            CompletableFuture<Lease> handedOver = CompletableFuture.supplyAsync(() -> waiter.acquire(
                    name + "-2", LeaseOptions.of(Duration.ofSeconds(30)).withWaitTime(DEADLINE)));
            poll("the waiter waiting", () -> subscribers(now) > 0);
            first.release();
            Lease second = handedOver.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
            assertThat(second.fencingToken().getAsLong())
                    .isGreaterThan(first.fencingToken().getAsLong());
            second.release();
        }
    }

    private FailoverProcedure.Figures failover(int waitReplicas) {
        try (RedisSentinelSetup redis = RedisSentinelSetup.start()) {
            RedisServer old = redis.primary();
            List<String> inSync = names("in-sync");
            return FailoverProcedure.run(
                    new FailoverProcedure.Topology(
                            redis.uri(),
                            old,
                            redis.replicas(),
                            inSync,
                            names("lagging"),
                            () -> redis.awaitFailover(old, DEADLINE),
                            held -> {
                                if (waitReplicas == 0) {
                                    // Sentinel announces the switch: the provider reports every lease lost.
                                    poll(
                                            "every lease of the old primary reported lost",
                                            () -> held.losses().get()
                                                    == held.leases().size());
                                    return new FailoverProcedure.Aftermath(
                                            held.losses().get(), 0, 0);
                                }
                                return FailoverProcedure.extendAll(
                                        inSync.stream()
                                                .map(held.leases()::get)
                                                .filter(Objects::nonNull)
                                                .toList(),
                                        held.losses().get());
                            }),
                    waitReplicas);
        }
    }

    private static void print(FailoverProcedure.Figures f) {
        System.out.println("FAILOVER-FIGURES " + f);
    }

    private static List<String> names(String kind) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < LOCKS; i++) {
            names.add(kind + "-" + i);
        }
        return names;
    }

    private static long subscribers(RedisServer server) {
        try (Jedis jedis = new Jedis(server.host(), server.port())) {
            String list = jedis.clientList(redis.clients.jedis.args.ClientType.PUBSUB);
            return list.lines().filter(l -> l.contains("name=lockstep")).count();
        } catch (RuntimeException e) {
            return 0;
        }
    }
}
