package io.lockstep.zookeeper;

import io.lockstep.LockProvider;
import io.lockstep.tck.Timing;
import io.lockstep.tck.servers.LocalServer;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;

/** Settings the module's tests share. */
final class ZooKeeperTesting {

    private ZooKeeperTesting() {}

    /**
     * The session timeout of the tests' clients: long enough for a loaded machine, short enough that a
     * partition is noticed (after two thirds of it) within the kit's waits. Also the kit's long lease,
     * since a lease may not outlive its session.
     */
    static Duration sessionTimeout(Timing timing) {
        return timing.millis(8_000);
    }

    /** The query string for the tests' URIs. */
    static String settings(Timing timing) {
        return "?sessionTimeout=" + sessionTimeout(timing).toMillis() + "ms&connectionTimeout="
                + timing.millis(2_000).toMillis() + "ms";
    }

    /** Polls {@code condition} every 10 ms until it holds; fails naming {@code what} after {@code timeout}. */
    static Duration await(String what, Duration timeout, BooleanSupplier condition) {
        long start = System.nanoTime();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - start > timeout.toNanos()) {
                throw new AssertionError("not within " + timeout + ": " + what);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting: " + what, e);
            }
        }
        return Duration.ofNanos(System.nanoTime() - start);
    }

    /** A provider wired to a started Curator client pointed at a port nothing listens on. */
    static LockProvider unreachable() {
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString("127.0.0.1:" + LocalServer.freePort())
                .sessionTimeoutMs(4_000)
                .connectionTimeoutMs(500)
                .retryPolicy(new RetryNTimes(0, 0))
                .build();
        curator.start();
        return ZooKeeperLockProvider.builder(curator)
                .closeClient(true)
                .describedAs("127.0.0.1 (nothing listening)")
                .build();
    }
}
