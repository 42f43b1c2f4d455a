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
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Protocol;

/**
 * The failover procedure of {@link RedisSentinelFailoverTest} and {@link RedisClusterFailoverTest}, one
 * topology each: a holder takes {@link #LOCKS} locks while the primary's replicas are in sync and
 * {@link #LOCKS} while they lag (paused, their links dropped: those writes live on the primary only, as
 * asynchronous replication allows); the primary is SIGKILLed, a replica takes over, a second client tries
 * every lock, the first holder writes late with its fence, and the history checker counts overlapping
 * holds, repeated fences and stale writes accepted. What the holder learns afterwards (a loss signal, a
 * refused extend) is the topology's part.
 */
final class FailoverProcedure {

    static final int LOCKS = 5;
    static final Duration LEASE = Duration.ofSeconds(60);
    static final Duration DEADLINE = Duration.ofSeconds(30);

    private FailoverProcedure() {}

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
            int extendsRefused,
            int leasesExtendedAfterFailover) {}

    /** The first holder's leases after the failover and the late writes, for the topology's last step. */
    record Held(Map<String, Lease> leases, List<String> inSync, AtomicInteger losses) {}

    /** What the first holder learned after the failover: losses reported, extends refused and done. */
    record Aftermath(int lossesReported, int extendsRefused, int leasesExtended) {}

    /** One topology's failover. */
    record Topology(
            String uri,
            RedisServer primary,
            List<RedisServer> replicas,
            List<String> inSync,
            List<String> lagging,
            Runnable awaitFailover,
            Function<Held, Aftermath> aftermath) {}

    /** Runs the procedure on {@code topology}, the holder asking for {@code waitReplicas} acknowledgements. */
    static Figures run(Topology topology, int waitReplicas) {
        History history = new History();
        History.Recorder holder = history.client("holder");
        History.Recorder second = history.client("second");
        Map<String, FencedRegister> registers = new HashMap<>();
        Map<String, Lease> held = new HashMap<>();
        AtomicInteger losses = new AtomicInteger();
        int failedClosed = 0;
        // A replica in sync acknowledges within milliseconds on a quiet machine, but a 200 ms WAIT once ran
        // out in CI (a 2-core machine running other test classes) and an in-sync lock was refused. 1 s
        // leaves room; each lagging lock then waits that long before it fails closed.
        String options =
                waitReplicas == 0 ? "?timeout=2s" : "?timeout=2s&waitReplicas=" + waitReplicas + "&waitTimeout=1s";
        try (LockProvider holderLocks = Locks.open(topology.uri() + options);
                LockProvider secondLocks = Locks.open(topology.uri() + "?timeout=1s")) {
            RedisServer victim = topology.primary();
            topology.replicas().forEach(replica -> awaitReplicated(victim, replica));
            for (String name : topology.inSync()) {
                take(holderLocks, holder, name, held, registers, history, losses);
            }
            topology.replicas().forEach(replica -> awaitReplicated(victim, replica));
            topology.replicas().forEach(RedisServer::pause);
            try (Jedis primary = new Jedis(victim.host(), victim.port())) {
                // The replicas cannot reconnect while stopped: what follows reaches the primary only.
                primary.sendCommand(Protocol.Command.CLIENT, "KILL", "TYPE", "replica");
                for (String name : topology.lagging()) {
                    if (!take(holderLocks, holder, name, held, registers, history, losses)) {
                        failedClosed++;
                        assertThat(primary.exists("lockstep:{" + name + "}"))
                                .as("a write no replica acknowledged is taken back")
                                .isFalse();
                    }
                }
            }
            victim.kill();
            topology.replicas().forEach(RedisServer::resume);
            topology.awaitFailover().run();

            Set<String> secondHolders = new HashSet<>();
            int secondInSync = 0;
            int secondLagging = 0;
            List<String> all = new ArrayList<>(topology.inSync());
            all.addAll(topology.lagging());
            for (String name : all) {
                second.invoke(Op.ACQUIRE, name);
                Optional<Lease> lease = retrying(() -> secondLocks.tryAcquire(name, LeaseOptions.of(LEASE)));
                if (lease.isEmpty()) {
                    second.fail(Op.ACQUIRE, name);
                    continue;
                }
                second.acquired(lease.get());
                registers.get(name).write("second", lease.get().fencingToken().getAsLong());
                secondHolders.add(name);
                if (topology.inSync().contains(name)) {
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
            Aftermath after = topology.aftermath().apply(new Held(held, topology.inSync(), losses));
            HistoryChecker.Report report = HistoryChecker.strict().check(history);
            return new Figures(
                    waitReplicas,
                    (int) topology.inSync().stream().filter(held::containsKey).count(),
                    (int) topology.lagging().stream().filter(held::containsKey).count(),
                    failedClosed,
                    secondInSync,
                    secondLagging,
                    count(report, HistoryChecker.Rule.OVERLAPPING_HOLDS),
                    count(report, HistoryChecker.Rule.FENCE_NOT_INCREASING),
                    count(report, HistoryChecker.Rule.STALE_WRITE_ACCEPTED),
                    lateAccepted,
                    after.lossesReported(),
                    after.extendsRefused(),
                    after.leasesExtended());
        }
    }

    /** Extends every lease in {@code leases} (retrying while the client looks for the new primary). */
    static Aftermath extendAll(Iterable<Lease> leases, int lossesReported) {
        int extended = 0;
        int refused = 0;
        for (Lease lease : leases) {
            if (retrying(() -> lease.extend(LEASE))) {
                extended++;
            } else {
                refused++;
            }
        }
        return new Aftermath(lossesReported, refused, extended);
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

    /** Polls until the replica's offset reached the primary's: the in-sync locks are on both. */
    private static void awaitReplicated(RedisServer primary, RedisServer replica) {
        try (Jedis p = new Jedis(primary.host(), primary.port());
                Jedis r = new Jedis(replica.host(), replica.port())) {
            long target = offset(p.info("replication"), "master_repl_offset");
            poll("the replica catching up", () -> offset(r.info("replication"), "slave_repl_offset") >= target);
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

    private static long count(HistoryChecker.Report report, HistoryChecker.Rule rule) {
        return report.violations().stream().filter(v -> v.rule() == rule).count();
    }

    /** Retries a call that fails while the client still looks for the new primary, within the deadline. */
    static <T> T retrying(Supplier<T> call) {
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

    /** Polls until {@code done}, failing after the deadline. */
    static void poll(String what, BooleanSupplier done) {
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
