package io.lockstep.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.Locks;
import io.lockstep.LossReason;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.Extension;
import io.lockstep.spi.Grant;
import io.lockstep.tck.CountingMetrics;
import io.lockstep.tck.Timing;
import io.lockstep.tck.servers.ZooKeeperServer;
import io.lockstep.zookeeper.internal.LockPaths;
import io.lockstep.zookeeper.internal.ZooKeeperBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, item 2: lock-zookeeper renews many grants with one {@code multi}, counted at a real server
 * from its own {@code zk_packets_received} ({@code mntr}); a batch still reports exactly which grant
 * was lost, and adopts the version of a node whose renewal was applied although its reply was lost.
 */
@DisplayName("lock-zookeeper: batched renewal")
class ZooKeeperRenewalBatchingTest {

    private static final Timing timing = Timing.fromSystemProperty();
    private static ZooKeeperServer zk;
    private static CuratorFramework admin;

    private final List<AutoCloseable> toClose = Collections.synchronizedList(new ArrayList<>());

    @BeforeAll
    static void start() {
        zk = ZooKeeperServer.start();
        admin = CuratorFrameworkFactory.newClient(zk.connectString(), 10_000, 2_000, new RetryNTimes(3, 100));
        admin.start();
    }

    @AfterAll
    static void stop() {
        if (admin != null) {
            admin.close();
        }
        if (zk != null) {
            zk.close();
        }
    }

    @AfterEach
    void closeAll() {
        List<AutoCloseable> all = new ArrayList<>(toClose);
        Collections.reverse(all);
        for (AutoCloseable c : all) {
            try {
                c.close();
            } catch (Exception ignored) {
                // keep closing the rest
            }
        }
    }

    /** A provider whose renewals due within 300 ms (a tenth of the tests' 3 s lease) go as one batch. */
    private LockProvider provider(CountingMetrics counts) {
        LockProvider provider = Locks.open(LockConfig.of(zk.uri() + ZooKeeperTesting.settings(timing))
                .withRuntime(LockRuntime.builder()
                        .metrics(counts)
                        .renewalBatchWindow(timing.millis(300))
                        .build()));
        toClose.add(provider);
        return provider;
    }

    private static LeaseOptions autoRenewed() {
        return LeaseOptions.of(timing.millis(3_000)).withAutoRenew();
    }

    @Test
    @DisplayName("200 auto-renewed leases are renewed with at least 10 renewals per request the server receives")
    void manyLeasesRenewInFewRequests() throws Exception {
        int leases = 200;
        CountingMetrics counts = new CountingMetrics();
        LockProvider provider = provider(counts);
        List<Lease> held = new ArrayList<>();
        for (int i = 0; i < leases; i++) {
            held.add(provider.tryAcquire("renewed-" + i, autoRenewed()).orElseThrow());
        }

        long packetsBefore = packetsReceived();
        long renewedBefore = counts.renewals();
        // Every lease renews at a third of its lease time: wait for two rounds of all of them.
        ZooKeeperTesting.await(
                "two renewals per lease",
                timing.millis(20_000),
                () -> counts.renewals() - renewedBefore >= 2L * leases);
        long renewals = counts.renewals() - renewedBefore;
        long packets = packetsReceived() - packetsBefore;

        System.out.printf("%d leases: %d renewals in %d requests received by ZooKeeper%n", leases, renewals, packets);
        assertThat(packets)
                .as("requests at ZooKeeper for %d renewals", renewals)
                .isPositive();
        assertThat(packets * 10).as("requests × 10 (%d renewals)", renewals).isLessThanOrEqualTo(renewals);
        assertThat(counts.losses()).as("leases lost").isZero();
        assertThat(counts.renewalFailures()).as("renewals failed").isZero();
        // The renewals are real writes: every node's version at the server rose at least twice.
        for (int i = 0; i < leases; i++) {
            assertThat(nodeOf("renewed-" + i).version())
                    .as("version of lease %d's node", i)
                    .isGreaterThanOrEqualTo(2);
        }
        assertThat(held).allMatch(Lease::isValid, "valid");
        for (Lease lease : held) {
            assertThat(lease.release()).isTrue();
        }
    }

    @Test
    @DisplayName("a batch loses exactly the lease whose node someone else deleted, with NOT_HELD; the others stay held")
    void aBatchLosesOnlyTheLeaseWhoseNodeWasDeleted() throws Exception {
        CountingMetrics counts = new CountingMetrics();
        LockProvider provider = provider(counts);
        List<Lease> held = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            held.add(provider.tryAcquire("batch-" + i, autoRenewed()).orElseThrow());
        }
        // Someone deletes lease 17's node behind the holder's back (an operator, a wrong cleanup).
        admin.delete().forPath(nodeOf("batch-17").path());

        Lease taken = held.get(17);
        assertThat(taken.lost().toCompletableFuture().get(timing.millis(10_000).toMillis(), TimeUnit.MILLISECONDS))
                .isEqualTo(LossReason.NOT_HELD);
        long renewedAfterLoss = counts.renewals();
        // Two more renewal rounds (a round is a third of the lease) for the others.
        long deadline = System.nanoTime() + timing.millis(2_500).toNanos();
        while (System.nanoTime() - deadline < 0) {
            assertThat(held.stream().filter(l -> l != taken)).allMatch(Lease::isValid, "valid");
            Thread.sleep(50);
        }
        assertThat(counts.renewals() - renewedAfterLoss)
                .as("renewals of the 49 others after the loss")
                .isGreaterThanOrEqualTo(49);
        assertThat(counts.losses()).as("leases lost").isEqualTo(1);
        assertThat(taken.isValid()).isFalse();
        for (Lease lease : held) {
            if (lease != taken) {
                assertThat(lease.release()).as("release of a lease still held").isTrue();
            }
        }
    }

    @Test
    @DisplayName(
            "nodes whose version changed with the same czxid (a renewal applied, its reply lost) are adopted, not lost")
    void aBatchAdoptsVersionsOfRenewalsWhoseReplyWasLost() throws Exception {
        CountingMetrics counts = new CountingMetrics();
        LockProvider provider = provider(counts);
        List<Lease> held = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            held.add(provider.tryAcquire("adopt-" + i, autoRenewed()).orElseThrow());
        }
        // Five nodes get one more write than their holder knows of, as when a renewal's multi was applied
        // but its reply lost: the next multi fails on the first of them and names only that one.
        List<Integer> bumped = List.of(3, 4, 11, 20, 29);
        List<Integer> bumpedTo = new ArrayList<>();
        for (int i : bumped) {
            Node node = nodeOf("adopt-" + i);
            byte[] data = admin.getData().forPath(node.path());
            bumpedTo.add(admin.setData()
                    .withVersion(node.version())
                    .forPath(node.path(), data)
                    .getVersion());
        }
        // Each bumped node is written again by its holder: its version moves past the one set from outside.
        ZooKeeperTesting.await("the holders wrote the bumped nodes again", timing.millis(10_000), () -> {
            for (int j = 0; j < bumped.size(); j++) {
                if (nodeOf("adopt-" + bumped.get(j)).version() <= bumpedTo.get(j)) {
                    return false;
                }
            }
            return true;
        });
        assertThat(counts.losses()).as("leases lost").isZero();
        assertThat(held).allMatch(Lease::isValid, "valid");
        for (Lease lease : held) {
            assertThat(lease.release()).isTrue();
        }
    }

    @Test
    @DisplayName(
            "extendAll answers per grant in order: renewed, lost (node deleted), renewed, released, and a repeated grant")
    void extendAllAnswersPerGrantInOrder() throws Exception {
        CuratorFramework curator = CuratorFrameworkFactory.newClient(
                zk.connectString(),
                (int) ZooKeeperTesting.sessionTimeout(timing).toMillis(),
                2_000,
                new RetryNTimes(0, 0));
        curator.start();
        toClose.add(curator);
        assertThat(curator.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
        LockRuntime runtime = LockRuntime.defaults();
        ZooKeeperBackend backend = new ZooKeeperBackend(
                curator, false, "/lockstep", ZooDefs.Ids.OPEN_ACL_UNSAFE, runtime, zk.connectString());
        toClose.add(backend);
        // The longest lease the session allows: every grant must still be live when the batch is sent, after
        // 104 acquisitions one by one. With 3 s a loaded run (R33 of issue 26) saw the first grant's lease
        // end before the batch, and its answer was rightly empty.
        Duration lease = ZooKeeperTesting.sessionTimeout(timing);
        List<Grant<ZooKeeperBackend.Handle>> grants = new ArrayList<>();
        for (int i = 0; i < 104; i++) {
            Attempt<ZooKeeperBackend.Handle> attempt = backend.tryLock("direct-" + i, "token-" + i, lease);
            assertThat(attempt.isGranted()).as("grant %d", i).isTrue();
            grants.add(attempt.grant());
        }
        ZooKeeperBackend.Handle released = grants.get(3).handle();
        assertThat(backend.release(released)).isTrue();
        admin.delete().forPath(grants.get(1).handle().path());
        List<Extension<ZooKeeperBackend.Handle>> batch = new ArrayList<>();
        for (Grant<ZooKeeperBackend.Handle> grant : grants) {
            batch.add(new Extension<>(grant.handle(), lease));
        }
        batch.add(new Extension<>(grants.get(0).handle(), lease));

        long packetsBefore = packetsReceived();
        List<Optional<Duration>> results = backend.extendAll(batch);
        long packets = packetsReceived() - packetsBefore;

        assertThat(results).hasSize(batch.size());
        assertThat(results.get(0)).hasValue(lease);
        assertThat(results.get(1)).isEmpty();
        assertThat(results.get(2)).hasValue(lease);
        assertThat(results.get(3)).isEmpty();
        assertThat(results.subList(4, 104)).allMatch(r -> r.equals(Optional.of(lease)), "renewed");
        assertThat(results.get(104)).as("the repeated grant").hasValue(lease);
        assertThat(grants.get(1).backendLoss().toCompletableFuture().get(5, TimeUnit.SECONDS))
                .isEqualTo(LossReason.NOT_HELD);
        // A failed write multi, one read multi, the second write multi; perhaps the lost node's background
        // delete and pings of the two clients.
        System.out.printf(
                "extendAll of %d grants, one gone: %d requests received by ZooKeeper%n", batch.size(), packets);
        assertThat(packets)
                .as("requests for %d renewals, one node gone", batch.size())
                .isBetween(3L, 6L);
        for (int i = 0; i < grants.size(); i++) {
            if (i == 1 || i == 3) {
                continue;
            }
            Stat stat = admin.checkExists().forPath(grants.get(i).handle().path());
            assertThat(stat).as("node %d", i).isNotNull();
            assertThat(stat.getVersion())
                    .as("version of node %d, written once", i)
                    .isEqualTo(1);
        }
        assertThat(admin.checkExists().forPath(released.path()))
                .as("the released node")
                .isNull();
        for (int i = 0; i < grants.size(); i++) {
            if (i != 1 && i != 3) {
                assertThat(backend.release(grants.get(i).handle()))
                        .as("release %d", i)
                        .isTrue();
            }
        }
    }

    /** A lock's (only) node at the server: its path and version. */
    private record Node(String path, int version) {}

    private static Node nodeOf(String name) {
        try {
            String parent = ZooKeeperLockProvider.DEFAULT_BASE_PATH + "/" + LockPaths.encode(name);
            List<String> children = admin.getChildren().forPath(parent);
            assertThat(children).as("queue of %s", name).hasSize(1);
            String path = parent + "/" + children.get(0);
            Stat stat = admin.checkExists().forPath(path);
            assertThat(stat).as(path).isNotNull();
            return new Node(path, stat.getVersion());
        } catch (Exception e) {
            throw new AssertionError("reading the node of " + name, e);
        }
    }

    /** The requests the server has received, from its own {@code mntr}. */
    private static long packetsReceived() {
        for (String line : ZooKeeperServer.fourLetterWord(zk.port(), "mntr").split("\n")) {
            String[] kv = line.trim().split("\\s+");
            if (kv.length == 2 && kv[0].equals("zk_packets_received")) {
                return Long.parseLong(kv[1]);
            }
        }
        throw new IllegalStateException("mntr shows no zk_packets_received on port " + zk.port());
    }
}
