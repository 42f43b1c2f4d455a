package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockTimeoutException;
import io.lockstep.Locks;
import io.lockstep.LossReason;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.FencedRegister;
import io.lockstep.tck.history.History;
import io.lockstep.tck.history.HistoryChecker;
import io.lockstep.tck.servers.RedisSentinelSetup;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Protocol;

/**
 * Kills the primary of a Sentinel setup while locks are held and counts, with the history checker, how
 * often a second holder gets in after the failover. Two kinds of lock: taken while the replicas were in
 * sync, and taken while they lagged (the replicas were stopped and the primary dropped its replica links,
 * so those writes lived on the primary only, as asynchronous replication allows). Bounded: {@link #LOCKS}
 * locks of each kind, one failover per test; the figures are printed as {@code FAILOVER-FIGURES} lines and
 * reported in the module README.
 */
@DisplayName("A Sentinel failover while locks are held")
class RedisSentinelFailoverTest {

    private static final int LOCKS = 5;
    private static final Duration LEASE = Duration.ofSeconds(60);
    private static final Duration DEADLINE = Duration.ofSeconds(30);

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
            int lossesReported,
            int leasesExtendedAfterFailover) {}

    @Test
    @DisplayName("without waitReplicas, locks taken while replicas lag get a second holder and repeated fences;"
            + " every lease of the old primary is reported lost")
    void withoutReplicaAcknowledgementLaggingLocksAreLostAndReported() {
        Figures f = failover(0);
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
        Figures f = failover(1);
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
        try (RedisSentinelSetup redis = RedisSentinelSetup.start();
                LockProvider holderLocks = Locks.open(redis.uri() + options);
                LockProvider secondLocks = Locks.open(redis.uri() + "?timeout=1s")) {
            List<String> inSync = names("in-sync");
            List<String> lagging = names("lagging");
            for (String name : inSync) {
                take(holderLocks, holder, name, held, registers, history, losses);
            }
            RedisServer old = redis.primary();
            List<RedisServer> replicas = redis.replicas();
            replicas.forEach(RedisServer::pause);
            try (Jedis primary = new Jedis(old.host(), old.port())) {
                // The replicas cannot reconnect while stopped: what follows reaches the primary only.
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
            old.kill();
            replicas.forEach(RedisServer::resume);
            redis.awaitFailover(old, DEADLINE);

            java.util.Set<String> secondHolders = new java.util.HashSet<>();
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
            // The first holder, unaware (it ignores lost(), or was paused), writes late with its fence. Where a
            // second holder wrote since, the register should refuse it; with a repeated fence it cannot.
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
            int extended = 0;
            if (waitReplicas > 0) {
                for (String name : inSync) {
                    Lease lease = held.get(name);
                    if (lease != null
                            && retrying(() -> Optional.of(lease.extend(LEASE))).orElse(false)) {
                        extended++;
                    }
                }
            } else {
                poll("every lease of the old primary reported lost", () -> losses.get() == held.size());
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
                    losses.get(),
                    extended);
        }
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

    private static void print(Figures f) {
        System.out.println("FAILOVER-FIGURES " + f);
    }

    private static List<String> names(String kind) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < LOCKS; i++) {
            names.add(kind + "-" + i);
        }
        return names;
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    private static long subscribers(RedisServer server) {
        try (Jedis jedis = new Jedis(server.host(), server.port())) {
            String list = jedis.clientList(redis.clients.jedis.args.ClientType.PUBSUB);
            return list.lines().filter(l -> l.contains("name=lockstep")).count();
        } catch (RuntimeException e) {
            return 0;
        }
    }

    /** Retries a call that fails while the client still looks for the new primary, within the deadline. */
    private static <T> T retrying(java.util.function.Supplier<T> call) {
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

    private static void poll(String what, BooleanSupplier done) {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!done.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("waiting for " + what).isNegative();
            pause();
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
