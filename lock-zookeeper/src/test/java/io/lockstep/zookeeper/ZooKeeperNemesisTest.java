package io.lockstep.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockException;
import io.lockstep.LockProvider;
import io.lockstep.LockTimeoutException;
import io.lockstep.Locks;
import io.lockstep.tck.Timing;
import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.FencedRegister;
import io.lockstep.tck.history.History;
import io.lockstep.tck.history.HistoryChecker;
import io.lockstep.tck.servers.ZooKeeperEnsemble;
import io.lockstep.tck.servers.ZooKeeperServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Issue 20's nemesis on a 3-member ensemble: four clients contend on three names, recording a history
 * (acquires, releases, losses, fences, validity), while one fault after another hits the ensemble and
 * the clients. Each step waits for its event (a leader, a lock taken through the fault) with generous
 * bounds; nothing is asserted to happen within a fixed window except the README's bound for the locks
 * to be free again once the faults stopped.
 */
@DisplayName(
        "lock-zookeeper nemesis: leader killed, follower frozen, client stalled and reset, server restarted with a lower maxSessionTimeout")
class ZooKeeperNemesisTest {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperNemesisTest.class);
    private static final Timing timing = Timing.fromSystemProperty();
    private static final List<String> NAMES = List.of("nemesis-a", "nemesis-b", "nemesis-c");
    /** Generous bound for any awaited event. */
    private static final Duration EVENT = Duration.ofSeconds(60);

    private static ZooKeeperEnsemble ensemble;
    private static EnsembleFaults proxied;
    private static final List<LockProvider> clients = new ArrayList<>();

    @BeforeAll
    static void start() {
        ensemble = ZooKeeperEnsemble.start(3);
        proxied = EnsembleFaults.proxied(ensemble);
    }

    @AfterAll
    static void stop() {
        clients.forEach(LockProvider::close);
        if (proxied != null) {
            proxied.close();
        }
        if (ensemble != null) {
            ensemble.close();
        }
    }

    private static Duration lease() {
        return timing.millis(2_000);
    }

    /** The lowered maxSessionTimeout: at least the lease, below the clients' session timeout. */
    private static Duration lowered() {
        return timing.millis(4_000);
    }

    @Test
    @DisplayName(
            "through every fault: no two holders at once, fences strictly increase, and every name is free again within the README's bound")
    void nemesis() throws Exception {
        for (int i = 0; i < 3; i++) {
            clients.add(Locks.open(ensemble.uri() + ZooKeeperTesting.settings(timing)));
        }
        ZooKeeperLockProvider stalled = (ZooKeeperLockProvider)
                Locks.open("zookeeper://" + proxied.proxiedConnectString() + ZooKeeperTesting.settings(timing));
        clients.add(stalled);
        int stalledIndex = clients.size() - 1;
        Contention c = new Contention(clients, stalledIndex);
        try {
            c.awaitProgress("contention started");

            // 1. Kill the leader: a new one is elected and locks go on; it comes back as a follower.
            ZooKeeperServer leader = ensemble.leader().orElseThrow();
            leader.kill();
            ensemble.awaitLeader(EVENT);
            c.awaitProgress("a lock taken under the new leader");
            leader.restart();
            awaitAllServing();
            c.awaitProgress("a lock taken after the old leader rejoined");
            log.info("nemesis: leader {} killed and restarted; {}", leader.port(), ensemble.modes());

            // 2. Freeze (SIGSTOP) a follower that a contending client talks to.
            int victim = -1;
            ZooKeeperServer frozen = null;
            // Not the member just restarted: freezing the other follower would leave no quorum until it synced.
            for (int i = 0; i < stalledIndex && frozen == null; i++) {
                ZooKeeperServer member = connectedMember(clients.get(i));
                if (member != null
                        && member != leader
                        && member.mode().filter("follower"::equals).isPresent()) {
                    victim = i;
                    frozen = member;
                }
            }
            if (frozen == null) { // all on the leader: freeze a follower anyway
                frozen = ensemble.members().stream()
                        .filter(m -> m != leader
                                && m.mode().filter("follower"::equals).isPresent())
                        .findFirst()
                        .orElseThrow();
            }
            frozen.pause();
            log.info(
                    "nemesis: follower {} frozen (client-{} talks to it); {}", frozen.port(), victim, ensemble.modes());
            c.awaitProgress("a lock taken while a follower is frozen");
            if (victim >= 0) {
                c.awaitProgressOf(victim, "the frozen follower's client locks again through another member");
            }
            frozen.resume();
            awaitAllServing();

            // 3. Stall one client's connections until it notices, then reset them (RST) and heal.
            proxied.partition();
            log.info("nemesis: client-{} stalled", stalledIndex);
            c.awaitProgress("others lock while one client is stalled");
            ZooKeeperTesting.await("the stalled client notices", EVENT, () -> !stalled.curator()
                    .getZookeeperClient()
                    .isConnected());
            resetStalledClient();
            log.info("nemesis: client-{} reset and healed", stalledIndex);
            c.awaitProgressOf(stalledIndex, "the stalled client locks again after the reset");

            // 4. Restart a follower with a lower maxSessionTimeout (a rolling configuration change) and
            // move the proxied client onto it, so its session is renegotiated on reconnect.
            ZooKeeperServer lowered = ensemble.members().stream()
                    .filter(m -> m.mode().filter("follower"::equals).isPresent())
                    .findFirst()
                    .orElseThrow();
            lowered.restart(lowered());
            awaitAllServing();
            log.info(
                    "nemesis: {} restarted with maxSessionTimeout {}; {}", lowered.port(), lowered(), ensemble.modes());
            // The client tries the members in turn, so a few resets bring it to the restarted one.
            for (int i = 0; i < 10 && sessionTimeoutOf(stalled) != lowered().toMillis(); i++) {
                resetStalledClient();
                Thread.sleep(1_500); // pacing only: the client waits up to 1 s before it reconnects
                ZooKeeperTesting.await("the proxied client reconnects", EVENT, () -> stalled.curator()
                        .getZookeeperClient()
                        .isConnected());
            }
            assertThat(sessionTimeoutOf(stalled))
                    .as("the proxied client's session, renegotiated on the restarted member")
                    .isEqualTo(lowered().toMillis());
            c.awaitProgress("a lock taken after the restart with a lower maxSessionTimeout");
            c.awaitProgressOf(stalledIndex, "the proxied client locks again after its session was renegotiated");
        } finally {
            proxied.heal();
            for (ZooKeeperServer member : ensemble.members()) {
                if (member.isRunning()) {
                    member.resume();
                } else {
                    member.restart();
                }
            }
        }
        awaitAllServing();
        c.close();
        log.info("nemesis: faults and contention over; {}", ensemble.modes());

        // Faults and contention over: every name must be free again within the README's bound,
        // sessionTimeout + connectionTimeout (plus slack for a loaded machine), for a fresh client.
        long since = System.nanoTime();
        Duration bound = ZooKeeperTesting.sessionTimeout(timing)
                .plus(timing.millis(2_000))
                .plus(Duration.ofSeconds(10));
        try (LockProvider fresh =
                Locks.open(ensemble.uri() + "?sessionTimeout=" + lowered().toMillis() + "ms&connectionTimeout="
                        + timing.millis(2_000).toMillis() + "ms")) {
            for (String name : NAMES) {
                Duration left = bound.minusNanos(System.nanoTime() - since);
                Lease lease = fresh.acquire(
                        name, LeaseOptions.of(lease()).withWaitTime(left.isNegative() ? Duration.ZERO : left));
                lease.release();
            }
        }
        c.assertValid();
        log.info(
                "nemesis: history of {} events checked, {} fenced writes accepted",
                c.history.size(),
                c.registers.values().stream()
                        .mapToLong(FencedRegister::accepted)
                        .sum());
        for (FencedRegister register : c.registers.values()) {
            assertThat(register.rejected())
                    .as("stale writes refused by " + register.name())
                    .isZero();
        }
    }

    /** Waits until every member runs and serves (one leader, the others following). */
    private static void awaitAllServing() {
        ensemble.awaitLeader(EVENT);
        ZooKeeperTesting.await("every member serves: " + ensemble.modes(), EVENT, () -> ensemble.members().stream()
                .allMatch(m -> m.isRunning() && m.mode().isPresent()));
    }

    private static void resetStalledClient() {
        proxied.proxies().forEach(TcpProxy::reset); // the held bytes die with their connections
        proxied.heal();
    }

    private static long sessionTimeoutOf(ZooKeeperLockProvider provider) {
        try {
            return provider.curator().getZookeeperClient().getZooKeeper().getSessionTimeout();
        } catch (Exception e) {
            return -1;
        }
    }

    /** The member {@code provider}'s client is connected to, or null if that cannot be told now. */
    private static ZooKeeperServer connectedMember(LockProvider provider) {
        String text;
        try {
            ZooKeeper zk = ((ZooKeeperLockProvider) provider)
                    .curator()
                    .getZookeeperClient()
                    .getZooKeeper();
            text = zk.toString();
        } catch (Exception e) {
            return null;
        }
        for (ZooKeeperServer member : ensemble.members()) {
            if (text.contains("remoteserver:") && text.contains(":" + member.port() + " ")) {
                return member;
            }
        }
        return null;
    }

    /** One thread per client, each taking the names in turn: acquire, write through the fence, hold, release. */
    private static final class Contention {
        final History history = new History();
        final Map<String, FencedRegister> registers = new LinkedHashMap<>();
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong lastAcquiredAt = new AtomicLong();
        final List<AtomicLong> acquiredAt = new ArrayList<>();
        final ExecutorService pool;
        final List<Future<?>> done = new ArrayList<>();

        Contention(List<LockProvider> clients, int longHolder) {
            for (String name : NAMES) {
                registers.put(name, new FencedRegister(name, history));
            }
            pool = Executors.newFixedThreadPool(clients.size());
            for (int i = 0; i < clients.size(); i++) {
                LockProvider client = clients.get(i);
                History.Recorder rec = history.client("client-" + i);
                acquiredAt.add(new AtomicLong());
                int index = i;
                // The proxied client holds longer, so the faults aimed at it find it holding.
                Duration hold = i == longHolder ? lease().dividedBy(4) : Duration.ofMillis(5);
                done.add(pool.submit(() -> loop(index, client, rec, hold)));
            }
        }

        private Void loop(int index, LockProvider client, History.Recorder rec, Duration hold)
                throws InterruptedException {
            for (int round = index; !stop.get(); round++) {
                String name = NAMES.get(round % NAMES.size());
                rec.invoke(Op.ACQUIRE, name);
                Lease held;
                try {
                    held = client.acquire(name, LeaseOptions.of(lease()).withWaitTime(lease()));
                } catch (LockTimeoutException e) {
                    rec.fail(Op.ACQUIRE, name);
                    continue;
                } catch (LockException e) {
                    rec.unknown(Op.ACQUIRE, name);
                    Thread.sleep(20);
                    continue;
                }
                rec.acquired(held);
                held.lost().thenAccept(r -> rec.lost(held));
                long at = System.nanoTime();
                lastAcquiredAt.set(at);
                acquiredAt.get(index).set(at);
                registers.get(name).write(rec.name(), held.fencingToken().getAsLong());
                Thread.sleep(hold.toMillis());
                rec.release(held);
            }
            return null;
        }

        void awaitProgress(String what) {
            awaitAfterNow(what, lastAcquiredAt);
        }

        void awaitProgressOf(int index, String what) {
            awaitAfterNow(what, acquiredAt.get(index));
        }

        private static void awaitAfterNow(String what, AtomicLong acquired) {
            long since = System.nanoTime();
            ZooKeeperTesting.await(what, EVENT, () -> acquired.get() - since > 0);
        }

        void close() throws Exception {
            stop.set(true);
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
            pool.shutdownNow();
        }

        /** No overlap and strictly increasing fences; leftovers are judged by the fresh client instead. */
        void assertValid() {
            HistoryChecker.strict().check(history).violations().stream()
                    .filter(v -> v.rule() != HistoryChecker.Rule.LEFTOVER_LOCK)
                    .findFirst()
                    .ifPresent(v -> {
                        throw new AssertionError(v + "\nhistory:\n" + history);
                    });
            assertThat(registers.values().stream()
                            .mapToLong(FencedRegister::accepted)
                            .sum())
                    .isPositive();
        }
    }
}
