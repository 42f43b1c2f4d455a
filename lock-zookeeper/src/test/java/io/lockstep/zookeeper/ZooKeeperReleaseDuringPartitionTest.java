package io.lockstep.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.servers.ZooKeeperServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code release()} while the holder is partitioned (finding F9 of the 2026-11-26 review: it blocked
 * its caller for 27 s with a 10 s session). It must return or fail within the connection timeout, plus
 * slack for a busy machine, and the lock must become free for others: by the background delete once the
 * connection is back, or by the session's end.
 */
@DisplayName(
        "lock-zookeeper: release() during a partition returns within the connection timeout and frees the lock later")
class ZooKeeperReleaseDuringPartitionTest {

    private static final Duration SESSION = Duration.ofSeconds(10);
    private static final Duration CONNECTION = Duration.ofSeconds(2);
    /** The documented bound (connectionTimeout) with generous slack for a loaded machine. */
    private static final Duration RELEASE_BOUND = CONNECTION.plusSeconds(5);

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperReleaseDuringPartitionTest.class);

    private static ZooKeeperServer zk;

    private final List<AutoCloseable> toClose = Collections.synchronizedList(new ArrayList<>());

    @BeforeAll
    static void start() {
        zk = ZooKeeperServer.start();
    }

    @AfterAll
    static void stop() {
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
                // teardown
            }
        }
    }

    private <T extends AutoCloseable> T track(T closeable) {
        toClose.add(closeable);
        return closeable;
    }

    private static String settings() {
        return "?sessionTimeout=" + SESSION.toMillis() + "ms&connectionTimeout=" + CONNECTION.toMillis() + "ms";
    }

    @Test
    @DisplayName(
            "released just after the partition (the client still thinks it is connected): bounded; the session's end frees it")
    void releaseRightAfterThePartition() {
        TcpProxy proxy = track(TcpProxy.start(zk.host(), zk.port()));
        LockProvider holder = track(Locks.open("zookeeper://" + proxy.host() + ":" + proxy.port() + settings()));
        Lease lease = holder.tryAcquire("release-partitioned", LeaseOptions.of(Duration.ofSeconds(8)))
                .orElseThrow();
        proxy.stall();

        timeRelease(lease);

        assertFreedForAnotherClient("release-partitioned");
        proxy.heal();
    }

    @Test
    @DisplayName("released while suspended: fails at once, and the background delete frees it after the heal")
    void releaseWhileSuspended() {
        TcpProxy proxy = track(TcpProxy.start(zk.host(), zk.port()));
        ZooKeeperLockProvider holder = (ZooKeeperLockProvider)
                track(Locks.open("zookeeper://" + proxy.host() + ":" + proxy.port() + settings()));
        Lease lease = holder.tryAcquire("release-suspended", LeaseOptions.of(Duration.ofSeconds(8)))
                .orElseThrow();
        proxy.stall();
        ZooKeeperTesting.await(
                "the holder's client notices the partition",
                SESSION.multipliedBy(3),
                () -> !holder.curator().getZookeeperClient().isConnected());

        try {
            timeRelease(lease);
        } finally {
            proxy.heal();
        }
        assertFreedForAnotherClient("release-suspended");
    }

    /** Releases {@code lease}, checks a failure says where the node went, returns how long it took. */
    private static Duration timeRelease(Lease lease) {
        long start = System.nanoTime();
        String failure = null;
        try {
            lease.release();
        } catch (BackendUnavailableException e) {
            failure = e.getMessage();
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        log.info("release() of {} during the partition took {} ms: {}", lease.name(), took.toMillis(), failure);
        assertThat(took).as("release() returned or failed within").isLessThanOrEqualTo(RELEASE_BOUND);
        if (failure != null) {
            assertThat(failure).contains("deleted in the background");
        }
        return took;
    }

    /** Another client (not partitioned) is granted the lock, waiting up to a generous bound. */
    private void assertFreedForAnotherClient(String name) {
        LockProvider other = track(Locks.open(zk.uri() + settings()));
        Lease next = other.acquire(name, LeaseOptions.of(Duration.ofSeconds(5)).withWaitTime(SESSION.multipliedBy(3)));
        assertThat(next.isValid()).isTrue();
        next.release();
    }
}
