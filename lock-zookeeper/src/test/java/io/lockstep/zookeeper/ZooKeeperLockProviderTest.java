package io.lockstep.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Holder;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.LockState;
import io.lockstep.Locks;
import io.lockstep.LossReason;
import io.lockstep.tck.Timing;
import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.servers.ZooKeeperServer;
import io.lockstep.zookeeper.internal.LockPaths;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("lock-zookeeper on one real server: names, queue order, fences, cleanup, sessions")
class ZooKeeperLockProviderTest {

    private static final Timing timing = Timing.fromSystemProperty();
    private static ZooKeeperServer zk;
    private static TcpProxy proxy;
    private static CuratorFramework admin;

    private final List<AutoCloseable> toClose = Collections.synchronizedList(new ArrayList<>());

    @BeforeAll
    static void start() {
        zk = ZooKeeperServer.start();
        proxy = TcpProxy.start(zk.host(), zk.port());
        admin = CuratorFrameworkFactory.newClient(zk.connectString(), 10_000, 2_000, new RetryNTimes(3, 100));
        admin.start();
    }

    @AfterAll
    static void stop() {
        if (admin != null) {
            admin.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (zk != null) {
            zk.close();
        }
    }

    @AfterEach
    void closeAll() {
        proxy.heal();
        List<AutoCloseable> all = new ArrayList<>(toClose);
        Collections.reverse(all);
        for (AutoCloseable c : all) {
            try {
                c.close();
            } catch (Exception ignored) {
                // teardown
            }
        }
    }

    private LockProvider client() {
        LockProvider provider = Locks.open(zk.uri() + ZooKeeperTesting.settings(timing));
        toClose.add(provider);
        return provider;
    }

    private LockProvider proxiedClient() {
        LockProvider provider =
                Locks.open("zookeeper://" + proxy.host() + ":" + proxy.port() + ZooKeeperTesting.settings(timing));
        toClose.add(provider);
        return provider;
    }

    private static LeaseOptions lease(long millis) {
        return LeaseOptions.of(timing.millis(millis));
    }

    @Test
    @DisplayName("'a', 'a/b' and 'a%2Fb' are three locks, each one znode segment under the base path")
    void namesNeverMeet() throws Exception {
        LockProvider locks = client();
        List<Lease> held = new ArrayList<>();
        for (String name : List.of("enc-a", "enc-a/b", "enc-a%2Fb", "enc-a/../b", "enc-ü")) {
            Optional<Lease> lease = locks.tryAcquire(name, lease(5_000));
            assertThat(lease).as(name).isPresent();
            held.add(lease.get());
        }
        List<String> parents = admin.getChildren().forPath(ZooKeeperLockProvider.DEFAULT_BASE_PATH);
        assertThat(parents).contains("enc-a", "enc-a%2Fb", "enc-a%252Fb", "enc-a%2F%2E%2E%2Fb", "enc-%C3%BC");
        for (String parent : parents) {
            if (parent.startsWith("enc-")) {
                assertThat(LockPaths.encode(LockPaths.decode(parent))).isEqualTo(parent);
            }
        }
        held.forEach(Lease::release);
    }

    @Test
    @DisplayName("the fencing token is the holder node's czxid, not its sequence number")
    void fenceIsTheNodeCzxid() throws Exception {
        Lease lease = client().tryAcquire("fence-czxid", lease(5_000)).orElseThrow();
        String parent = ZooKeeperLockProvider.DEFAULT_BASE_PATH + "/fence-czxid";
        List<String> nodes = admin.getChildren().forPath(parent);
        assertThat(nodes).hasSize(1);
        Stat stat = admin.checkExists().forPath(parent + "/" + nodes.get(0));
        assertThat(lease.fencingToken()).hasValue(stat.getCzxid());
        assertThat(nodes.get(0)).startsWith(lease.ownerToken() + "-");
        lease.release();
    }

    @Test
    @DisplayName("another client's inspect names the holder's host, pid and label, kept through a renewal and"
            + " never in the node's name")
    void inspectNamesTheHolder() throws Exception {
        LockProvider operator = client();
        Lease lease = client().tryAcquire("who", lease(5_000).withLabel("nightly-report"))
                .orElseThrow();
        LockState seen = operator.inspect("who").orElseThrow();
        assertThat(seen.held()).isTrue();
        assertThat(seen.fencingToken()).isEqualTo(lease.fencingToken());
        assertThat(seen.holder()).contains(Holder.thisProcess("nightly-report"));
        assertThat(seen.toString()).doesNotContain(lease.ownerToken());
        String parent = ZooKeeperLockProvider.DEFAULT_BASE_PATH + "/who";
        assertThat(admin.getChildren().forPath(parent)).singleElement().satisfies(node -> assertThat(node)
                .doesNotContain("nightly"));
        assertThat(lease.extend(timing.millis(6_000))).isTrue();
        assertThat(operator.inspect("who").orElseThrow().holder()).contains(Holder.thisProcess("nightly-report"));
        lease.release();
        assertThat(operator.inspect("who").orElseThrow().holder()).isEmpty();
        try (Lease plain = client().acquire("who", lease(5_000))) {
            assertThat(operator.inspect("who").orElseThrow().holder()).contains(Holder.thisProcess(null));
        }
    }

    @Test
    @DisplayName("a node an older client wrote (the lease time alone) is held with no holder, and still expires by it")
    void anOlderClientsNodeHasNoHolder() throws Exception {
        String parent = ZooKeeperLockProvider.DEFAULT_BASE_PATH + "/old-format";
        admin.create()
                .creatingParentContainersIfNeeded()
                .withMode(org.apache.zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL)
                .forPath(parent + "/0123456789abcdef0123456789abcdef-", "5000".getBytes(StandardCharsets.US_ASCII));
        LockState seen = client().inspect("old-format").orElseThrow();
        assertThat(seen.held()).isTrue();
        assertThat(seen.holder()).isEmpty();
        assertThat(seen.remaining()).hasValueSatisfying(r -> assertThat(r).isLessThanOrEqualTo(Duration.ofSeconds(5)));
    }

    @Test
    @DisplayName("a bad label is refused before anything is taken, naming the label and the rule")
    void aBadLabelTakesNothing() {
        LockProvider locks = client();
        assertThatThrownBy(() -> locks.acquire("bad-label", lease(5_000).withLabel("two words")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("label 'two words' has ' ' at index 3");
        assertThat(locks.inspect("bad-label").orElseThrow().held()).isFalse();
    }

    @Test
    @DisplayName("waiters from different clients get the lock in the order they started waiting (FIFO)")
    void waitersAreServedInArrivalOrder() throws Exception {
        String name = "fifo";
        Lease first = client().tryAcquire(name, lease(8_000)).orElseThrow();
        int waiters = 4;
        List<LockProvider> clients = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            clients.add(client());
        }
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(waiters);
        List<Future<?>> done = new ArrayList<>();
        try {
            String parent = ZooKeeperLockProvider.DEFAULT_BASE_PATH + "/" + name;
            for (int i = 0; i < waiters; i++) {
                int id = i;
                LockProvider c = clients.get(i);
                done.add(pool.submit(() -> {
                    Lease l = c.acquire(name, lease(8_000).withWaitTime(timing.millis(30_000)));
                    order.add(id);
                    l.release();
                    return null;
                }));
                // The next waiter starts only once this one is queued (its node exists).
                int queued = i + 2;
                ZooKeeperTesting.await("waiter " + i + " queued", timing.millis(10_000), () -> {
                    try {
                        return admin.getChildren().forPath(parent).size() >= queued;
                    } catch (Exception e) {
                        return false;
                    }
                });
            }
            first.release();
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(order).containsExactly(0, 1, 2, 3);
    }

    @Test
    @DisplayName("the waiter right behind the holder takes the lock on its watch's word: a handoff costs the"
            + " release's delete and no second read of the queue")
    void theWaiterBehindTheHolderTakesTheLockOnItsWatchsWord() throws Exception {
        String name = "watch-word";
        LockProvider holder = client();
        LockProvider waiter = client();
        int handoffs = 10;
        long requests = 0;
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            for (int i = 0; i < handoffs; i++) {
                Lease held = holder.tryAcquire(name, lease(8_000)).orElseThrow();
                long watchesBefore = mntr("zk_watch_count");
                Future<Lease> next =
                        pool.submit(() -> waiter.acquire(name, lease(8_000).withWaitTime(timing.millis(30_000))));
                // The waiter is queued once it watches the holder's node.
                ZooKeeperTesting.await(
                        "the waiter watching the holder's node",
                        timing.millis(10_000),
                        () -> mntr("zk_watch_count") > watchesBefore);
                long before = mntr("zk_packets_received");
                held.release();
                Lease taken = next.get(30, TimeUnit.SECONDS);
                // less the mntr that read 'before': the server counts it as a packet received too
                requests += mntr("zk_packets_received") - before - 1;
                assertThat(taken.fencingToken().getAsLong())
                        .as("the waiter's fence after handoff %d", i)
                        .isGreaterThan(held.fencingToken().getAsLong());
                taken.release();
            }
        } finally {
            pool.shutdownNow();
        }
        // One delete per handoff; the two clients' pings (one each per third of the session timeout) at
        // most once or twice in a run this short. Reading the queue again after the watch would make it 2.
        assertThat(requests)
                .as("requests the server received from release until the waiter held the lock, %d handoffs", handoffs)
                .isLessThanOrEqualTo(handoffs + 4L);
    }

    @Test
    @DisplayName("a waiter whose read of the holder's node finds it already released takes the lock on that"
            + " reply: no second read of the queue")
    void aWaiterThatFindsTheHolderGoneTakesTheLockOnThatReply() throws Exception {
        String name = "gone-on-read";
        String parent = ZooKeeperLockProvider.DEFAULT_BASE_PATH + "/" + name;
        LockProvider holder = client();
        ZooKeeperLockProvider waiter = (ZooKeeperLockProvider) proxiedSession(60_000, LockRuntime.defaults());
        long waiterSession =
                waiter.curator().getZookeeperClient().getZooKeeper().getSessionId();
        // The waiter's requests reach the server a second after it sends them: the holder releases in
        // that second, between the waiter's create (and listing of the queue, in the same round trip)
        // and its read of the holder's node, which then finds no node.
        proxy.delay(TcpProxy.Direction.CLIENT_TO_SERVER, timing.millis(1_000));
        int handoffs = 5;
        long requests = 0;
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            // Handoff 0 is not counted: it creates the parent container, and requests the waiter's
            // client sent on connecting may still be on their way.
            for (int i = 0; i <= handoffs; i++) {
                Lease held = holder.tryAcquire(name, lease(8_000)).orElseThrow();
                long before = requestsReceivedFrom(waiterSession);
                // A lease long enough that the waiter's own node stays surely queued (its last write
                // younger than a third of the lease) through the two delayed round trips.
                Future<Lease> next =
                        pool.submit(() -> waiter.acquire(name, lease(30_000).withWaitTime(timing.millis(30_000))));
                ZooKeeperTesting.await("the waiter queued", timing.millis(10_000), () -> queueSize(parent) >= 2);
                held.release();
                Lease taken = next.get(30, TimeUnit.SECONDS);
                if (i > 0) {
                    requests += requestsReceivedFrom(waiterSession) - before;
                }
                assertThat(taken.fencingToken().getAsLong())
                        .as("the waiter's fence after handoff %d", i)
                        .isGreaterThan(held.fencingToken().getAsLong());
                taken.release();
            }
        } finally {
            pool.shutdownNow();
        }
        // Per handoff: the create and the listing, then the read that finds the holder gone (or, if the
        // release came after that read, the read that set the watch); 2 to spare for a request of the
        // client's own (CI counted 2 more than a quiet machine). Listing the queue again before taking
        // the lock makes it 4 a handoff: 20 for five.
        assertThat(requests)
                .as("requests the server received from the waiter until it held the lock, %d handoffs", handoffs)
                .isLessThanOrEqualTo(3L * handoffs + 2);
    }

    /** How many requests the server has received on the connection of session {@code sessionId}. */
    private static long requestsReceivedFrom(long sessionId) {
        String sid = "sid=0x" + Long.toHexString(sessionId) + ",";
        for (String line : ZooKeeperServer.fourLetterWord(zk.port(), "cons").split("\n")) {
            if (line.contains(sid)) {
                Matcher received = Pattern.compile("recved=(\\d+)").matcher(line);
                if (received.find()) {
                    return Long.parseLong(received.group(1));
                }
            }
        }
        throw new IllegalStateException("cons shows no connection of session 0x" + Long.toHexString(sessionId));
    }

    @Test
    @DisplayName("a waiter whose predecessor gives up is not granted while the holder still holds")
    void aWaiterWhosePredecessorGivesUpWaitsForTheHolder() throws Exception {
        String name = "quitter-between";
        String parent = ZooKeeperLockProvider.DEFAULT_BASE_PATH + "/" + name;
        Lease held = client().tryAcquire(name, lease(8_000)).orElseThrow();
        LockProvider quitter = client();
        LockProvider patient = client();
        CompletableFuture<Optional<Lease>> gaveUp = CompletableFuture.supplyAsync(
                () -> quitter.tryAcquire(name, lease(8_000).withWaitTime(timing.millis(3_000))));
        ZooKeeperTesting.await("the quitter queued", timing.millis(10_000), () -> queueSize(parent) >= 2);
        AtomicLong grantedAt = new AtomicLong();
        CompletableFuture<Lease> behind = CompletableFuture.supplyAsync(() -> {
            Lease lease = patient.acquire(name, lease(8_000).withWaitTime(timing.millis(30_000)));
            grantedAt.set(System.nanoTime());
            return lease;
        });
        ZooKeeperTesting.await("the patient waiter queued", timing.millis(10_000), () -> queueSize(parent) >= 3);
        assertThat(gaveUp.get(30, TimeUnit.SECONDS)).as("the quitter's wait").isEmpty();
        // The quitter's node goes; its deletion wakes the patient waiter, which must find the holder first.
        ZooKeeperTesting.await("the quitter's node deleted", timing.millis(10_000), () -> queueSize(parent) == 2);
        // A chance for a wrong grant to happen while the holder still holds; the verdict below is the order
        // of the release and the grant, so a busy machine can delay the grant but never fail the test.
        Thread.sleep(timing.millis(300).toMillis());
        assertThat(held.isValid()).isTrue();
        long releasedAt = System.nanoTime();
        held.release();
        Lease next = behind.get(30, TimeUnit.SECONDS);
        assertThat(grantedAt.get() - releasedAt)
                .as("the waiter behind the quitter was granted after the holder released, not before")
                .isPositive();
        assertThat(next.fencingToken().getAsLong())
                .isGreaterThan(held.fencingToken().getAsLong());
        next.release();
    }

    private static int queueSize(String parent) {
        try {
            return admin.getChildren().forPath(parent).size();
        } catch (KeeperException.NoNodeException e) {
            return 0;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** One of the server's {@code mntr} figures. */
    private static long mntr(String key) {
        for (String line : ZooKeeperServer.fourLetterWord(zk.port(), "mntr").split("\n")) {
            String[] kv = line.trim().split("\\s+");
            if (kv.length == 2 && kv[0].equals(key)) {
                return Long.parseLong(kv[1]);
            }
        }
        throw new IllegalStateException("mntr shows no " + key + " on port " + zk.port());
    }

    @Test
    @DisplayName("a tryAcquire that loses has removed its queue node by the time it returns")
    void aLosingTryAcquireLeavesNoNodeBehindWhenItReturns() throws Exception {
        String parent = ZooKeeperLockProvider.DEFAULT_BASE_PATH + "/try-lose-clean";
        Lease held = client().tryAcquire("try-lose-clean", lease(5_000)).orElseThrow();
        LockProvider loser = proxiedClient();
        // Every request of the losing client reaches the server late: a delete that the attempt only
        // sent (and did not wait for) is still on its way when the attempt returns.
        proxy.delay(TcpProxy.Direction.CLIENT_TO_SERVER, timing.millis(300));
        for (int i = 0; i < 3; i++) {
            assertThat(loser.tryAcquire("try-lose-clean", lease(5_000))).isEmpty();
            assertThat(admin.getChildren().forPath(parent))
                    .as("queue right after losing attempt %d", i)
                    .singleElement(InstanceOfAssertFactories.STRING)
                    .startsWith(held.ownerToken() + "-");
        }
        proxy.heal();
        held.release();
    }

    @Test
    @DisplayName("after locks are released no znode per name is left: parents are containers the server reaps")
    void noZnodePerNameIsLeft() throws Exception {
        LockProvider locks = client();
        LockProvider other = client();
        for (int i = 0; i < 20; i++) {
            String name = "reap-" + i;
            Lease lease = locks.tryAcquire(name, lease(5_000)).orElseThrow();
            // A tryAcquire that loses leaves nothing queued, a waiter that times out neither.
            assertThat(other.tryAcquire(name, lease(5_000))).isEmpty();
            if (i % 5 == 0) {
                assertThat(other.tryAcquire(name, lease(5_000).withWaitTime(Duration.ofMillis(50))))
                        .isEmpty();
            }
            lease.release();
        }
        ZooKeeperTesting.await("every lock parent reaped", timing.millis(15_000), () -> {
            try {
                return admin.getChildren().forPath(ZooKeeperLockProvider.DEFAULT_BASE_PATH).stream()
                        .noneMatch(p -> p.startsWith("reap-"));
            } catch (Exception e) {
                return false;
            }
        });
    }

    @Test
    @DisplayName(
            "when the server expires the session, lost() says SESSION_EXPIRED, extend and release report it, and the next holder is untouched")
    void sessionExpiryIsNeverSilent() throws Exception {
        LockProvider holder = client();
        Lease lease = holder.tryAcquire("expire", lease(7_000).withAutoRenew()).orElseThrow();
        CompletableFuture<LossReason> lost = lease.lost().toCompletableFuture();
        ZooKeeperSessions.expire(holder, zk.connectString());
        assertThat(lost.get(timing.millis(10_000).toMillis(), TimeUnit.MILLISECONDS))
                .isEqualTo(LossReason.SESSION_EXPIRED);
        assertThat(lease.isValid()).isFalse();
        Lease next = client().acquire("expire", lease(7_000).withWaitTime(timing.millis(5_000)));
        assertThat(next.fencingToken().getAsLong())
                .isGreaterThan(lease.fencingToken().getAsLong());
        // The old holder's client is on a new session now; its release must report the loss and leave
        // the new holder's node alone (Curator's "released on a new session" trap).
        assertThat(lease.extend(timing.millis(5_000))).isFalse();
        assertThat(lease.release()).isFalse();
        assertThat(holder.tryAcquire("expire", lease(5_000))).isEmpty();
        assertThat(next.isValid()).isTrue();
        assertThat(next.release()).isTrue();
        // The same client can lock again on its new session.
        holder.tryAcquire("expire", lease(5_000)).orElseThrow().release();
    }

    @Test
    @DisplayName(
            "raw Curator InterProcessMutex still says it holds the lock after its session expired (the trap we test for)")
    void curatorMutexTrapAfterSessionLoss() throws Exception {
        try (CuratorFramework raw =
                CuratorFrameworkFactory.newClient(zk.connectString(), 8_000, 2_000, new RetryNTimes(3, 100))) {
            raw.start();
            raw.blockUntilConnected();
            InterProcessMutex mutex = new InterProcessMutex(raw, "/curator-trap");
            assertThat(mutex.acquire(5, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<ConnectionState> lostState = new CompletableFuture<>();
            raw.getConnectionStateListenable().addListener((c, s) -> {
                if (s == ConnectionState.LOST) {
                    lostState.complete(s);
                }
            });
            long session = raw.getZookeeperClient().getZooKeeper().getSessionId();
            LockProvider lockstep = ZooKeeperLockProvider.builder(raw).build();
            toClose.add(lockstep);
            ZooKeeperSessions.expire(lockstep, zk.connectString());
            lostState.get(10, TimeUnit.SECONDS);
            assertThat(session).isNotZero();
            // Curator's recipe keeps its in-process ownership: a caller that trusts it would go on
            // writing while another process takes the lock. Lockstep completes lost() instead.
            assertThat(mutex.isAcquiredInThisProcess()).isTrue();
            InterProcessMutex other = new InterProcessMutex(admin, "/curator-trap");
            assertThat(other.acquire(5, TimeUnit.SECONDS)).isTrue();
            other.release();
        }
    }

    @Test
    @DisplayName("a lease held across a reconnect within the same session stays valid with the same fence")
    void reconnectWithinTheSessionKeepsTheLease() throws Exception {
        LockProvider holder = proxiedClient();
        CuratorFramework curator = ((ZooKeeperLockProvider) holder).curator();
        List<ConnectionState> states = Collections.synchronizedList(new ArrayList<>());
        curator.getConnectionStateListenable().addListener((c, s) -> states.add(s));
        long session = curator.getZookeeperClient().getZooKeeper().getSessionId();
        Lease lease =
                holder.tryAcquire("reconnect", lease(7_000).withAutoRenew()).orElseThrow();
        long fence = lease.fencingToken().getAsLong();
        proxy.reset(); // both sides get a RST: the client reconnects at once, on the same session
        ZooKeeperTesting.await(
                "suspended and reconnected", timing.millis(10_000), () -> states.contains(ConnectionState.RECONNECTED));
        assertThat(states).contains(ConnectionState.SUSPENDED);
        assertThat(curator.getZookeeperClient().getZooKeeper().getSessionId()).isEqualTo(session);
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.extend(timing.millis(7_000))).isTrue();
        assertThat(lease.fencingToken()).hasValue(fence);
        assertThat(lease.lost().toCompletableFuture()).isNotDone();
        assertThat(client().tryAcquire("reconnect", lease(5_000))).isEmpty();
        assertThat(lease.release()).isTrue();
    }

    /**
     * A provider through the proxy with a short session (its client gives a connection up after two
     * thirds of it without a reply) and Curator's retries off, as in providers built from a URI.
     */
    private LockProvider proxiedShortSession(LockRuntime runtime) throws Exception {
        return proxiedSession(4_000, runtime);
    }

    private LockProvider proxiedSession(long sessionMillis, LockRuntime runtime) throws Exception {
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString(proxy.host() + ":" + proxy.port())
                .sessionTimeoutMs((int) timing.millis(sessionMillis).toMillis())
                .connectionTimeoutMs((int) timing.millis(2_000).toMillis())
                .retryPolicy(new RetryNTimes(0, 0))
                .build();
        curator.start();
        assertThat(curator.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
        LockProvider provider = ZooKeeperLockProvider.builder(curator)
                .closeClient(true)
                .runtime(runtime)
                .build();
        toClose.add(provider);
        return provider;
    }

    /**
     * The lock's queue, empty when its parent node is gone: the recipe's parent is a container node, which
     * the server deletes once it is empty, at any moment (a check for it first would race that).
     */
    private static List<String> queue(String name) throws Exception {
        String parent = ZooKeeperLockProvider.DEFAULT_BASE_PATH + "/" + LockPaths.encode(name);
        try {
            return admin.getChildren().forPath(parent);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    @Test
    @DisplayName(
            "a create whose reply was lost is found by its owner token when the acquire is retried: one node, held, fenced by its czxid")
    void lostCreateReplyIsFoundOnRetry() throws Exception {
        // A retry window longer than the client's reply timeout, so the acquire retries after the lost reply.
        // The node found on the retry counts its lease from the first create, and the client gives the
        // connection up only after 2/3 of the session and reconnects up to 1 s later: with a lease of the
        // whole session about a fifth of it is left, where a 3 s lease on a 4 s session often had none
        // (and is then given back, not handed out).
        LockProvider holder = proxiedSession(
                8_000, LockRuntime.builder().retryWindow(timing.millis(20_000)).build());
        String name = "lost-create-retried";
        proxy.loseReplies();
        Lease lease;
        try {
            lease = holder.tryAcquire(name, lease(8_000)).orElseThrow();
        } finally {
            proxy.resetConnectionsLosingReplies();
        }
        List<String> nodes = queue(name);
        assertThat(nodes).as("the queue after the retried acquire").hasSize(1);
        assertThat(nodes.get(0)).startsWith(lease.ownerToken() + "-");
        Stat stat =
                admin.checkExists().forPath(ZooKeeperLockProvider.DEFAULT_BASE_PATH + "/" + name + "/" + nodes.get(0));
        assertThat(lease.fencingToken()).hasValue(stat.getCzxid());
        assertThat(client().tryAcquire(name, lease(5_000))).isEmpty();
        assertThat(lease.release()).isTrue();
        assertThat(queue(name)).isEmpty();
    }

    @Test
    @DisplayName(
            "an acquire whose create reply was lost and that gives up removes its node at once, waiting or not (nothing else would)")
    void lostCreateReplyOfAFailedAcquireLeavesNoNode() throws Exception {
        // The default retry window ends before the client notices the lost reply: the acquire fails closed.
        LockProvider holder = proxiedShortSession(LockRuntime.defaults());
        for (boolean waiting : List.of(false, true)) {
            String name = "lost-create-abandoned-" + (waiting ? "waiting" : "try");
            LeaseOptions options = waiting ? lease(3_000).withWaitTime(timing.millis(1_000)) : lease(3_000);
            proxy.loseReplies();
            try {
                assertThatThrownBy(() -> holder.acquire(name, options))
                        .as("acquire %s whose create reply is lost", waiting ? "with a wait" : "without waiting")
                        .isInstanceOf(BackendUnavailableException.class);
            } finally {
                proxy.resetConnectionsLosingReplies();
            }
            // No waiter is queued behind it and its session lives on: only the abandon removes the node.
            ZooKeeperTesting.await("the lost create's node removed (" + name + ")", timing.millis(3_000), () -> {
                try {
                    return queue(name).isEmpty();
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
        }
    }

    @Test
    @DisplayName(
            "as in the kit: a tryAcquire through a URI whose replies are lost fails closed, and another client finds the lock free once both clients have reconnected")
    void lostReplyOfAUriProviderLeavesTheLockFree() throws Exception {
        LockProvider holder = proxiedClient();
        LockProvider other = proxiedClient();
        String name = "lost-reply-uri";
        holder.tryAcquire(name, lease(5_000)).orElseThrow().release();
        proxy.loseReplies();
        Optional<Lease> got;
        try {
            got = holder.tryAcquire(name, lease(8_000));
        } catch (BackendUnavailableException e) {
            got = Optional.empty();
        } finally {
            proxy.resetConnectionsLosingReplies();
        }
        got.ifPresent(Lease::release);
        long failedAt = System.nanoTime();
        List<String> seen = new ArrayList<>();
        ZooKeeperTesting.await("the lock free for another client; queues seen: " + seen, timing.millis(3_000), () -> {
            try {
                seen.add((System.nanoTime() - failedAt) / 1_000_000 + " ms: " + queue(name));
                Optional<Lease> probe = other.tryAcquire(name, lease(5_000));
                probe.ifPresent(Lease::release);
                return probe.isPresent();
            } catch (BackendUnavailableException e) {
                seen.add("other: " + e.getMessage());
                return false;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
    }
}
