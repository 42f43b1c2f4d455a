package io.lockstep.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockException;
import io.lockstep.LockProvider;
import io.lockstep.LockTimeoutException;
import io.lockstep.Locks;
import io.lockstep.tck.Timing;
import io.lockstep.tck.faults.ChildJvmHolder;
import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.FencedRegister;
import io.lockstep.tck.history.History;
import io.lockstep.tck.history.HistoryChecker;
import io.lockstep.tck.servers.ZooKeeperEnsemble;
import io.lockstep.tck.servers.ZooKeeperServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Faults of single members of a 3-node ensemble, and of clients, while clients contend for one lock
 * and write through a fenced register. Every run is recorded and checked as a history: no two holders
 * overlap, fences only grow, and the lock is taken again after the fault.
 */
@DisplayName(
        "lock-zookeeper on a 3-node ensemble: leader killed, server frozen, session expired, client partitioned, holder killed")
class ZooKeeperEnsembleFaultsTest {

    private static final Timing timing = Timing.fromSystemProperty();
    private static ZooKeeperEnsemble ensemble;
    private static EnsembleFaults proxied;

    private final List<AutoCloseable> toClose = Collections.synchronizedList(new ArrayList<>());

    @BeforeAll
    static void start() {
        ensemble = ZooKeeperEnsemble.start(3);
        proxied = EnsembleFaults.proxied(ensemble);
    }

    @AfterAll
    static void stop() {
        if (proxied != null) {
            proxied.close();
        }
        if (ensemble != null) {
            ensemble.close();
        }
    }

    @AfterEach
    void cleanUp() {
        proxied.heal();
        List<AutoCloseable> all = new ArrayList<>(toClose);
        Collections.reverse(all);
        for (AutoCloseable c : all) {
            try {
                c.close();
            } catch (Exception ignored) {
                // teardown
            }
        }
        for (ZooKeeperServer member : ensemble.members()) {
            if (member.isRunning()) {
                member.resume();
            } else {
                member.restart();
            }
        }
        ensemble.awaitLeader(Duration.ofSeconds(60));
    }

    private LockProvider client() {
        return track(Locks.open(ensemble.uri() + ZooKeeperTesting.settings(timing)));
    }

    private LockProvider proxiedClient() {
        return track(Locks.open("zookeeper://" + proxied.proxiedConnectString() + ZooKeeperTesting.settings(timing)));
    }

    private <T extends AutoCloseable> T track(T closeable) {
        toClose.add(closeable);
        return closeable;
    }

    private static Duration lease() {
        return timing.millis(1_500);
    }

    private static Duration margin() {
        return timing.millis(1_000);
    }

    /** Contending clients: each loop acquires, writes through the register, holds briefly, releases. */
    private final class Contention implements AutoCloseable {
        final String name;
        final History history = new History();
        final FencedRegister register;
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong lastAcquiredAt = new AtomicLong();
        /** Per client: when it last acquired, whether it is asked to stay out, whether it is out. */
        final List<AtomicLong> acquiredAt = new ArrayList<>();

        final List<AtomicBoolean> stayOut = new ArrayList<>();
        final List<AtomicBoolean> out = new ArrayList<>();
        final ExecutorService pool;
        final List<Future<?>> done = new ArrayList<>();

        Contention(String name, List<LockProvider> clients) {
            this.name = name;
            this.register = new FencedRegister(name, history);
            this.pool = Executors.newFixedThreadPool(clients.size());
            for (int i = 0; i < clients.size(); i++) {
                LockProvider client = clients.get(i);
                History.Recorder rec = history.client("client-" + i);
                acquiredAt.add(new AtomicLong());
                stayOut.add(new AtomicBoolean());
                out.add(new AtomicBoolean());
                int index = i;
                done.add(pool.submit(() -> loop(index, client, rec)));
            }
        }

        private Void loop(int index, LockProvider client, History.Recorder rec) throws InterruptedException {
            while (!stop.get()) {
                if (stayOut.get(index).get()) {
                    out.get(index).set(true);
                    Thread.sleep(5);
                    continue;
                }
                out.get(index).set(false);
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
                register.write(rec.name(), held.fencingToken().getAsLong());
                Thread.sleep(5);
                rec.release(held);
            }
            return null;
        }

        /** Waits until some client acquires after now. */
        void awaitProgress(String what) {
            awaitAcquiredAfterNow(what, lastAcquiredAt);
        }

        /** Waits until client {@code index} acquires after now. */
        void awaitProgressOf(int index, String what) {
            awaitAcquiredAfterNow(what, acquiredAt.get(index));
        }

        private void awaitAcquiredAfterNow(String what, AtomicLong acquired) {
            long since = System.nanoTime();
            ZooKeeperTesting.await(
                    what,
                    ZooKeeperTesting.sessionTimeout(timing).plus(lease()).multipliedBy(2),
                    () -> acquired.get() - since > 0);
        }

        /** Keeps client {@code index} out of the contention: returns once it neither holds nor waits. */
        void keepOut(int index) {
            stayOut.get(index).set(true);
            ZooKeeperTesting.await(
                    "client-" + index + " leaves the contention", lease().multipliedBy(3), () -> out.get(index)
                            .get());
        }

        /** Lets client {@code index} contend again. */
        void letIn(int index) {
            stayOut.get(index).set(false);
        }

        @Override
        public void close() throws Exception {
            stop.set(true);
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
            pool.shutdownNow();
            HistoryChecker.strict().check(history).violations().stream()
                    .filter(v -> v.rule() != HistoryChecker.Rule.LEFTOVER_LOCK)
                    .findFirst()
                    .ifPresent(v -> {
                        throw new AssertionError(v + "\nhistory:\n" + history);
                    });
        }
    }

    @Test
    @DisplayName(
            "killing the leader while the lock is contended: a new leader is elected and the lock goes on, no overlap")
    void killTheLeader() throws Exception {
        try (Contention c = new Contention("kill-leader", List.of(client(), client(), client()))) {
            c.awaitProgress("contention started");
            ZooKeeperServer leader = ensemble.leader().orElseThrow();
            leader.kill();
            ensemble.awaitLeader(Duration.ofSeconds(60));
            c.awaitProgress("a client acquires under the new leader");
            assertThat(c.register.accepted()).isPositive();
        }
    }

    @Test
    @DisplayName("freezing (SIGSTOP) the server the holder is connected to: no overlap, the lock is taken again")
    void freezeTheConnectedServer() throws Exception {
        LockProvider holderClient = client();
        ZooKeeperServer connected = connectedMember(holderClient);
        try (Contention c = new Contention("freeze-connected", List.of(holderClient, client(), client()))) {
            c.awaitProgress("contention started");
            connected.pause();
            c.awaitProgress("a client acquires while a member is frozen");
            connected.resume();
            c.awaitProgress("a client acquires after it resumes");
        }
    }

    /**
     * The session is closed by force (another client joins it and closes it) while its client neither
     * holds nor waits. A forced close while it holds is not a case one can check for overlap: the server
     * frees the holder's node at once, and its client learns of the expiry only when it reconnects, up to
     * a second later (the kit's {@code expiredSessionEndsTheLease} checks that case: {@code lost()}
     * completes and the next holder's fence is greater). A session that expires because the server stopped
     * hearing from its client cannot do this: the holder's lease ends first ({@link #partitionOneClient}).
     */
    @Test
    @DisplayName(
            "expiring a contender's session between its holds: no overlap, and the client locks again on a new session")
    void expireASession() throws Exception {
        LockProvider victim = client();
        try (Contention c = new Contention("expire-session", List.of(victim, client(), client()))) {
            c.awaitProgressOf(0, "the victim holds the lock before its session ends");
            long before = ((ZooKeeperLockProvider) victim)
                    .curator()
                    .getZookeeperClient()
                    .getZooKeeper()
                    .getSessionId();
            c.keepOut(0);
            ZooKeeperSessions.expire(victim, ensemble.connectString());
            c.letIn(0);
            c.awaitProgress("a client acquires after the expiry");
            c.awaitProgressOf(0, "the victim acquires again");
            assertThat(((ZooKeeperLockProvider) victim)
                            .curator()
                            .getZookeeperClient()
                            .getZooKeeper()
                            .getSessionId())
                    .as("the victim's session after the expiry")
                    .isNotEqualTo(before);
        }
        assertThat(victim.tryAcquire("expire-session-after", LeaseOptions.of(lease())))
                .isPresent()
                .get()
                .satisfies(Lease::release);
    }

    @Test
    @DisplayName(
            "partitioning one client (all its proxies stalled): its lease ends by its deadline, another client takes the lock, no overlap")
    void partitionOneClient() throws Exception {
        LockProvider partitioned = proxiedClient();
        History history = new History();
        History.Recorder holder = history.client("partitioned");
        History.Recorder next = history.client("next");
        String name = "partition-client";
        holder.invoke(Op.ACQUIRE, name);
        Lease lease = partitioned
                .tryAcquire(name, LeaseOptions.of(lease()).withAutoRenew())
                .orElseThrow();
        holder.acquired(lease);
        lease.lost().thenAccept(r -> holder.lost(lease));
        proxied.partition();
        holder.extended(lease);
        long deadline = System.nanoTime() + lease.remaining().toNanos();
        next.invoke(Op.ACQUIRE, name);
        Lease taken = client().acquire(
                        name,
                        LeaseOptions.of(lease())
                                .withWaitTime(
                                        ZooKeeperTesting.sessionTimeout(timing).plus(margin())));
        next.acquired(taken);
        assertThat(System.nanoTime() - deadline)
                .as("taken after the partitioned lease's deadline")
                .isPositive();
        ZooKeeperTesting.await("the partitioned holder learns it lost", margin(), () -> lease.lost()
                .toCompletableFuture()
                .isDone());
        assertThat(lease.isValid()).isFalse();
        proxied.heal();
        assertThat(taken.fencingToken().getAsLong())
                .isGreaterThan(lease.fencingToken().getAsLong());
        HistoryChecker.strict().check(history).assertValid();
        taken.release();
    }

    @Test
    @DisplayName("killing the holder's JVM (SIGKILL): another client acquires within the session timeout plus a margin")
    void killTheHolderJvm() {
        String name = "killed-jvm";
        History history = new History();
        History.Recorder next = history.client("next");
        ChildJvmHolder child = track(ChildJvmHolder.builder(ensemble.uri() + ZooKeeperTesting.settings(timing), name)
                .client("doomed")
                .leaseTime(ZooKeeperTesting.sessionTimeout(timing))
                .autoRenew(true)
                .history(history)
                .start());
        child.awaitAcquired(timing.millis(30_000));
        long killedAt = System.nanoTime();
        child.kill();
        Duration bound = ZooKeeperTesting.sessionTimeout(timing).plus(timing.millis(2_000));
        next.invoke(Op.ACQUIRE, name);
        Lease lease = client().acquire(name, LeaseOptions.of(lease()).withWaitTime(bound));
        next.acquired(lease);
        assertThat(Duration.ofNanos(System.nanoTime() - killedAt)).isLessThanOrEqualTo(bound);
        HistoryChecker.strict().check(history).assertValid();
        lease.release();
    }

    /** The member the provider's client is connected to, from the ZooKeeper handle's remote address. */
    private static ZooKeeperServer connectedMember(LockProvider provider) throws Exception {
        ZooKeeper zk = ((ZooKeeperLockProvider) provider)
                .curator()
                .getZookeeperClient()
                .getZooKeeper();
        String text = zk.toString();
        for (ZooKeeperServer member : ensemble.members()) {
            if (text.contains("remoteserver:") && text.contains(":" + member.port() + " ")) {
                return member;
            }
        }
        throw new AssertionError("cannot tell which member " + text + " is connected to");
    }

    @SuppressWarnings("unused")
    private static List<TcpProxy> proxies() {
        return proxied.proxies();
    }
}
