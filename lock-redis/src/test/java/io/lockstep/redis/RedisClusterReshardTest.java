package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockTimeoutException;
import io.lockstep.Locks;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.FencedRegister;
import io.lockstep.tck.history.History;
import io.lockstep.tck.history.HistoryChecker;
import io.lockstep.tck.servers.RedisClusterSetup;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.params.MigrateParams;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * Moves the hash slot of some locks from one primary of lock-tck's 3+3 cluster to another and back
 * (by hand, as {@code redis-cli --cluster reshard} does it: {@code SETSLOT IMPORTING/MIGRATING}, then
 * {@code MIGRATE} one lock's keys at a time, then {@code SETSLOT NODE}) while auto-renewed leases are held in that
 * slot and four clients contend on another lock of the same slot, half of them with {@code waitReplicas=1}
 * (whose pipelined {@code WAIT} a cluster pipeline does not redirect). Acquire, extend, release and release
 * notices cross MOVED, ASK and TRYAGAIN; the history must show no overlap and increasing fences.
 */
@DisplayName("lock-redis while the slot of its locks migrates between cluster primaries")
class RedisClusterReshardTest {

    private static final String HOT = "reshard-hot";
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

    @Test
    @DisplayName("held leases stay held and contended locks stay exclusive with increasing fences across two"
            + " slot migrations")
    void locksSurviveSlotMigration() throws Exception {
        int slot = JedisClusterCRC16.getSlot(HOT);
        List<String> heldNames = namesInSlot(slot, 3);
        String hotKey = "lockstep:{" + HOT + "}";
        History history = new History();
        FencedRegister register = new FencedRegister(HOT, history);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong operations = new AtomicLong();
        List<String> failures = new CopyOnWriteArrayList<>();
        Map<String, AtomicLong> outcomes = new ConcurrentHashMap<>();
        try (LockProvider plain = Locks.open(cluster.uri() + "?timeout=1s");
                LockProvider acked = Locks.open(cluster.uri() + "?timeout=3s&waitReplicas=1&waitTimeout=2s")) {
            // Short leases renewed at a third of their time: every second an extend crosses the migration.
            List<Lease> held = new ArrayList<>();
            for (int i = 0; i < heldNames.size(); i++) {
                LockProvider locks = i % 2 == 0 ? plain : acked;
                held.add(locks.acquire(
                        heldNames.get(i),
                        LeaseOptions.of(Duration.ofSeconds(3)).withAutoRenew().withWaitTime(DEADLINE)));
            }
            List<Thread> workers = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                History.Recorder client = history.client("c" + w);
                LockProvider locks = w % 2 == 0 ? plain : acked;
                Thread worker = new Thread(
                        () -> contend(locks, client, register, heldNames, stop, operations, failures, outcomes),
                        "reshard-" + client.name());
                worker.start();
                workers.add(worker);
            }
            RedisServer first = cluster.primaryFor(hotKey);
            RedisServer second = cluster.primaries().stream()
                    .filter(n -> n != first)
                    .findFirst()
                    .orElseThrow();
            awaitProgress(operations, 20);
            int movedThere = migrate(slot, first, second, operations);
            assertThat(cluster.primaryFor(hotKey))
                    .as("the slot's owner after the first migration")
                    .isSameAs(second);
            assertThat(held).as("leases held while their slot moved").allMatch(Lease::isValid);
            int movedBack = migrate(slot, second, first, operations);
            assertThat(cluster.primaryFor(hotKey))
                    .as("the slot's owner after moving back")
                    .isSameAs(first);
            awaitProgress(operations, 20);
            stop.set(true);
            for (Thread worker : workers) {
                worker.join(DEADLINE.toMillis());
            }
            assertThat(held).as("leases held across both migrations").allMatch(Lease::isValid);
            assertThat(held.stream().map(l -> l.lost().toCompletableFuture().isDone()))
                    .as("no held lease was reported lost")
                    .containsOnly(false);
            for (Lease lease : held) {
                lease.release();
            }
            long ask = errorStat("ASK");
            long moved = errorStat("MOVED");
            System.out.println("RESHARD-FIGURES keys moved there " + movedThere + ", back " + movedBack
                    + "; operations " + operations.get() + "; outcomes " + outcomes + "; ASK answered " + ask
                    + ", MOVED answered " + moved + ", TRYAGAIN answered " + errorStat("TRYAGAIN")
                    + "; fences accepted by the register " + register.accepted());
            assertThat(movedThere).as("lock and fence keys migrated while held").isGreaterThanOrEqualTo(2);
            assertThat(movedBack).isGreaterThanOrEqualTo(2);
            assertThat(ask).as("clients were sent ASK during the migration").isPositive();
            assertThat(moved).as("clients were sent MOVED after it").isPositive();
        }
        assertThat(failures)
                .as("held locks granted to others, releases that failed other than by the migration")
                .isEmpty();
        assertThat(outcomes.get("acquired").get()).as("acquires granted").isGreaterThan(20);
        assertThat(outcomes.get("released").get())
                .as("releases that freed the lock")
                .isGreaterThan(20);
        HistoryChecker.Report report = HistoryChecker.strict().check(history);
        assertThat(report.violations()).as(history.toString()).isEmpty();
        assertThat(register.rejected()).isZero();
    }

    /**
     * Takes {@link #HOT} again and again, waiting on release notices; checks the held locks stay held.
     * Every attempt counts in {@code attempts}: while a slot migrates, an acquire or a release whose keys
     * are split between two nodes is answered TRYAGAIN and may run out of its wait time or retry window
     * (availability, not safety).
     */
    private static void contend(
            LockProvider locks,
            History.Recorder client,
            FencedRegister register,
            List<String> heldNames,
            AtomicBoolean stop,
            AtomicLong attempts,
            List<String> failures,
            Map<String, AtomicLong> outcomes) {
        for (int round = 1; !stop.get(); round++, attempts.incrementAndGet()) {
            client.invoke(Op.ACQUIRE, HOT);
            Lease lease;
            try {
                lease = locks.acquire(
                        HOT, LeaseOptions.of(Duration.ofSeconds(3)).withWaitTime(Duration.ofMillis(500)));
            } catch (LockTimeoutException e) {
                client.fail(Op.ACQUIRE, HOT);
                count(outcomes, "acquire timed out");
                continue;
            } catch (BackendUnavailableException e) {
                client.unknown(Op.ACQUIRE, HOT);
                count(outcomes, "acquire unavailable");
                continue;
            }
            client.acquired(lease);
            register.write(client.name(), lease.fencingToken().getAsLong());
            count(outcomes, "acquired");
            if (round % 3 == 0) {
                // A held lock of the migrating slot is never granted to anyone else.
                String other = heldNames.get(round % heldNames.size());
                try {
                    if (locks.tryAcquire(other, LeaseOptions.of(Duration.ofSeconds(1)))
                            .isPresent()) {
                        failures.add(client.name() + " was granted held lock " + other);
                    }
                } catch (BackendUnavailableException e) {
                    count(outcomes, "tryAcquire of a held lock unavailable");
                }
            }
            client.invoke(Op.RELEASE, HOT);
            try {
                lease.release();
                client.ok(Op.RELEASE, HOT);
                count(outcomes, "released");
            } catch (BackendUnavailableException e) {
                client.unknown(Op.RELEASE, HOT);
                if (e.isTransient() && refusedTryAgain(e)) {
                    // While the lock's key is on one node and its absent wait list is not, the release is
                    // answered TRYAGAIN until the key moves; the test moves it only after the clients make
                    // progress, which can outlast the release's retry window. The lock then ends by its
                    // lease time: availability, not safety (the history still judges every hold).
                    count(outcomes, "release unavailable while the slot migrated");
                } else {
                    failures.add(client.name() + " release: " + e.getMessage());
                }
            }
        }
    }

    /**
     * Moves {@code slot} from {@code source} to {@code target} as {@code redis-cli --cluster reshard} does,
     * letting the clients work between every step.
     *
     * @return how many keys were migrated
     */
    private static int migrate(int slot, RedisServer source, RedisServer target, AtomicLong operations) {
        try (Jedis from = new Jedis(source.host(), source.port());
                Jedis to = new Jedis(target.host(), target.port())) {
            String sourceId = from.clusterMyId();
            String targetId = to.clusterMyId();
            to.clusterSetSlotImporting(slot, sourceId);
            from.clusterSetSlotMigrating(slot, targetId);
            awaitProgress(operations, 5);
            int moved = 0;
            for (List<String> keys = from.clusterGetKeysInSlot(slot, 100);
                    !keys.isEmpty();
                    keys = from.clusterGetKeysInSlot(slot, 100)) {
                // One lock (its key and fence key) per MIGRATE, as redis-cli moves a batch at a time: between
                // them, a renewal of several locks of the slot finds its keys split between two nodes.
                Map<String, List<String>> byLock = new java.util.LinkedHashMap<>();
                for (String key : keys) {
                    byLock.computeIfAbsent(key.substring(0, key.indexOf('}') + 1), k -> new ArrayList<>())
                            .add(key);
                }
                for (List<String> lockKeys : byLock.values()) {
                    String reply = from.migrate(
                            target.host(),
                            target.port(),
                            0,
                            5000,
                            new MigrateParams(),
                            lockKeys.toArray(String[]::new));
                    if ("OK".equals(reply)) {
                        moved += lockKeys.size();
                    }
                    awaitProgress(operations, 1);
                }
            }
            to.clusterSetSlotNode(slot, targetId);
            from.clusterSetSlotNode(slot, targetId);
            for (RedisServer node : cluster.primaries()) {
                if (node != source && node != target) {
                    try (Jedis other = new Jedis(node.host(), node.port())) {
                        other.clusterSetSlotNode(slot, targetId);
                    }
                }
            }
            awaitProgress(operations, 10);
            return moved;
        }
    }

    /** Names whose lock keys hash to {@code slot}, found by trying {@code reshard-held-<i>}. */
    private static List<String> namesInSlot(int slot, int howMany) {
        List<String> names = new ArrayList<>();
        for (int i = 0; names.size() < howMany; i++) {
            String name = "reshard-held-" + i;
            if (JedisClusterCRC16.getSlot(name) == slot) {
                names.add(name);
            }
        }
        return names;
    }

    /** How many {@code kind} error replies the primaries sent ({@code INFO errorstats}). */
    private static long errorStat(String kind) {
        long total = 0;
        for (RedisServer node : cluster.nodes()) {
            try (Jedis jedis = new Jedis(node.host(), node.port())) {
                String info = jedis.info("errorstats");
                for (String line : info.split("\r?\n")) {
                    if (line.startsWith("errorstat_" + kind + ":count=")) {
                        total += Long.parseLong(
                                line.substring(line.indexOf('=') + 1).split(",")[0]);
                    }
                }
            }
        }
        return total;
    }

    /** Whether the server's last answer to the release was TRYAGAIN (its keys split between two nodes). */
    private static boolean refusedTryAgain(BackendUnavailableException e) {
        return e.getCause() instanceof JedisDataException answer
                && String.valueOf(answer.getMessage()).startsWith("TRYAGAIN");
    }

    private static void count(Map<String, AtomicLong> outcomes, String what) {
        outcomes.computeIfAbsent(what, w -> new AtomicLong()).incrementAndGet();
    }

    /** Waits (polling, within the deadline) until the clients completed {@code more} further rounds. */
    private static void awaitProgress(AtomicLong operations, int more) {
        long target = operations.get() + more;
        poll("clients completing " + more + " more rounds", () -> operations.get() >= target);
    }

    private static void poll(String what, BooleanSupplier done) {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!done.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("waiting for " + what).isNegative();
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }
}
